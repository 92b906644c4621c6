package compare

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/samsa-io/samsa/bench"
	"github.com/samsa-io/samsa/testkit/procstat"
)

// ReplicatedRate is the fixed rate of the replicated end-to-end workload,
// records/s: issue 17's latency target is stated at it, so BENCH_SCALE
// shortens the run but never changes the rate.
const ReplicatedRate = 5_000

// ClusterWorkload is one named measurement run against a started cluster.
type ClusterWorkload struct {
	Name    string
	Command string // what it does, for the report
	Run     func(ctx context.Context, rc *RunningCluster) ([]Figure, error)
}

// Names of the replicated workloads and of the memory figures; the R
// prefix keeps them apart from the single-node ones (1..9) in the report
// and in -workloads.
const (
	replicatedProduce = "R1 produce 100 B, 6 partitions, RF 3, acks=all idempotent"
	replicatedE2E     = "R2 end-to-end 100 B at 5,000 records/s, RF 3, acks=all idempotent"
	replicatedMemory  = "R3 cluster start and memory (3 brokers)"
)

// replicatedBase is what every replicated workload shares: RF 3 topics of
// 6 partitions (made by ReplicatedTopic, min.insync.replicas 2),
// 100-byte records, acks=all from the idempotent producer.
func replicatedBase(topic string) bench.Workload {
	w := bench.DefaultWorkload()
	w.Topic, w.Partitions, w.RecordSize = topic, 6, 100
	w.Acks, w.Idempotent = "all", true
	return w
}

// ReplicatedWorkloads returns the replicated workloads at scale (1 = the
// honest default sizes).
func ReplicatedWorkloads(scale float64) []ClusterWorkload {
	produce := replicatedBase("r1-produce")
	produce.Records = scaled(1_000_000, scale, 20_000)

	e2e := replicatedBase("r2-e2e")
	e2e.Rate = ReplicatedRate
	e2e.Records = scaled(ReplicatedRate*60, scale, ReplicatedRate*10) // 60 s at the rate, at least 10 s
	e2e.Linger = time.Millisecond                                     // as the single-node e2e workload

	return []ClusterWorkload{
		{Name: replicatedProduce, Command: describe(produce) + " --idempotent (topic: RF 3, min.insync.replicas=2)",
			Run: func(ctx context.Context, rc *RunningCluster) ([]Figure, error) {
				res, cost, err := measureCluster(ctx, rc, produce, bench.RunProduce)
				if err != nil {
					return nil, err
				}
				n := replicatedProduce
				f := []Figure{
					{n, "records/s", "records/s", res.RecordsPerS, false},
					{n, "MB/s", "MB/s", res.MBPerS, false},
				}
				if res.Produce != nil {
					f = append(f, Figure{n, "produce p50", "ms", res.Produce.P50, true},
						Figure{n, "produce p99", "ms", res.Produce.P99, true})
				}
				return append(f, cost.figures(n, res.Records)...), nil
			}},
		{Name: replicatedE2E, Command: describe(e2e) + " --idempotent (topic: RF 3, min.insync.replicas=2)",
			Run: func(ctx context.Context, rc *RunningCluster) ([]Figure, error) {
				res, cost, err := measureCluster(ctx, rc, e2e, bench.RunE2E)
				if err != nil {
					return nil, err
				}
				if res.EndToEnd == nil {
					return nil, fmt.Errorf("no end-to-end latency")
				}
				n := replicatedE2E
				f := []Figure{
					{n, "received records/s", "records/s", res.RecordsPerS, false},
					{n, "e2e p50", "ms", res.EndToEnd.P50, true},
					{n, "e2e p99", "ms", res.EndToEnd.P99, true},
					{n, "e2e p99.9", "ms", res.EndToEnd.P999, true},
				}
				if res.Produce != nil {
					// The acknowledgement's share of the end-to-end
					// latency: the rest is the consumer's fetch.
					f = append(f, Figure{n, "produce (ack) p50", "ms", res.Produce.P50, true},
						Figure{n, "produce (ack) p99", "ms", res.Produce.P99, true})
				}
				if res.SendLateness != nil {
					// The generator's own share of every latency above,
					// not the brokers': read it before blaming them.
					f = append(f, Figure{n, "generator lateness p99", "ms", res.SendLateness.P99, true})
				}
				return append(f, cost.figures(n, res.Records)...), nil
			}},
	}
}

