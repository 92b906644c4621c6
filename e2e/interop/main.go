package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/samsa-io/samsa/testkit"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	out := flag.String("out", "docs/compatibility.md", "where to write the matrix (empty: do not write)")
	count := flag.Int("count", 10000, "records per codec topic")
	only := flag.String("clients", "", "comma list of clients to run (default all), e.g. franz-go,kafkajs")
	broker := flag.String("broker", "", "use this running broker instead of starting `samsa serve`")
	flag.Parse()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	failed, err := run(ctx, *out, *count, *only, *broker)
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// repoRoot finds the folder holding go.mod, from the working directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = up
	}
}

type client struct {
	name string
	run  func(ctx context.Context, root, bootstrap, prefix string, count int) *Report
}

func clients() []client {
	var cs []client
	for _, g := range []func(string) goClient{
		func(b string) goClient { return franz{b} },
		func(b string) goClient { return saramaClient{b} },
		func(b string) goClient { return kafkaGo{b} },
	} {
		name := g("").name()
		cs = append(cs, client{name, func(ctx context.Context, _, b, p string, n int) *Report {
			return runScenario(ctx, g(b), p, n)
		}})
	}
	for _, e := range externals() {
		cs = append(cs, client{e.client, e.run})
	}
	cs = append(cs, client{"kcat", runKcat}, client{"kafka CLI tools", runKafkaTools})
	return cs
}

var nonWord = regexp.MustCompile(`[^a-z0-9]+`)

func run(ctx context.Context, out string, count int, only, bootstrap string) (bool, error) {
	root, err := repoRoot()
	if err != nil {
		return false, err
	}
	began := time.Now()
	if bootstrap == "" {
		b, err := testkit.LaunchBroker(testkit.BrokerConfig{})
		if err != nil {
			return false, err
		}
		defer func() {
			if err := b.Stop(); err != nil {
				slog.Error("stopping the broker", "err", err, "output", b.Output())
			}
			b.Close()
		}()
		bootstrap = b.Addr()
	}
	slog.Info("broker", "addr", bootstrap)
	want := map[string]bool{}
	for _, c := range strings.Split(only, ",") {
		if c = strings.TrimSpace(c); c != "" {
			want[c] = true
		}
	}
	var reports []*Report
	failed := false
	for _, c := range clients() {
		if len(want) > 0 && !want[c.name] {
			continue
		}
		prefix := "interop-" + strings.Trim(nonWord.ReplaceAllString(strings.ToLower(c.name), "-"), "-") +
			fmt.Sprintf("-%d", time.Now().UnixNano()%1e6)
		t0 := time.Now()
		var rep *Report
		if err := createTopics(ctx, bootstrap, prefix); err != nil {
			rep = newReport(c.name)
			rep.failAll("the runner could not create the topics (franz-go): " + err.Error())
		} else {
			rep = c.run(ctx, root, bootstrap, prefix, count)
			checkStoredCodecs(ctx, bootstrap, prefix, rep)
		}
		rep.Took = time.Since(t0)
		reports = append(reports, rep)
		printReport(rep)
		if rep.failed() {
			failed = true
		}
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
	}
	total := time.Since(began)
	if out != "" {
		var buf bytes.Buffer
		writeMarkdown(&buf, reports, time.Now(), "`samsa serve` (one broker, default settings)", count, total)
		path := out
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return failed, err
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return failed, err
		}
		slog.Info("wrote", "path", path)
	}
	fmt.Printf("interop: %d clients in %s\n", len(reports), total.Round(time.Second))
	// The closing line CI reads: every client x feature cell, where a
	// client's own limit (the same against Apache Kafka) counts as skipped.
	var passed, failedCells, limited int
	for _, r := range reports {
		for _, res := range r.Results {
			switch res.Status {
			case Pass:
				passed++
			case Fail:
				failedCells++
			case Limit:
				limited++
			}
		}
	}
	fmt.Printf("interop: %d passed, %d failed, %d skipped\n", passed, failedCells, limited)
	return failed, nil
}

// createTopics makes prefix-<codec> and prefix-idem with 3 partitions.
func createTopics(ctx context.Context, bootstrap, prefix string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return err
	}
	defer cl.Close()
	var names []string
	for _, c := range codecs {
		names = append(names, prefix+"-"+c)
	}
	names = append(names, prefix+"-idem")
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := kadm.NewClient(cl).CreateTopics(cctx, partitions, 1, nil, names...)
	if err != nil {
		return err
	}
	return res.Error()
}

func printReport(r *Report) {
	var cells []string
	for _, f := range features {
		cells = append(cells, f+"="+cell(r.Results[f].Status))
	}
	fmt.Printf("%s %s (%s): %s\n", r.Client, r.Version, r.Took.Round(100*time.Millisecond), strings.Join(cells, " "))
	for _, f := range features {
		if res := r.Results[f]; res.Status == Fail {
			fmt.Printf("  FAIL %s: %s\n", f, res.Detail)
		}
	}
	if r.failed() && r.Log != "" {
		fmt.Printf("  checker output:\n    %s\n", strings.ReplaceAll(tailLines(r.Log, 30), " / ", "\n    "))
	}
}
