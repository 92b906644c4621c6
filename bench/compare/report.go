package compare

import (
	"fmt"
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

// WriteMarkdown writes the report. charts are file names relative to the
// report, linked at the top.
func (r *Run) WriteMarkdown(w io.Writer, charts []string, loadAtEnd string) error {
	st := Summarise(r.Measurements)
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
		p("![%s](%s)\n\n", c, c)
	}
	p("## Setup\n\n")
	p("- Machine: %s, %d cores, %s RAM, Linux %s\n", r.Machine.CPU, r.Machine.Cores, r.Machine.MemTotal, r.Machine.Kernel)
	p("- Versions: samsa %s (%s), Apache Kafka %s (%s)\n", r.Machine.SamsaVersion, r.Machine.GoVersion, r.Machine.KafkaVersion, r.Machine.Java)
	p("- Command: `%s`\n", r.Command)
	p("- Run: %s to %s; each round starts every configuration afresh (new temporary directory, free loopback port), one at a time, warms it up (produces and reads back an unmeasured topic, so the JVM is not measured cold), then runs every workload against it in order.\n", r.Started.Format("15:04:05"), r.Finished.Format("15:04:05"))
	p("- Client: franz-go through package bench (`samsa bench`), plus Kafka's own ProducerPerformance/ConsumerPerformance (kafka-tools) for workloads 8 and 9. Broker CPU seconds and resident memory come from /proc/PID of the broker process.\n\n")
	p("| configuration | settings | durable ack |\n|---|---|---|\n")
	for _, c := range r.Configs {
		p("| %s | %s | %v |\n", c.Name, c.Settings, c.Durable)
	}
	p("\n**Fairness.** samsa's default acknowledges a write only after fsync (group commit); Kafka's default acknowledges from the page cache and leaves flushing to the OS and replication. The first ratio column compares the defaults; the other two compare equal durability: samsa with `--samsa.log.flush.policy never` against Kafka's defaults, and samsa's defaults against Kafka with `log.flush.interval.messages=1`.\n\n")
	p("## Workloads\n\n")
	for _, wd := range r.Workloads {
		p("- **%s**: `%s`\n", wd.Name, wd.Command)
	}
	p("- **6 startup and idle memory**: process start to first accepted TCP connection and to first answered Metadata request; RSS once ready; peak RSS (VmHWM) over the whole run.\n\n")
	p("## Results\n\n")
	p("Mean over rounds; ± is the spread between rounds ((max−min)/mean). Ratios are samsa ÷ Kafka: above 1 is better for samsa where higher is better (throughput), below 1 is better where lower is better (latency, CPU, memory, time).\n\n")
	p("| workload | metric | better |")
	for _, c := range r.Configs {
		p(" %s |", c.Name)
	}
	for _, pr := range Pairs {
		p(" %s ÷ %s |", pr.Samsa, pr.Kafka)
	}
	p("\n|---|---|---|%s%s\n", strings.Repeat("---|", len(r.Configs)), strings.Repeat("---|", len(Pairs)))
	for _, row := range r.rows() {
		better := "higher"
		if row.LowerBetter {
			better = "lower"
		}
		p("| %s | %s (%s) | %s |", row.Workload, row.Metric, row.Unit, better)
		for _, c := range r.Configs {
			s, ok := st[Key{row.Workload, row.Metric, c.Name}]
			if !ok {
				p(" — |")
				continue
			}
			p(" %s ±%.0f%% |", num(s.Mean), 100*s.Spread())
		}
		for _, pr := range Pairs {
			if v := Ratio(st, row.Workload, row.Metric, pr); !math.IsNaN(v) {
				p(" **%.3g** |", v)
			} else {
				p(" — |")
			}
		}
		p("\n")
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

// rows lists each (workload, metric) once, sorted by workload then first
// appearance.
func (r *Run) rows() []Figure {
	seen := map[[2]string]bool{}
	var rows []Figure
	for _, m := range r.Measurements {
		k := [2]string{m.Workload, m.Metric}
		if !seen[k] {
			seen[k] = true
			rows = append(rows, m.Figure)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Workload < rows[j].Workload })
	return rows
}