// clusterCost is what a workload cost the brokers, summed over them.
type clusterCost struct {
	CPUSeconds float64 // all brokers' user + system CPU during the workload
}

// ClusterCPU is the CPU the brokers used between two samples (in the same
// broker order), summed.
func ClusterCPU(before, after []procstat.Usage) (float64, error) {
	if len(before) != len(after) {
		return 0, fmt.Errorf("compare: %d samples before, %d after", len(before), len(after))
	}
	var sum float64
	for i := range before {
		sum += after[i].CPUSeconds - before[i].CPUSeconds
	}
	return sum, nil
}

// PerMillion is x per million of records, NaN without records.
func PerMillion(x float64, records int64) float64 {
	if records <= 0 {
		return math.NaN()
	}
	return x / float64(records) * 1e6
}

func (c clusterCost) figures(workload string, records int64) []Figure {
	return []Figure{
		{workload, "brokers' CPU (3 summed)", "CPU-s", c.CPUSeconds, true},
		{workload, "brokers' CPU per million records", "CPU-s/M", PerMillion(c.CPUSeconds, records), true},
	}
}

// measureCluster points w at rc, creates its replicated topic, and runs
// it between two samples of every broker; it fails when the run does or
// when any record failed.
func measureCluster(ctx context.Context, rc *RunningCluster, w bench.Workload,
	run func(context.Context, bench.Workload, bench.Progress) (bench.Result, error)) (bench.Result, clusterCost, error) {
	w.Brokers = rc.Addrs()
	if err := rc.ReplicatedTopic(ctx, w.Topic, w.Partitions); err != nil {
		return bench.Result{}, clusterCost{}, err
	}
	before, err := rc.Usage()
	if err != nil {
		return bench.Result{}, clusterCost{}, err
	}
	res, err := run(ctx, w, nil)
	if err != nil {
		return res, clusterCost{}, err
	}
	if res.Errors > 0 {
		return res, clusterCost{}, fmt.Errorf("%d records failed: %s", res.Errors, res.FirstError)
	}
	after, err := rc.Usage()
	if err != nil {
		return res, clusterCost{}, err
	}
	cpu, err := ClusterCPU(before, after)
	return res, clusterCost{CPUSeconds: cpu}, err
}

// MemoryFigures are the memory figures of a cluster's brokers from their
// usage at idle (once ready) and at the end of the run: idle RSS summed,
// each broker's peak RSS (VmHWM, over the whole run) and their sum.
func MemoryFigures(idle, end []procstat.Usage) []Figure {
	n := replicatedMemory
	var idleSum, peakSum int64
	var f []Figure
	for _, u := range idle {
		idleSum += u.RSSBytes
	}
	if len(idle) > 0 {
		f = append(f, Figure{n, "idle RSS (3 summed)", "MiB", mib(idleSum), true})
	}
	for i, u := range end {
		peakSum += u.PeakRSS
		f = append(f, Figure{n, fmt.Sprintf("peak RSS broker %d", i+1), "MiB", mib(u.PeakRSS), true})
	}
	if len(end) > 0 {
		f = append(f, Figure{n, "peak RSS (3 summed)", "MiB", mib(peakSum), true})
	}
	return f
}

// Selected reports whether workload name is in list, a comma-separated
// selection: "" selects everything; "replicated" every replicated
// workload, "single" every single-node one; any other entry is a name
// prefix up to the first space ("1", "R2"), compared without case.
func Selected(list, name string, replicated bool) bool {
	if strings.TrimSpace(list) == "" {
		return true
	}
	for _, p := range strings.Split(list, ",") {
		switch p = strings.ToLower(strings.TrimSpace(p)); p {
		case "":
		case "replicated":
			if replicated {
				return true
			}
		case "single":
			if !replicated {
				return true
			}
		default:
			if strings.HasPrefix(strings.ToLower(name), p+" ") {
				return true
			}
		}
	}
	return false
}
