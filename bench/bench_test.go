package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestWorkloadValidate(t *testing.T) {
	if err := func() error { w := DefaultWorkload(); return w.Validate() }(); err != nil {
		t.Fatalf("default workload invalid: %v", err)
	}
	bad := map[string]func(*Workload){
		"acks":        func(w *Workload) { w.Acks = "2" },
		"compression": func(w *Workload) { w.Compression = "brotli" },
		"records":     func(w *Workload) { w.Records = 0 },
		"keydist":     func(w *Workload) { w.KeyDist = "zipf" },
		"idempotent":  func(w *Workload) { w.Idempotent = true; w.Acks = "1" },
		"partitions":  func(w *Workload) { w.Partitions = 0 },
		"idletimeout": func(w *Workload) { w.IdleTimeout = -time.Second },
	}
	for name, mutate := range bad {
		w := DefaultWorkload()
		mutate(&w)
		if err := w.Validate(); err == nil {
			t.Errorf("%s: invalid workload accepted", name)
		}
	}
}

func TestLatencyPercentiles(t *testing.T) {
	l := NewLatency()
	for i := 1; i <= 1000; i++ {
		l.Record(time.Duration(i) * time.Millisecond)
	}
	s := l.Summary()
	if s.Count != 1000 {
		t.Fatalf("count %d", s.Count)
	}
	// HDR with 3 significant digits: within 0.1% of the true values.
	for _, c := range []struct{ got, want float64 }{{s.P50, 500}, {s.P99, 990}, {s.Max, 1000}} {
		if c.got < c.want*0.999 || c.got > c.want*1.001 {
			t.Errorf("percentile %.3f ms, want about %.0f", c.got, c.want)
		}
	}
	l.Record(2 * time.Hour) // beyond the range: clamped, not lost
	if l.Summary().Count != 1001 {
		t.Fatal("out-of-range value was dropped")
	}
}

func TestResultOutput(t *testing.T) {
	r := Result{Kind: "produce", Records: 2_000_000, Bytes: 200_000_000}
	r.Broker = &BrokerUsage{PID: 1, CPUSeconds: 0.5, RSSBytes: 40 << 20, PeakRSS: 50 << 20}
	r.Produce = &Summary{Count: 250_000, P50: 1, P99: 2, P999: 3, Max: 4} // one record in eight timed
	r.finish(2 * time.Second)
	if r.RecordsPerS != 1_000_000 || r.MBPerS != 100 || r.CPUPerMillon != 0.25 {
		t.Fatalf("derived figures wrong: %+v", r)
	}
	var tbl bytes.Buffer
	if err := r.WriteTable(&tbl); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tbl.String(), "1000000 records/s") || !strings.Contains(tbl.String(), "0.250 per million") ||
		!strings.Contains(tbl.String(), "(250000 records timed)") {
		t.Fatalf("table misses figures:\n%s", tbl.String())
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Records != r.Records {
		t.Fatalf("json round trip: %v %+v", err, back)
	}
}
