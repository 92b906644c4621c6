package replication

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/zkmeta"
)

// startFaultCluster starts three brokers as cfg says, with the durable
// topic in sync, and returns the cluster and its controller's id.
func startFaultCluster(t *testing.T, ctx context.Context, cfg testkit.ClusterConfig) (*testkit.Cluster, int32) {
	t.Helper()
	cfg.Brokers = 3
	c := testkit.StartCluster(t, cfg)
	createDurableTopic(t, ctx, c)
	ctrl, err := c.Controller()
	if err != nil {
		t.Fatal(err)
	}
	return c, ctrl
}

// partitionLoad is an idempotent acks=all franz-go producer writing to
// chosen partitions of the durable topic, each partition in its own loop
// with a bounded number of records in flight, so a partition that stops
// acknowledging does not hold back the others. It keeps, per partition,
// how many records were acknowledged and which.
type partitionLoad struct {
	cl   *kgo.Client
	stop chan struct{}
	wg   sync.WaitGroup

	mu     sync.Mutex
	acked  map[string]bool
	count  map[int32]int
	failed []error
}

// inFlight bounds each partition's unacknowledged records: enough to keep
// the brokers busy, few enough that a stalled partition's retries stay
// small.
const inFlight = 64

func startPartitionLoad(t *testing.T, ctx context.Context, c *testkit.Cluster, partitions []int32) *partitionLoad {
	t.Helper()
	l := &partitionLoad{stop: make(chan struct{}), acked: map[string]bool{}, count: map[int32]int{}}
	l.cl = testkit.NewClient(t, kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordRetries(1<<30), kgo.RecordDeliveryTimeout(5*time.Minute), kgo.ProducerLinger(0))
	for _, p := range partitions {
		l.wg.Go(func() {
			sem := make(chan struct{}, inFlight)
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				case <-ctx.Done():
					return
				case sem <- struct{}{}:
				}
				v := fmt.Sprintf("p%d-%07d", p, i)
				l.cl.Produce(ctx, &kgo.Record{Partition: p, Value: []byte(v)}, func(_ *kgo.Record, err error) {
					<-sem
					l.mu.Lock()
					defer l.mu.Unlock()
					if err != nil {
						l.failed = append(l.failed, err)
						return
					}
					l.acked[v] = true
					l.count[p]++
				})
			}
		})
	}
	return l
}

// acks is how many records of partition p were acknowledged so far.
func (l *partitionLoad) acks(p int32) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count[p]
}

// finish stops producing, waits for every record in flight to be
// acknowledged, fails t on any produce error, and returns the
// acknowledged values.
func (l *partitionLoad) finish(t *testing.T, ctx context.Context) map[string]bool {
	t.Helper()
	close(l.stop)
	l.wg.Wait()
	if err := l.cl.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.failed) > 0 {
		t.Errorf("%d produces failed; first: %v", len(l.failed), l.failed[0])
	}
	return l.acked
}

// readBackExactlyOnce consumes the durable topic from the start and fails
// t unless every value of acked is there exactly once.
func readBackExactlyOnce(t *testing.T, ctx context.Context, c *testkit.Cluster, acked map[string]bool) {
	t.Helper()
	cons := testkit.NewClient(t, kgo.SeedBrokers(c.Addrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	testkit.ReadBackExactlyOnce(t, ctx, cons, slices.Collect(maps.Keys(acked)))
}

// partitionState reads partition p's state znode: what the controller
// wrote, whatever any broker's metadata says.
func partitionState(t *testing.T, c *testkit.Cluster, p int32) zkmeta.PartitionState {
	t.Helper()
	path := c.ZKPath(zkmeta.PartitionStatePath(zkmeta.TopicPartition{Topic: topic, Partition: p}))
	data, _, err := c.ZooKeeperConn().Get(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	st, err := zkmeta.DecodePartitionState(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return st
}

// replicaLog is partition p's log as broker b holds it on disk: its
// segment files in offset order, concatenated. The batches are the
// leader's, byte for byte, so replicas in sync hold the same bytes.
func replicaLog(b *testkit.ClusterBroker, p int32) ([]byte, error) {
	dir := filepath.Join(b.DataDir(), topic+"-"+strconv.Itoa(int(p)))
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names) // 20-digit base offsets sort as numbers
	var all []byte
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		all = append(all, data...)
	}
	return all, nil
}

// batchSpans lists a log's record batches as "base..last@epoch crc" for
// a readable first difference (RecordBatch v2: baseOffset int64, length
// int32, partitionLeaderEpoch int32, magic, crc uint32, attributes int16,
// lastOffsetDelta int32).
func batchSpans(log []byte) []string {
	var out []string
	for len(log) >= 27 {
		base := int64(binary.BigEndian.Uint64(log))
		n := int(binary.BigEndian.Uint32(log[8:]))
		epoch := int32(binary.BigEndian.Uint32(log[12:]))
		crc := binary.BigEndian.Uint32(log[17:])
		last := base + int64(int32(binary.BigEndian.Uint32(log[23:])))
		out = append(out, fmt.Sprintf("%d..%d@%d crc %08x", base, last, epoch, crc))
		if 12+n > len(log) {
			out = append(out, fmt.Sprintf("torn batch at %d", base))
			break
		}
		log = log[12+n:]
	}
	return out
}

// waitIdenticalLogs waits until every broker holds the same bytes for
// partition p, and fails t with the first differing batch if they do not
// within a minute. It returns the number of batches.
func waitIdenticalLogs(t *testing.T, c *testkit.Cluster, p int32) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		logs := make([][]byte, 0, 3)
		var err error
		for _, b := range c.Brokers() {
			var l []byte
			if l, err = replicaLog(b, p); err != nil {
				break
			}
			logs = append(logs, l)
		}
		same := err == nil
		for i := 1; same && i < len(logs); i++ {
			same = bytes.Equal(logs[0], logs[i])
		}
		if same && len(logs[0]) > 0 {
			return len(batchSpans(logs[0]))
		}
		if time.Now().After(deadline) {
			if err != nil {
				t.Fatalf("partition %d: %v", p, err)
			}
			var report []string
			ref := batchSpans(logs[0])
			for i, l := range logs {
				spans := batchSpans(l)
				j := 0
				for j < len(spans) && j < len(ref) && spans[j] == ref[j] {
					j++
				}
				diff := "identical to broker 1's"
				if j < len(spans) || j < len(ref) {
					diff = fmt.Sprintf("first difference at batch %d: %q vs broker 1's %q", j, at(spans, j), at(ref, j))
				}
				report = append(report, fmt.Sprintf("broker %d: %d bytes, %d batches, %s", c.Broker(i).ID(), len(l), len(spans), diff))
			}
			t.Fatalf("partition %d: the replicas' logs differ after a minute:\n%s", p, strings.Join(report, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(end)"
}
