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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/interbroker"
	"github.com/samsa-io/samsa/testkit"
)

func main() {
	out := flag.String("out", "docs/compatibility.md", "where to write the matrix (empty: do not write)")
	count := flag.Int("count", 10000, "records per codec topic")
	only := flag.String("clients", "", "comma list of clients to run (default all), e.g. franz-go,kafkajs")
	broker := flag.String("broker", "", "use this running broker (or comma list of a cluster's) instead of starting `samsa serve`")
	cluster := flag.String("cluster", "0", "brokers to run: 0 is one `samsa serve` as in single-node mode, N >= 1 a cluster of N on a ZooKeeper; "+
		"a comma list (0,3) runs each in turn and writes one matrix per run")
	flag.Parse()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	sizes, err := parseSizes(*cluster)
	if err == nil && *broker != "" && (len(sizes) != 1 || sizes[0] != 0) {
		err = fmt.Errorf("-broker and -cluster %s: the runner starts no broker with -broker", *cluster)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	failed, err := run(ctx, *out, *count, *only, *broker, sizes)
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// parseSizes reads -cluster: broker counts, 0 for the single broker.
func parseSizes(s string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("-cluster %q: want broker counts >= 0, comma-separated", s)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
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
	sasl saslStep // the sasl_ssl check (secure.go); nil: none yet
}

func clients() []client {
	var cs []client
	for _, g := range []func(string) goClient{
		func(b string) goClient { return franz{b} },
		func(b string) goClient { return saramaClient{b} },
		func(b string) goClient { return kafkaGo{b} },
	} {
		name := g("").name()
		cs = append(cs, client{name: name, run: func(ctx context.Context, _, b, p string, n int) *Report {
			return runScenario(ctx, g(b), p, n)
		}, sasl: goSaslSteps[name]})
	}
	for _, e := range externals() {
		cs = append(cs, client{name: e.client, run: e.run, sasl: e.saslStep()})
	}
	cs = append(cs, client{name: "kcat", run: runKcat, sasl: kcatSasl},
		client{name: "kafka CLI tools", run: runKafkaTools, sasl: kafkaToolsSasl})
	return cs
}

var nonWord = regexp.MustCompile(`[^a-z0-9]+`)

// matrixRun is one run of every client against one broker set-up: one
// table of the matrix.
type matrixRun struct {
	title   string // the table's heading
	against string // what the clients ran against, for the text
	brokers int    // 0: the single broker
	count   int
	reports []*Report
	took    time.Duration
}

// target is a started broker set-up: the bootstrap list the checkers get,
// the replication factor of the runner's topics, and how to stop it.
type target struct {
	bootstrap string
	rf        int16
	stop      func()
	secure    *secureListener // the SASL_SSL listener
}

// startTarget starts what run n of the matrix runs against: one `samsa
// serve` in single-node mode (n == 0), or a cluster of n brokers on a
// ZooKeeper of its own, whose topics get replication factor min(3, n)
// (the cluster's default.replication.factor, and Kafka's usual).
func startTarget(n int) (target, error) {
	if n == 0 {
		b, s, cleanup, err := launchSecureBroker(context.Background())
		if err != nil {
			return target{}, err
		}
		return target{bootstrap: b.Addr(), rf: 1, secure: s, stop: func() {
			if err := b.Stop(); err != nil {
				slog.Error("stopping the broker", "err", err, "output", testkit.LastLines(b.Output(), 50))
			}
			b.Close()
			cleanup()
		}}, nil
	}
	if !testkit.ZooKeeperAvailable() {
		return target{}, fmt.Errorf("a %d-broker cluster needs ZooKeeper (%s) and java: run `make deps`", n, testkit.ZooKeeperJar)
	}
	c, s, cleanup, err := launchSecureCluster(context.Background(), n)
	if err != nil {
		return target{}, err
	}
	return target{bootstrap: c.ExtraBootstrap(), rf: int16(min(3, n)), secure: s, stop: func() {
		if err := c.Close(); err != nil {
			for _, b := range c.Brokers() {
				slog.Error("stopping the cluster", "err", err, "broker", b.Addr(), "output", testkit.LastLines(b.Output(), 50))
			}
		}
		cleanup()
	}}, nil
}

func run(ctx context.Context, out string, count int, only, bootstrap string, sizes []int) (bool, error) {
	root, err := repoRoot()
	if err != nil {
		return false, err
	}
	began := time.Now()
	want := map[string]bool{}
	for _, c := range strings.Split(only, ",") {
		if c = strings.TrimSpace(c); c != "" {
			want[c] = true
		}
	}
	var runs []*matrixRun
	failed := false
	for _, n := range sizes {
		mr := &matrixRun{brokers: n, count: count, title: "One broker",
			against: "`samsa serve` (one broker, default settings)"}
		if n > 0 {
			mr.title = fmt.Sprintf("%d-broker cluster", n)
			mr.against = fmt.Sprintf("a cluster of %d `samsa serve` brokers on one ZooKeeper, talking to each other over SASL_SSL", n)
		}
		// A given bootstrap list of several brokers is taken for a
		// cluster: the runner's topics get RF min(3, addresses).
		t := target{bootstrap: bootstrap, rf: int16(min(3, len(seeds(bootstrap)))), stop: func() {}}
		if bootstrap == "" {
			if t, err = startTarget(n); err != nil {
				return failed, err
			}
		} else {
			mr.against = "the broker at " + bootstrap
			if k := len(seeds(bootstrap)); k > 1 {
				mr.title, mr.against = "Given brokers", fmt.Sprintf("the %d brokers at %s", k, bootstrap)
			}
		}
		slog.Info("broker", "run", mr.title, "bootstrap", t.bootstrap)
		runBegan := time.Now()
		f, err := runClients(ctx, root, t, want, mr)
		t.stop()
		mr.took = time.Since(runBegan)
		failed = failed || f
		runs = append(runs, mr)
		if err != nil {
			return true, err
		}
	}
	total := time.Since(began)
	if out != "" {
		var buf bytes.Buffer
		writeMarkdown(&buf, runs, time.Now(), total)
		path := out
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return failed, err
		}
		buf.Write(keptSection(path))
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return failed, err
		}
		slog.Info("wrote", "path", path)
	}
	// The closing line CI reads: every client x feature cell of every
	// run, where a client's own limit (the same against Apache Kafka)
	// counts as skipped.
	var passed, failedCells, limited, clients int
	for _, mr := range runs {
		fmt.Printf("interop: %s: %d clients in %s\n", mr.title, len(mr.reports), mr.took.Round(time.Second))
		clients += len(mr.reports)
		for _, r := range mr.reports {
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
	}
	fmt.Printf("interop: %d clients in %s\n", clients, total.Round(time.Second))
	fmt.Printf("interop: %d passed, %d failed, %d skipped\n", passed, failedCells, limited)
	return failed, nil
}

// runClients runs every wanted client against t, each on topics of its
// own, and appends their reports to mr; it reports whether one failed.
func runClients(ctx context.Context, root string, t target, want map[string]bool, mr *matrixRun) (bool, error) {
	failed := false
	for _, c := range clients() {
		if len(want) > 0 && !want[c.name] {
			continue
		}
		prefix := "interop-" + strings.Trim(nonWord.ReplaceAllString(strings.ToLower(c.name), "-"), "-") +
			fmt.Sprintf("-%d", time.Now().UnixNano()%1e6)
		t0 := time.Now()
		var rep *Report
		if err := createTopics(ctx, t.bootstrap, prefix, t.rf); err != nil {
			rep = newReport(c.name)
			rep.failAll("the runner could not create the topics (franz-go): " + err.Error())
		} else {
			rep = c.run(ctx, root, t.bootstrap, prefix, mr.count)
			checkStoredCodecs(ctx, t.bootstrap, prefix, rep)
			verifyStoredTxn(ctx, t.bootstrap, prefix, mr.count, rep)
			runSaslStep(ctx, root, t.secure, c, prefix, mr.count, rep)
		}
		rep.Took = time.Since(t0)
		mr.reports = append(mr.reports, rep)
		printReport(mr.title, rep)
		if rep.failed() {
			failed = true
		}
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
	}
	return failed, nil
}

// createTopics makes prefix-<codec>, prefix-idem and prefix-txn with 3 partitions
// and replication factor rf.
func createTopics(ctx context.Context, bootstrap, prefix string, rf int16) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(bootstrap)...))
	if err != nil {
		return err
	}
	defer cl.Close()
	var names []string
	for _, c := range codecs {
		names = append(names, prefix+"-"+c)
	}
	names = append(names, prefix+"-idem", prefix+"-txn", prefix+"-sasl")
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := kadm.NewClient(cl).CreateTopics(cctx, partitions, rf, nil, names...)
	if err != nil {
		return err
	}
	if err := res.Error(); err != nil {
		return err
	}
	return waitEveryBroker(cctx, seeds(bootstrap), names)
}

