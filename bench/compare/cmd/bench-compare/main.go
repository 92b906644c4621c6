// Command bench-compare runs samsa and Apache Kafka through the same
// workloads and writes a Markdown report with SVG charts (see package
// bench/compare). `make bench-compare` builds samsa and runs it:
//
//	BENCH_SCALE=0.1 BENCH_ROUNDS=2 make bench-compare
//
// Beside the single-node comparison it runs the replicated one: a
// 3-broker samsa cluster (twice: default flush policy and never) and an
// Apache Kafka 3.9.1 3-broker ZooKeeper cluster. Only that part:
//
//	BENCH_REPLICATED=1 BENCH_SCALE=0.1 make bench-compare
//	go run ./bench/compare/cmd/bench-compare -workloads replicated
//
// The share-group workload S1 runs Java's KafkaShareConsumer from the
// harness in -pom's directory (interop/java), which it builds with Maven
// on first use. Only S1:
//
//	BENCH_WORKLOADS=S1 BENCH_SCALE=0.25 BENCH_ROUNDS=1 make bench-compare
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/samsa-io/samsa/bench/compare"
)

func envFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil && v > 0 {
		return v
	}
	return def
}

func main() {
	scale := flag.Float64("scale", envFloat("BENCH_SCALE", 1), "multiply record counts and rates (BENCH_SCALE)")
	rounds := flag.Int("rounds", int(envFloat("BENCH_ROUNDS", 3)), "rounds (BENCH_ROUNDS)")
	samsaBin := flag.String("samsa", "bin/samsa", "samsa binary")
	pomDir := flag.String("pom", "interop/java", "Maven project whose class path holds kafka_2.13 and kafka-tools")
	out := flag.String("out", "bench/results", "report directory")
	configs := flag.String("configs", "samsa,kafka,samsa-noflush,kafka-flush1", "configurations to run, in turn "+
		"(also: samsa-tls, samsa-tls-noflush, kafka-tls: an SSL listener, franz-go workloads only; "+
		"samsa-hb500, kafka-hb500: a 500 ms KIP-848 heartbeat interval, for G2)")
	tools := flag.Bool("kafka-tools", true, "also run Kafka's ProducerPerformance and ConsumerPerformance")
	clusterOut := flag.String("cluster-output", "", "directory to write each replicated system's broker output to (NAME.log), for diagnosis")
	clusters := flag.String("cluster-configs", "samsa-cluster,samsa-cluster-noflush,kafka39-cluster", "replicated systems to run, in turn (also: kafka39-cluster-flush1)")
	only := flag.String("workloads", defaultWorkloads(), "comma-separated workloads to run (default all): number prefixes (1,3), R1/R2 for replicated ones, "+
		"\"single\" or \"replicated\" for a whole part (BENCH_WORKLOADS; BENCH_REPLICATED=1 means replicated)")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(log, *scale, *rounds, *samsaBin, *pomDir, *out, *configs, *clusters, *clusterOut, *tools, *only); err != nil {
		log.Error("bench-compare", "err", err)
		os.Exit(1)
	}
}

// defaultWorkloads is -workloads' default: $BENCH_WORKLOADS, else
// "replicated" when $BENCH_REPLICATED is set to anything but 0 or "".
func defaultWorkloads() string {
	if v := os.Getenv("BENCH_WORKLOADS"); v != "" {
		return v
	}
	if v := os.Getenv("BENCH_REPLICATED"); v != "" && v != "0" {
		return "replicated"
	}
	return ""
}

