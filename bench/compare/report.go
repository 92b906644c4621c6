package compare

import (
	"fmt"
	"github.com/samsa-io/samsa/testkit"
	"io"
	"math"
	"sort"
	"strings"
)

// Pair is a samsa configuration compared with a Kafka one.
type Pair struct{ Label, Samsa, Kafka string }

// Pairs are the comparisons the report makes: each broker with its
// defaults, then the two matched-durability pairings.
var Pairs = []Pair{
	{"defaults (samsa fsyncs, Kafka does not)", "samsa", "kafka"},
	{"both acknowledge from the page cache", "samsa-noflush", "kafka"},
	{"both fsync before acknowledging", "samsa", "kafka-flush1"},
	// With -configs ...,samsa-tls,samsa-tls-noflush,kafka-tls: TLS on
	// both sides (tls.go).
	{"TLS, defaults (samsa fsyncs, Kafka does not)", "samsa-tls", "kafka-tls"},
	{"TLS, both acknowledge from the page cache", "samsa-tls-noflush", "kafka-tls"},
}

// Ratio is samsa's mean divided by Kafka's, NaN when either is missing.
func Ratio(st map[Key]Stats, workload, metric string, p Pair) float64 {
	s, ok1 := st[Key{workload, metric, p.Samsa}]
	k, ok2 := st[Key{workload, metric, p.Kafka}]
	if !ok1 || !ok2 || k.Mean == 0 {
		return math.NaN()
	}
	return s.Mean / k.Mean
}

// kafka39Version is the Kafka the replicated part runs.
const kafka39Version = testkit.Kafka39Version

// ReplicatedPairs are the comparisons of the replicated part: each
// cluster with its defaults, then samsa at Kafka's durability.
var ReplicatedPairs = []Pair{
	{"defaults (samsa fsyncs on every replica, Kafka does not)", "samsa-cluster", "kafka39-cluster"},
	{"both acknowledge from the page cache", "samsa-cluster-noflush", "kafka39-cluster"},
	{"both fsync before acknowledging", "samsa-cluster", "kafka39-cluster-flush1"},
}

// split returns the single-node and the replicated configurations.
func (r *Run) split() (single, replicated []ConfigInfo) {
	for _, c := range r.Configs {
		if c.Replicated() {
			replicated = append(replicated, c)
		} else {
			single = append(single, c)
		}
	}
	return single, replicated
}

// isReplicatedChart reports whether chart file name belongs to the
// replicated section.
func isReplicatedChart(name string) bool { return strings.Contains(name, "-replicated-") }