// waitEveryBroker waits until each broker, asked directly, knows every
// topic in names with a leader for each partition. In a cluster a new
// topic reaches each broker's metadata in its own time (in Kafka too);
// the clients under test must not start on a broker that has not heard
// of their topics yet, or the matrix measures that race instead of the
// client.
func waitEveryBroker(ctx context.Context, addrs, names []string) error {
	ib := interbroker.New(interbroker.Config{ClientID: "interop-runner"})
	defer ib.Close()
	for _, addr := range addrs {
		for {
			req := kmsg.NewPtrMetadataRequest()
			for _, n := range names {
				t := kmsg.NewMetadataRequestTopic()
				t.Topic = kmsg.StringPtr(n)
				req.Topics = append(req.Topics, t)
			}
			resp, err := ib.Send(ctx, addr, req)
			if err == nil && allLed(resp.(*kmsg.MetadataResponse), len(names)) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("broker %s never knew every new topic: %w", addr, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

func allLed(m *kmsg.MetadataResponse, want int) bool {
	if len(m.Topics) != want {
		return false
	}
	for _, t := range m.Topics {
		if t.ErrorCode != 0 || len(t.Partitions) != partitions {
			return false
		}
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 || p.Leader < 0 {
				return false
			}
		}
	}
	return true
}

// seeds splits a bootstrap list ("host:port,host:port") for the Go
// libraries, which take one address per seed.
func seeds(bootstrap string) []string { return strings.Split(bootstrap, ",") }

func printReport(run string, r *Report) {
	var cells []string
	for _, f := range features {
		cells = append(cells, f+"="+cell(r.Results[f].Status))
	}
	fmt.Printf("%s: %s %s (%s): %s\n", run, r.Client, r.Version, r.Took.Round(100*time.Millisecond), strings.Join(cells, " "))
	for _, f := range features {
		if res := r.Results[f]; res.Status == Fail {
			fmt.Printf("  FAIL %s: %s\n", f, res.Detail)
		}
	}
	if r.failed() && r.Log != "" {
		fmt.Printf("  checker output:\n    %s\n", strings.ReplaceAll(tailLines(r.Log, 30), " / ", "\n    "))
	}
}
