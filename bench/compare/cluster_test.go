package compare

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit/procstat"
)

func TestClusterCPU(t *testing.T) {
	before := []procstat.Usage{{CPUSeconds: 1}, {CPUSeconds: 2}, {CPUSeconds: 3}}
	after := []procstat.Usage{{CPUSeconds: 1.5}, {CPUSeconds: 3}, {CPUSeconds: 4.5}}
	cpu, err := ClusterCPU(before, after)
	if err != nil || cpu != 3 {
		t.Fatalf("ClusterCPU = %v, %v; want 3 (0.5+1+1.5)", cpu, err)
	}
	if _, err := ClusterCPU(before, after[:2]); err == nil {
		t.Fatal("a broker missing from one sample must be an error")
	}
	if got := PerMillion(3, 2_000_000); got != 1.5 {
		t.Fatalf("PerMillion = %v", got)
	}
	if got := PerMillion(3, 0); !math.IsNaN(got) {
		t.Fatalf("PerMillion without records = %v, want NaN (left out of the summary)", got)
	}
	f := clusterCost{CPUSeconds: 3}.figures("R1 x", 2_000_000)
	if len(f) != 2 || f[1].Unit != "CPU-s/M" || f[1].Value != 1.5 || !f[1].LowerBetter {
		t.Fatalf("cost figures %+v", f)
	}
}

func TestMemoryFigures(t *testing.T) {
	idle := []procstat.Usage{{RSSBytes: 10 << 20}, {RSSBytes: 20 << 20}, {RSSBytes: 30 << 20}}
	end := []procstat.Usage{{PeakRSS: 40 << 20}, {PeakRSS: 50 << 20}, {PeakRSS: 60 << 20}}
	got := map[string]float64{}
	for _, f := range MemoryFigures(idle, end) {
		if f.Unit != "MiB" || !f.LowerBetter || f.Workload != replicatedMemory {
			t.Fatalf("figure %+v", f)
		}
		got[f.Metric] = f.Value
	}
	want := map[string]float64{"idle RSS (3 summed)": 60, "peak RSS broker 1": 40, "peak RSS broker 2": 50,
		"peak RSS broker 3": 60, "peak RSS (3 summed)": 150}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all %v)", k, got[k], v, got)
		}
	}
	if f := MemoryFigures(nil, nil); len(f) != 0 {
		t.Fatalf("no samples gave %+v", f)
	}
}

func TestSelected(t *testing.T) {
	for _, c := range []struct {
		list, name string
		replicated bool
		want       bool
	}{
		{"", "1 produce", false, true},
		{"", replicatedProduce, true, true},
		{"replicated", replicatedProduce, true, true},
		{"replicated", "1 produce", false, false},
		{"single", "1 produce", false, true},
		{"single", replicatedE2E, true, false},
		{"1,3", "3 end-to-end", false, true},
		{"1,3", "30 x", false, false},
		{"r2", replicatedE2E, true, true},
		{"R2", replicatedProduce, true, false},
		{" , ", "1 produce", false, false},
	} {
		if got := Selected(c.list, c.name, c.replicated); got != c.want {
			t.Errorf("Selected(%q, %q, %v) = %v, want %v", c.list, c.name, c.replicated, got, c.want)
		}
	}
}

func TestFullyReplicated(t *testing.T) {
	meta := func(isr ...[]int32) *kmsg.MetadataResponse {
		m := kmsg.NewPtrMetadataResponse()
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic = kmsg.StringPtr("t")
		for i, in := range isr {
			p := kmsg.NewMetadataResponseTopicPartition()
			p.Partition, p.Leader, p.ISR = int32(i), 1, in
			mt.Partitions = append(mt.Partitions, p)
		}
		m.Topics = append(m.Topics, mt)
		return m
	}
	full := []int32{1, 2, 3}
	if !fullyReplicated(meta(full, full), "t", 2) {
		t.Fatal("two partitions with full ISRs not seen as fully replicated")
	}
	if fullyReplicated(meta(full, []int32{1, 2}), "t", 2) {
		t.Fatal("a partition with a short ISR seen as fully replicated")
	}
	if fullyReplicated(meta(full), "t", 2) {
		t.Fatal("a missing partition seen as fully replicated")
	}
	if fullyReplicated(meta(full, full), "other", 2) {
		t.Fatal("an absent topic seen as fully replicated")
	}
	m := meta(full, full)
	m.Topics[0].Partitions[1].Leader = -1
	if fullyReplicated(m, "t", 2) {
		t.Fatal("a leaderless partition seen as fully replicated")
	}
}

