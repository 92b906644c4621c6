package compare

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/samsa-io/samsa/bench"
	"github.com/samsa-io/samsa/testkit"
)

// The share-group workload (S1, issue 24): KIP-932 throughput. A topic of
// sharePartitions partitions is filled with franz-go (100-byte records,
// as workload 4), then ShareConsumers KafkaShareConsumers of one new
// share group (Java's kafka-clients 4.1.1, interop/java's ShareBench:
// the same client against both brokers, since franz-go has no share
// consumer) read and acknowledge every record. The clock runs from the
// consumers' start to their last commit, joining included; the broker's
// CPU is taken over that span only, not the fill. An unmeasured share
// group on a small topic goes first (warmUpShare). Kafka serves share
// groups only with share.version=1 (KafkaConfig formats its storage so),
// samsa always.

// ShareConsumers is how many share consumers read the topic.
const ShareConsumers = 3

// sharePartitions is the share topic's partition count.
const sharePartitions = 6

// shareTimeout bounds the consuming phase.
const shareTimeout = 5 * time.Minute

// shareName is S1's name in the report.
const shareName = "S1 share group throughput (KIP-932)"

// ShareResult is what ShareBench prints.
type ShareResult struct {
	Records       int64   `json:"records"`
	Deliveries    int64   `json:"deliveries"`
	Consumers     int     `json:"consumers"`
	ElapsedMs     float64 `json:"elapsed_ms"`
	FirstRecordMs float64 `json:"first_record_ms"`
	RecordsPerS   float64 `json:"records_per_s"`
	PerConsumer   []int64 `json:"per_consumer"`
}

// SteadyRecordsPerS is the rate from the first record to the end,
// without the group's formation (NaN when no record came).
func (r ShareResult) SteadyRecordsPerS() float64 {
	if r.FirstRecordMs < 0 || r.ElapsedMs <= r.FirstRecordMs {
		return math.NaN()
	}
	return float64(r.Records) / ((r.ElapsedMs - r.FirstRecordMs) / 1000)
}

// ParseShareBench reads ShareBench's JSON line from its output (the
// client's own log lines may come before it).
func ParseShareBench(out string) (ShareResult, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, `{"records"`) {
			continue
		}
		var r ShareResult
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			return r, fmt.Errorf("compare: ShareBench's result %q: %w", l, err)
		}
		return r, nil
	}
	return ShareResult{}, fmt.Errorf("compare: no ShareBench result in: %s", tail(out))
}

// JavaHarness returns a function that builds interop/java (dir) once, on
// first use, and returns its class path: the share workload needs the
// harness's classes, which a Maven class path of the pom alone lacks.
func JavaHarness(dir string) func() (string, error) {
	return sync.OnceValues(func() (string, error) {
		abs, err := filepath.Abs(dir) // the class path must hold wherever java runs
		if err != nil {
			return "", err
		}
		return testkit.BuildInteropJava(abs)
	})
}

// ShareWorkloads returns S1 at scale (1,000,000 records at 1); harness
// gives the Java harness's class path.
func ShareWorkloads(scale float64, harness func() (string, error)) []Workload {
	fill := bench.DefaultWorkload()
	fill.Topic, fill.Partitions, fill.Records = "s1-share", sharePartitions, scaled(1_000_000, scale, 10_000)
	command := fmt.Sprintf("fill: %s; then java io.samsa.interop.ShareBench ADDR %s GROUP %d %d %d (%d KafkaShareConsumers, kafka-clients 4.1.1, implicit acknowledgement, read and acknowledge every record)",
		describe(fill), fill.Topic, fill.Records, ShareConsumers, shareTimeout.Milliseconds(), ShareConsumers)
	return []Workload{{Name: shareName, Command: command, PlaintextOnly: true,
		Run: func(ctx context.Context, b *Running) ([]Figure, error) {
			cp, err := harness()
			if err != nil {
				return nil, err
			}
			if err := warmUpShare(ctx, cp, b.Addr); err != nil {
				return nil, err
			}
			w := fill
			w.Brokers = []string{b.Addr}
			if res, err := bench.RunProduce(ctx, w, nil); err != nil || res.Errors > 0 {
				return nil, fmt.Errorf("filling %s: %v %s", w.Topic, err, res.FirstError)
			}
			group := "s1-share-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			before, _ := b.Usage()
			res, err := runShareBench(ctx, cp, b.Addr, w.Topic, group, w.Records)
			if err != nil {
				return nil, err
			}
			after, _ := b.Usage()
			cpu := after.CPUSeconds - before.CPUSeconds
			return []Figure{
				{shareName, "records/s", "records/s", res.RecordsPerS, false},
				{shareName, "records/s after the first record", "records/s", res.SteadyRecordsPerS(), false},
				{shareName, "first record after start", "ms", res.FirstRecordMs, true},
				{shareName, "redeliveries", "records", float64(res.Deliveries - res.Records), true},
				{shareName, "broker CPU", "CPU-s", cpu, true},
				{shareName, "broker CPU per M records", "CPU-s/M", cpu / (float64(res.Records) / 1e6), true},
			}, nil
		}}}
}

// warmUpShare runs ShareBench once, unmeasured, on a small topic of its
// own: the first share group of a broker creates the share-state topic
// (Kafka's __share_group_state of 50 partitions) and loads its
// coordinator, which is no part of the throughput.
func warmUpShare(ctx context.Context, classPath, addr string) error {
	w := bench.DefaultWorkload()
	w.Brokers, w.Topic, w.Partitions, w.Records = []string{addr}, "s1-warm-up", sharePartitions, 1000
	if res, err := bench.RunProduce(ctx, w, nil); err != nil || res.Errors > 0 {
		return fmt.Errorf("filling %s: %v %s", w.Topic, err, res.FirstError)
	}
	if _, err := runShareBench(ctx, classPath, addr, w.Topic, "s1-warm-up", w.Records); err != nil {
		return fmt.Errorf("share warm-up: %w", err)
	}
	return nil
}

// runShareBench runs ShareBench against addr and returns its result.
func runShareBench(ctx context.Context, classPath, addr, topic, group string, records int64) (ShareResult, error) {
	args := append(append(append([]string{}, JVMOptions...), "-cp", classPath, "io.samsa.interop.ShareBench"),
		addr, topic, group, strconv.FormatInt(records, 10), strconv.Itoa(ShareConsumers), strconv.FormatInt(shareTimeout.Milliseconds(), 10))
	cmd := exec.CommandContext(ctx, "java", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return ShareResult{}, fmt.Errorf("ShareBench: %v: %s", err, tail(stdout.String()+stderr.String()))
	}
	return ParseShareBench(stdout.String())
}
