package compare

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseProducerPerformance(t *testing.T) {
	out := `49981 records sent, 9996.2 records/sec (0.95 MB/sec), 12.3 ms avg latency, 220.0 ms max latency.
100000 records sent, 21881.8 records/sec (2.09 MB/sec), 41.52 ms avg latency, 734.00 ms max latency, 12 ms 50th, 310 ms 95th, 701 ms 99th, 733 ms 99.9th.
`
	r, err := ParseProducerPerformance(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Records != 100000 || r.RecordsPerS != 21881.8 || r.MBPerS != 2.09 || r.P50 != 12 || r.P99 != 701 {
		t.Fatalf("parsed %+v", r)
	}
	if _, err := ParseProducerPerformance("Exception in thread main"); err == nil {
		t.Fatal("no summary must be an error")
	}
}

func TestParseConsumerPerformance(t *testing.T) {
	out := `WARN something
start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
2026-11-30 04:21:10:000, 2026-11-30 04:21:14:000, 0.9537, 0.2384, 10000, 2500.0000, 3000, 1000, 0.9537, 10000.0000
`
	r, err := ParseConsumerPerformance(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Records != 10000 || r.RecordsPerS != 2500 || r.MBPerS != 0.2384 || r.FetchRecordsPerS != 10000 {
		t.Fatalf("parsed %+v", r)
	}
	if _, err := ParseConsumerPerformance("start.time, end.time\n"); err == nil {
		t.Fatal("a header without values must be an error")
	}
}

func TestScaled(t *testing.T) {
	if got := scaled(10_000_000, 0.1, 10_000); got != 1_000_000 {
		t.Fatalf("scaled = %d", got)
	}
	if got := scaled(1000, 0.001, 50); got != 50 {
		t.Fatalf("floor not applied: %d", got)
	}
}

func sampleRun() *Run {
	r := &Run{Scale: 0.1, Rounds: 2, Configs: []ConfigInfo{{Name: "samsa"}, {Name: "kafka"}}}
	for round, vals := range [][2]float64{{100, 50}, {300, 50}} {
		r.Measurements = append(r.Measurements,
			Measurement{"samsa", round + 1, Figure{"1 produce", "records/s", "records/s", vals[0], false}},
			Measurement{"kafka", round + 1, Figure{"1 produce", "records/s", "records/s", vals[1], false}},
			Measurement{"samsa", round + 1, Figure{"3 e2e", "e2e p99", "ms", 2, true}},
			Measurement{"kafka", round + 1, Figure{"3 e2e", "e2e p99", "ms", 4, true}},
			Measurement{"kafka", round + 1, Figure{"1 produce", "broker CPU", "CPU-s", math.NaN(), true}})
	}
	return r
}

func TestSummariseRatioSpread(t *testing.T) {
	st := Summarise(sampleRun().Measurements)
	s := st[Key{"1 produce", "records/s", "samsa"}]
	if s.N != 2 || s.Mean != 200 || s.Min != 100 || s.Max != 300 || s.Spread() != 1 {
		t.Fatalf("stats %+v spread %v", s, s.Spread())
	}
	if _, ok := st[Key{"1 produce", "broker CPU", "kafka"}]; ok {
		t.Fatal("NaN samples (unobservable broker) must be left out")
	}
	p := Pair{"defaults", "samsa", "kafka"}
	if got := Ratio(st, "1 produce", "records/s", p); got != 4 {
		t.Fatalf("ratio = %v", got)
	}
	if got := Ratio(st, "3 e2e", "e2e p99", p); got != 0.5 {
		t.Fatalf("latency ratio = %v", got)
	}
	if got := Ratio(st, "1 produce", "records/s", Pair{"x", "samsa-noflush", "kafka"}); !math.IsNaN(got) {
		t.Fatalf("missing configuration gave ratio %v", got)
	}
}

func TestReportAndCharts(t *testing.T) {
	r := sampleRun()
	dir := t.TempDir()
	charts, err := r.WriteCharts(dir, "x")
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 2 {
		t.Fatalf("charts %v, want throughput and latency", charts)
	}
	for _, c := range charts {
		b, err := os.ReadFile(filepath.Join(dir, c))
		if err != nil || !bytes.Contains(b, []byte("<svg")) {
			t.Fatalf("%s is not an SVG: %v", c, err)
		}
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md, charts, "1 2 3"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"BENCH_SCALE=0.1", "2 round(s)", "| 1 produce | records/s (records/s) | higher | 200.0 ±100% | 50.0 ±0% | **4** |", "**0.5**", "(x-throughput.svg)"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Contains(md.String(), "samsa-noflush ÷ kafka") {
		t.Error("a ratio column for configurations that did not run")
	}
}