// TestReplicatedReport: single-node and replicated figures of one run go
// into separate tables and separate charts, each with its own ratios.
func TestReplicatedReport(t *testing.T) {
	r := sampleRun()
	for _, n := range []string{"samsa-cluster", "samsa-cluster-noflush", "kafka39-cluster"} {
		r.Configs = append(r.Configs, ConfigInfo{Name: n, Brokers: ClusterBrokers})
	}
	r.Workloads = append(r.Workloads, WorkloadDoc{Name: replicatedProduce, Command: "samsa bench produce ...", Brokers: ClusterBrokers},
		WorkloadDoc{Name: "1 produce", Command: "single", Brokers: 1})
	add := func(config string, f Figure) { r.Measurements = append(r.Measurements, Measurement{config, 1, f}) }
	for n, v := range map[string]float64{"samsa-cluster": 600, "samsa-cluster-noflush": 900, "kafka39-cluster": 200} {
		add(n, Figure{replicatedProduce, "records/s", "records/s", v, false})
		add(n, Figure{replicatedProduce, "produce p99", "ms", v / 100, true})
		add(n, Figure{replicatedProduce, "brokers' CPU per million records", "CPU-s/M", v / 1000, true})
		add(n, Figure{replicatedE2E, "generator lateness p99", "ms", 1, true})
		for _, f := range MemoryFigures([]procstat.Usage{{RSSBytes: 1 << 20}}, []procstat.Usage{{PeakRSS: 2 << 20}}) {
			add(n, f)
		}
	}
	dir := t.TempDir()
	charts, err := r.WriteCharts(dir, "x")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"x-throughput.svg", "x-latency.svg", "x-replicated-throughput.svg", "x-replicated-latency.svg",
		"x-replicated-memory.svg", "x-replicated-cpu.svg"}
	if !slices.Equal(charts, want) {
		t.Fatalf("charts %v, want %v", charts, want)
	}
	lat, err := os.ReadFile(filepath.Join(dir, "x-replicated-latency.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(lat, []byte("lateness")) || !bytes.Contains(lat, []byte("R1 p99")) {
		t.Error("the replicated latency chart should show R1 p99 and not the generator's lateness")
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md, charts, "1 2 3"); err != nil {
		t.Fatal(err)
	}
	s := md.String()
	single, repl, ok := strings.Cut(s, "## Replicated (3 brokers)")
	if !ok {
		t.Fatalf("no replicated section:\n%s", s)
	}
	for _, c := range []struct{ in, want string }{
		{single, "| 1 produce | records/s (records/s) | higher | 200.0 ±100% | 50.0 ±0% | **4** |"},
		{single, "(x-throughput.svg)"},
		{repl, "(x-replicated-cpu.svg)"},
		{repl, "| " + replicatedProduce + " | records/s (records/s) | higher | 600.0 ±0% | 900.0 ±0% | 200.0 ±0% | **3** | **4.5** |"},
		{repl, "samsa-cluster-noflush ÷ kafka39-cluster"},
		{repl, "peak RSS (3 summed)"},
		{repl, "samsa bench produce ..."},
	} {
		if !strings.Contains(c.in, c.want) {
			t.Errorf("report section lacks %q:\n%s", c.want, c.in)
		}
	}
	for _, leak := range []string{"kafka39-cluster", replicatedProduce, "x-replicated-"} {
		if strings.Contains(single, leak) {
			t.Errorf("the single-node part mentions %q", leak)
		}
	}
	if strings.Contains(repl, "| 1 produce |") {
		t.Error("the replicated table has a single-node row")
	}
}
