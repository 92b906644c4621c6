package compare

import (
	"context"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
)

// S1 against an in-process samsa with Java's KafkaShareConsumer: every
// record filled is read and acknowledged, and each figure is there.
func TestShareWorkload(t *testing.T) {
	cp := testkit.InteropJava(t)
	n := testkit.StartInProcess(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The broker runs in this process: its CPU is the test's.
	b := &Running{Config: Config{Name: "samsa"}, Addr: n.Addr, PID: os.Getpid()}
	wls := ShareWorkloads(0.001, func() (string, error) { return cp, nil })
	if len(wls) != 1 || !wls[0].PlaintextOnly {
		t.Fatalf("ShareWorkloads = %+v, want S1 alone, PLAINTEXT only", wls)
	}
	figs, err := wls[0].Run(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range figs {
		got[f.Metric] = f.Value
	}
	for _, m := range []string{"records/s", "records/s after the first record", "first record after start", "broker CPU per M records"} {
		if v, ok := got[m]; !ok || v <= 0 {
			t.Errorf("%s = %v (present %v), want above 0: %+v", m, v, ok, figs)
		}
	}
	if v, ok := got["redeliveries"]; !ok || v < 0 {
		t.Errorf("redeliveries = %v (present %v): %+v", v, ok, figs)
	}
}

func TestParseShareBench(t *testing.T) {
	out := `SLF4J: Defaulting to no-operation (NOP) logger implementation
{"records":20000,"deliveries":20010,"consumers":3,"elapsed_ms":712.2,"first_record_ms":329.1,"records_per_s":28083.2,"per_consumer":[7000,6510,6500]}
`
	r, err := ParseShareBench(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Records != 20000 || r.Deliveries != 20010 || r.Consumers != 3 || r.RecordsPerS != 28083.2 || r.FirstRecordMs != 329.1 ||
		!slices.Equal(r.PerConsumer, []int64{7000, 6510, 6500}) {
		t.Fatalf("parsed %+v", r)
	}
	if got, want := r.SteadyRecordsPerS(), 20000/((712.2-329.1)/1000); math.Abs(got-want) > 1e-6 {
		t.Fatalf("steady records/s %v, want %v", got, want)
	}
	if _, err := ParseShareBench("Exception in thread \"main\" java.lang.IllegalStateException"); err == nil {
		t.Fatal("output without a result must be an error")
	}
}

// A single node's S1 figures land in the throughput chart and, per
// million records, in the CPU chart; the report names the Java client.
func TestShareReport(t *testing.T) {
	r := &Run{Configs: []ConfigInfo{{Name: "samsa", Brokers: 1}, {Name: "kafka", Brokers: 1}},
		Workloads: []WorkloadDoc{{Name: shareName, Command: "ShareBench", Brokers: 1}}}
	for _, cfg := range []string{"samsa", "kafka"} {
		r.Measurements = append(r.Measurements,
			Measurement{cfg, 1, Figure{shareName, "records/s", "records/s", 30000, false}},
			Measurement{cfg, 1, Figure{shareName, "broker CPU per M records", "CPU-s/M", 2, true}})
	}
	charts, err := r.WriteCharts(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(charts, []string{"x-throughput.svg", "x-cpu.svg"}) {
		t.Fatalf("charts %v", charts)
	}
	var md strings.Builder
	if err := r.WriteMarkdown(&md, charts, "0 0 0"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "KafkaShareConsumer") || !strings.Contains(md.String(), "| "+shareName+" | records/s (records/s) |") {
		t.Fatalf("the report names neither the share client nor S1's row:\n%s", md.String())
	}
}