// WriteMarkdown writes the report. charts are file names relative to the
// report: the single-node ones are linked at the top, the replicated ones
// in their section.
func (r *Run) WriteMarkdown(w io.Writer, charts []string, loadAtEnd string) error {
	st := Summarise(r.Measurements)
	single, replicated := r.split()
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# samsa vs Apache Kafka — %s\n\n", r.Started.Format("2006-01-02 15:04 UTC"))
	if r.Scale != 1 {
		p("**Reduced scale: BENCH_SCALE=%g** (record counts, rates and the many-partition count are multiplied by it; 1 is the honest default). ", r.Scale)
	}
	p("**%d round(s)**. Load average (1/5/15 min) at start %s, at end %s on %d cores", r.Rounds, r.Machine.LoadAtStart, loadAtEnd, r.Machine.Cores)
	if r.Machine.Cores > 0 {
		p(" — the machine was shared with other work, so absolute numbers are low and noisy; the ratios and their spread are the useful part")
	}
	p(".\n\n")
	for _, c := range charts {
		if !isReplicatedChart(c) {
			p("![%s](%s)\n\n", c, c)
		}
	}
	p("## Setup\n\n")
	p("- Machine: %s, %d cores, %s RAM, Linux %s\n", r.Machine.CPU, r.Machine.Cores, r.Machine.MemTotal, r.Machine.Kernel)
	p("- Versions: samsa %s (%s)", r.Machine.SamsaVersion, r.Machine.GoVersion)
	if len(single) > 0 {
		p(", Apache Kafka %s", r.Machine.KafkaVersion)
	}
	if len(replicated) > 0 {
		p(", Apache Kafka %s in ZooKeeper mode for the replicated part", kafka39Version)
	}
	p(" (%s)\n", r.Machine.Java)
	p("- Command: `%s`\n", r.Command)
	p("- Run: %s to %s; each round starts every configuration afresh (new temporary directory, free loopback port), one at a time, warms it up (produces, and for a single node reads back, an unmeasured topic, so the JVM is not measured cold), then runs every workload against it in order.\n", r.Started.Format("15:04:05"), r.Finished.Format("15:04:05"))
	p("- Client: franz-go through package bench (`samsa bench`)")
	if len(single) > 0 {
		p(", plus Kafka's own ProducerPerformance/ConsumerPerformance (kafka-tools) for workloads 8 and 9")
	}
	if r.ran(shareName) {
		p("; the share-group workload S1 consumes with Java's KafkaShareConsumer (kafka-clients %s, interop/java's ShareBench), franz-go having no share consumer", r.Machine.KafkaVersion)
	}
	p(". Broker CPU seconds and resident memory come from /proc/PID of the broker processes.\n\n")
	if len(single) > 0 {
		configTable(p, single)
		p("\n**Fairness.** samsa's default acknowledges a write only after fsync (group commit); Kafka's default acknowledges from the page cache and leaves flushing to the OS and replication. The first ratio column compares the defaults; the other two compare equal durability: samsa with `--samsa.log.flush.policy never` against Kafka's defaults, and samsa's defaults against Kafka with `log.flush.interval.messages=1`.\n\n")
		p("## Workloads\n\n")
		r.workloadList(p, false)
		p("- **6 startup and idle memory**: process start to first accepted TCP connection and to first answered Metadata request; RSS once ready; peak RSS (VmHWM) over the whole run.\n\n")
		p("## Results\n\n")
		p("Mean over rounds; ± is the spread between rounds ((max−min)/mean). Ratios are samsa ÷ Kafka: above 1 is better for samsa where higher is better (throughput), below 1 is better where lower is better (latency, CPU, memory, time).\n\n")
		r.resultsTable(p, st, single, Pairs)
	}
	if len(replicated) > 0 {
		p("\n## Replicated (%d brokers)\n\n", ClusterBrokers)
		p("Each system is %d brokers on one new ZooKeeper (testkit.LaunchCluster: the same generated server.properties for either broker, each broker's ZooKeeper link through a loopback proxy), started afresh each round, one system at a time and never beside a single-node broker. Every topic has 6 partitions, replication factor %d and `min.insync.replicas=2`, and is used only once every partition has a leader and a full ISR; the client is the idempotent franz-go producer with acks=all. CPU is the three broker processes' user+system time during the workload, summed (ZooKeeper and the client are left out); memory is each broker's resident set from /proc.\n\n", ClusterBrokers, ClusterBrokers)
		for _, c := range charts {
			if isReplicatedChart(c) {
				p("![%s](%s)\n\n", c, c)
			}
		}
		configTable(p, replicated)
		p("\n**Fairness.** samsa's default acknowledges an acks=all write once the leader and every ISR member have fsynced it; Kafka acknowledges once every ISR member has it in its page cache. The first ratio column compares the defaults, the second samsa with `samsa.log.flush.policy=never` (Kafka's durability) against Kafka, and a third, when kafka39-cluster-flush1 ran, samsa's defaults against Kafka with `log.flush.interval.messages=1`.\n\n")
		p("### Workloads\n\n")
		r.workloadList(p, true)
		p("- **%s**: launch of the %d brokers to every broker listing all of them; idle RSS summed once ready; each broker's peak RSS (VmHWM) over the whole run, and their sum.\n\n", replicatedMemory, ClusterBrokers)
		p("### Results\n\n")
		p("Mean over rounds, ± the spread between rounds; ratios samsa ÷ Kafka as above.\n\n")
		r.resultsTable(p, st, replicated, ReplicatedPairs)
	}
	if len(r.Failures) > 0 {
		p("\n## Failures\n\n| config | round | workload | error |\n|---|---|---|---|\n")
		for _, f := range r.Failures {
			p("| %s | %d | %s | %s |\n", f.Config, f.Round, f.Workload, strings.ReplaceAll(oneLine(f.Error), "|", "\\|"))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ran reports whether workload is among the run's workloads.
func (r *Run) ran(workload string) bool {
	for _, w := range r.Workloads {
		if w.Name == workload {
			return true
		}
	}
	return false
}

// presentPairs are the pairs of all whose two configurations both ran
// (a run of -configs samsa has no ratio to show).
func presentPairs(configs []ConfigInfo, all []Pair) []Pair {
	ran := map[string]bool{}
	for _, c := range configs {
		ran[c.Name] = true
	}
	var out []Pair
	for _, p := range all {
		if ran[p.Samsa] && ran[p.Kafka] {
			out = append(out, p)
		}
	}
	return out
}

func configTable(p func(string, ...any), configs []ConfigInfo) {
	p("| configuration | settings | durable ack |\n|---|---|---|\n")
	for _, c := range configs {
		p("| %s | %s | %v |\n", c.Name, c.Settings, c.Durable)
	}
}

func (r *Run) workloadList(p func(string, ...any), replicated bool) {
	for _, wd := range r.Workloads {
		if (wd.Brokers > 1) == replicated {
			p("- **%s**: `%s`\n", wd.Name, wd.Command)
		}
	}
}

// resultsTable writes one row per (workload, metric) measured on any of
// configs, a column per configuration and one per pair.
func (r *Run) resultsTable(p func(string, ...any), st map[Key]Stats, configs []ConfigInfo, all []Pair) {
	pairs := presentPairs(configs, all)
	p("| workload | metric | better |")
	for _, c := range configs {
		p(" %s |", c.Name)
	}
	for _, pr := range pairs {
		p(" %s ÷ %s |", pr.Samsa, pr.Kafka)
	}
	p("\n|---|---|---|%s%s\n", strings.Repeat("---|", len(configs)), strings.Repeat("---|", len(pairs)))
	for _, row := range r.rowsOf(configs) {
		better := "higher"
		if row.LowerBetter {
			better = "lower"
		}
		p("| %s | %s (%s) | %s |", row.Workload, row.Metric, row.Unit, better)
		for _, c := range configs {
			s, ok := st[Key{row.Workload, row.Metric, c.Name}]
			if !ok {
				p(" — |")
				continue
			}
			p(" %s ±%.0f%% |", num(s.Mean), 100*s.Spread())
		}
		for _, pr := range pairs {
			if v := Ratio(st, row.Workload, row.Metric, pr); !math.IsNaN(v) {
				p(" **%.3g** |", v)
			} else {
				p(" — |")
			}
		}
		p("\n")
	}
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func num(v float64) string {
	switch {
	case math.Abs(v) >= 1000:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// rowsOf lists each (workload, metric) measured on any of configs once,
// sorted by workload then first appearance.
func (r *Run) rowsOf(configs []ConfigInfo) []Figure {
	in := map[string]bool{}
	for _, c := range configs {
		in[c.Name] = true
	}
	seen := map[[2]string]bool{}
	var rows []Figure
	for _, m := range r.Measurements {
		k := [2]string{m.Workload, m.Metric}
		if in[m.Config] && !seen[k] {
			seen[k] = true
			rows = append(rows, m.Figure)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Workload < rows[j].Workload })
	return rows
}