func run(log *slog.Logger, scale float64, rounds int, samsaBin, pomDir, out, configList, clusterList, clusterOut string, tools bool, only string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	samsaBin, _ = filepath.Abs(samsaBin)
	harness := compare.JavaHarness(pomDir)
	// every lists the single-node workloads: Workloads and the share
	// workload, which needs the Java harness built from pomDir.
	every := func(toolCP string) []compare.Workload {
		return append(compare.Workloads(scale, toolCP), compare.ShareWorkloads(scale, harness)...)
	}
	var singleWanted bool
	for _, w := range every("") {
		singleWanted = singleWanted || compare.Selected(only, w.Name, false)
	}
	singleWanted = singleWanted || (tools && compare.Selected(only, "8 ", false)) || (tools && compare.Selected(only, "9 ", false))
	cp := ""
	if singleWanted {
		m2 := filepath.Join(os.Getenv("HOME"), ".m2", "repository")
		log.Info("resolving Kafka with Maven", "pom", filepath.Join(pomDir, "pom.xml"))
		var err error
		if cp, err = compare.KafkaClassPath(pomDir, m2); err != nil {
			return err
		}
	}
	all := map[string]compare.Config{
		"samsa":         compare.SamsaConfig("samsa", samsaBin, true),
		"samsa-noflush": compare.SamsaConfig("samsa-noflush", samsaBin, false, "--samsa.log.flush.policy", "never"),
		"kafka":         compare.KafkaConfig("kafka", cp, false),
		"kafka-flush1":  compare.KafkaConfig("kafka-flush1", cp, true, "log.flush.interval.messages=1"),
		// Not run by default: a 500 ms KIP-848 heartbeat interval on
		// both, so G2 shows the coordinators rather than the 5 s interval.
		"samsa-hb500": compare.SamsaConfig("samsa-hb500", samsaBin, true,
			"--group.consumer.heartbeat.interval.ms", "500", "--group.consumer.min.heartbeat.interval.ms", "500"),
		"kafka-hb500": compare.KafkaConfig("kafka-hb500", cp, false,
			"group.consumer.heartbeat.interval.ms=500", "group.consumer.min.heartbeat.interval.ms=500"),
	}
	if strings.Contains(configList, "-tls") {
		dir, err := os.MkdirTemp("", "bench-compare-tls-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		files, err := compare.MakeTLSFiles(dir)
		if err != nil {
			return err
		}
		all["samsa-tls"] = compare.SamsaTLSConfig("samsa-tls", samsaBin, true, files)
		all["samsa-tls-noflush"] = compare.SamsaTLSConfig("samsa-tls-noflush", samsaBin, false, files, "--samsa.log.flush.policy", "never")
		all["kafka-tls"] = compare.KafkaTLSConfig("kafka-tls", cp, false, files)
	}
	var cfgs []compare.Config
	for _, n := range strings.Split(configList, ",") {
		if !singleWanted {
			break
		}
		c, ok := all[strings.TrimSpace(n)]
		if !ok {
			return fmt.Errorf("unknown configuration %q", n)
		}
		cfgs = append(cfgs, c)
	}
	toolCP := ""
	if tools {
		toolCP = cp
	}
	var wls []compare.Workload
	for _, w := range every(toolCP) {
		if singleWanted && compare.Selected(only, w.Name, false) {
			wls = append(wls, w)
		}
	}
	allClusters := map[string]compare.ClusterConfig{
		"samsa-cluster":         compare.SamsaClusterConfig("samsa-cluster", samsaBin, true, nil),
		"samsa-cluster-noflush": compare.SamsaClusterConfig("samsa-cluster-noflush", samsaBin, false, map[string]string{"samsa.log.flush.policy": "never"}),
		"kafka39-cluster":       compare.Kafka39ClusterConfig("kafka39-cluster", false, nil),
		// Not run by default: samsa's durability on Kafka's side.
		"kafka39-cluster-flush1": compare.Kafka39ClusterConfig("kafka39-cluster-flush1", true, map[string]string{"log.flush.interval.messages": "1"}),
	}
	var clusters []compare.ClusterConfig
	for _, n := range strings.Split(clusterList, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		c, ok := allClusters[n]
		if !ok {
			return fmt.Errorf("unknown cluster configuration %q", n)
		}
		if clusterOut != "" {
			if err := os.MkdirAll(clusterOut, 0o755); err != nil {
				return err
			}
			f, err := os.Create(filepath.Join(clusterOut, n+".log"))
			if err != nil {
				return err
			}
			defer f.Close()
			c.Output = f
		}
		clusters = append(clusters, c)
	}
	var cwls []compare.ClusterWorkload
	for _, w := range compare.ReplicatedWorkloads(scale) {
		if compare.Selected(only, w.Name, true) {
			cwls = append(cwls, w)
		}
	}
	if len(wls) == 0 && len(cwls) == 0 {
		return fmt.Errorf("-workloads %q selects nothing", only)
	}
	if len(wls) == 0 {
		cfgs = nil
	}
	r := compare.Execute(ctx, cfgs, wls, rounds, scale, log)
	r.ExecuteReplicated(ctx, clusters, cwls, rounds, log)
	r.Command = strings.Join(os.Args, " ")
	if s := os.Getenv("BENCH_COMMAND"); s != "" {
		r.Command = s
	}
	if v, err := exec.Command(samsaBin, "version").Output(); err == nil {
		r.Machine.SamsaVersion = strings.Join(strings.Fields(strings.TrimPrefix(strings.Split(string(v), "\n")[0], "samsa ")), " ")
	}
	if pom, err := os.ReadFile(filepath.Join(pomDir, "pom.xml")); err == nil {
		if m := regexp.MustCompile(`<kafka.version>([^<]+)<`).FindSubmatch(pom); m != nil {
			r.Machine.KafkaVersion = string(m[1])
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	prefix := r.Started.Format("2006-01-02-1504") + fmt.Sprintf("-scale%g", scale)
	charts, err := r.WriteCharts(out, prefix)
	if err != nil {
		return err
	}
	js, _ := json.MarshalIndent(r, "", "  ")
	if err := os.WriteFile(filepath.Join(out, prefix+".json"), js, 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(out, prefix+".md"))
	if err != nil {
		return err
	}
	if err := r.WriteMarkdown(f, charts, compare.LoadNow()); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// Fixed names for the README: the latest report and charts.
	for _, c := range charts {
		b, _ := os.ReadFile(filepath.Join(out, c))
		_ = os.WriteFile(filepath.Join(out, strings.Replace(c, prefix, "latest", 1)), b, 0o644)
	}
	log.Info("report written", "file", filepath.Join(out, prefix+".md"), "failures", len(r.Failures))
	return nil
}
