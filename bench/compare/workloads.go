package compare

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/samsa-io/samsa/bench"
)

// Figure is one measured number of one workload on one broker in one
// round. Higher is better unless LowerBetter.
type Figure struct {
	Workload    string  `json:"workload"`
	Metric      string  `json:"metric"` // e.g. "records/s", "p99 ms"
	Unit        string  `json:"unit"`
	Value       float64 `json:"value"`
	LowerBetter bool    `json:"lower_better"`
}

// Workload is one named measurement run against a started broker.
type Workload struct {
	Name    string
	Command string // what it does, for the report
	Run     func(ctx context.Context, b *Running) ([]Figure, error)
	// PlaintextOnly workloads have clients that do not speak TLS here
	// (the transactional ones, Kafka's tools): configurations with TLS
	// skip them.
	PlaintextOnly bool
}

// scaled returns n*scale, at least floor.
func scaled(n int64, scale float64, floor int64) int64 {
	v := int64(math.Round(float64(n) * scale))
	if v < floor {
		return floor
	}
	return v
}

// Workloads returns the workloads of the comparison at scale (1 = the
// honest default sizes): 1-7, the transactional 10-13 (txn.go), the
// group rebalance G1 and G2 (rebalance.go, not scaled), and
// Kafka's own tools (8, 9) when classPath is not empty. The share-group
// workload S1 is apart (ShareWorkloads): it needs the Java harness.
func Workloads(scale float64, classPath string) []Workload {
	fast := func(name string, base bench.Workload) Workload {
		return Workload{Name: name, Command: describe(base), Run: func(ctx context.Context, b *Running) ([]Figure, error) {
			w := base
			w.Brokers, w.TLS = []string{b.Addr}, b.Config.TLS
			res, err := bench.RunProduce(ctx, w, nil)
			if err != nil {
				return nil, err
			}
			if res.Errors > 0 {
				return nil, fmt.Errorf("%d records failed: %s", res.Errors, res.FirstError)
			}
			return produceFigures(name, res), nil
		}}
	}
	base := bench.DefaultWorkload()
	base.Records = scaled(1_000_000, scale, 10_000)
	w1 := base
	w1.Topic = "w1-acks1"
	w2 := base
	w2.Topic, w2.Acks = "w2-acksall", "all"

	w3 := bench.DefaultWorkload()
	w3.Topic, w3.Partitions, w3.RecordSize = "w3-e2e", 16, 1024
	w3.Rate = int(scaled(50_000, scale, 1_000))
	w3.Records = int64(w3.Rate) * 20 // 20 s at the rate
	w3.Linger = time.Millisecond

	w4 := bench.DefaultWorkload()
	w4.Topic, w4.Records = "w4-consume", scaled(10_000_000, scale, 10_000)

	w5 := bench.DefaultWorkload()
	w5.Topic, w5.Partitions = "w5-many", int32(scaled(1000, scale, 50))
	w5.Records, w5.KeyDist, w5.KeySize = scaled(500_000, scale, 10_000), "sequential", 8
	w5.Linger = time.Millisecond

	w7 := bench.DefaultWorkload()
	w7.Topic, w7.Producers, w7.Linger = "w7-small", 16, 0
	w7.Records = scaled(500_000, scale, 10_000)

	list := []Workload{
		fast("1 produce 100 B, 6 partitions, acks=1", w1),
		fast("2 produce 100 B, 6 partitions, acks=all", w2),
		{Name: "3 end-to-end 1 KiB, 16 partitions, fixed rate", Command: describe(w3), Run: func(ctx context.Context, b *Running) ([]Figure, error) {
			w := w3
			w.Brokers, w.TLS = []string{b.Addr}, b.Config.TLS
			res, err := bench.RunE2E(ctx, w, nil)
			if err != nil {
				return nil, err
			}
			if res.EndToEnd == nil {
				return nil, fmt.Errorf("no end-to-end latency")
			}
			n := "3 end-to-end 1 KiB, 16 partitions, fixed rate"
			return []Figure{
				{n, "received records/s", "records/s", res.RecordsPerS, false},
				{n, "e2e p50", "ms", res.EndToEnd.P50, true},
				{n, "e2e p99", "ms", res.EndToEnd.P99, true},
				{n, "e2e p99.9", "ms", res.EndToEnd.P999, true},
				{n, "broker CPU", "CPU-s", cpu(res), true},
			}, nil
		}},
		{Name: "4 consume from the start", Command: "fill: " + describe(w4) + "; then consume all from offset 0", Run: func(ctx context.Context, b *Running) ([]Figure, error) {
			w := w4
			w.Brokers, w.TLS = []string{b.Addr}, b.Config.TLS
			if res, err := bench.RunProduce(ctx, w, nil); err != nil || res.Errors > 0 {
				return nil, fmt.Errorf("filling %s: %v %s", w.Topic, err, res.FirstError)
			}
			res, err := bench.RunConsume(ctx, w, nil)
			if err != nil {
				return nil, err
			}
			n := "4 consume from the start"
			return []Figure{
				{n, "records/s", "records/s", res.RecordsPerS, false},
				{n, "MB/s", "MB/s", res.MBPerS, false},
				{n, "broker CPU", "CPU-s", cpu(res), true},
			}, nil
		}},
		fast("5 small writes over many partitions", w5),
		fast("7 many small requests (linger 0, 16 producers)", w7),
	}
	list = append(list, TxnWorkloads(scale)...)
	list = append(list, RebalanceWorkloads()...)
	if classPath != "" {
		list = append(list, KafkaToolWorkloads(classPath, scale)...)
	}
	return list
}

func cpu(r bench.Result) float64 {
	if r.Broker == nil {
		return math.NaN()
	}
	return r.Broker.CPUSeconds
}

func produceFigures(name string, res bench.Result) []Figure {
	f := []Figure{
		{name, "records/s", "records/s", res.RecordsPerS, false},
		{name, "MB/s", "MB/s", res.MBPerS, false},
	}
	if res.Produce != nil {
		f = append(f, Figure{name, "produce p99", "ms", res.Produce.P99, true})
	}
	return append(f, Figure{name, "broker CPU", "CPU-s", cpu(res), true})
}

// describe renders w as the equivalent `samsa bench` command line.
func describe(w bench.Workload) string {
	kind := "produce"
	if w.Rate > 0 {
		kind = "e2e"
	}
	s := fmt.Sprintf("samsa bench %s --topic %s --partitions %d --records %d --record-size %d --acks %s --linger %s --producers %d",
		kind, w.Topic, w.Partitions, w.Records, w.RecordSize, w.Acks, w.Linger, w.Producers)
	if w.Rate > 0 {
		s += fmt.Sprintf(" --rate %d", w.Rate)
	}
	if w.KeyDist != "none" {
		s += fmt.Sprintf(" --key-dist %s --key-size %d", w.KeyDist, w.KeySize)
	}
	return s
}
