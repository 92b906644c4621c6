package mixed

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/zkmeta"
)

// ackedLoad is an idempotent acks=all producer writing numbered values
// round the partitions of one topic, with a bounded number in flight, and
// remembering each value it was told is written.
type ackedLoad struct {
	topic string
	cl    *kgo.Client
	stop  chan struct{}
	done  chan struct{}

	mu     sync.Mutex
	acked  []string
	failed []error
}

// loadRate is how many records a second startLoad offers.
const loadRate = 2000

func startLoad(t *testing.T, ctx context.Context, c *testkit.Cluster, topic string) *ackedLoad {
	t.Helper()
	l := &ackedLoad{topic: topic, stop: make(chan struct{}), done: make(chan struct{})}
	l.cl = client(t, c, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordRetries(1<<30), kgo.RecordDeliveryTimeout(4*time.Minute), kgo.ProducerLinger(5*time.Millisecond),
		kgo.MaxBufferedRecords(256))
	go func() {
		defer close(l.done)
		// A steady pace, not as fast as possible: the machines these run
		// on are small and shared, and what is checked is loss, not speed.
		pace := time.NewTicker(time.Second / loadRate)
		defer pace.Stop()
		for i := 0; ctx.Err() == nil; i++ {
			select {
			case <-l.stop:
				return
			case <-pace.C:
			}
			v := fmt.Sprintf("%s-%08d", topic, i)
			// Produce blocks while MaxBufferedRecords are in flight: the
			// bound on what a stalled partition holds up.
			l.cl.Produce(ctx, &kgo.Record{Value: []byte(v)}, func(_ *kgo.Record, err error) {
				l.mu.Lock()
				defer l.mu.Unlock()
				if err != nil {
					l.failed = append(l.failed, err)
					return
				}
				l.acked = append(l.acked, v)
			})
		}
	}()
	return l
}

// count is how many records were acknowledged so far.
func (l *ackedLoad) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// waitProgress waits until n more records than now are acknowledged:
// the cluster takes writes again after a kill.
func (l *ackedLoad) waitProgress(t *testing.T, n int, d time.Duration, during string) {
	t.Helper()
	from := l.count()
	eventually(t, d, "acknowledged writes "+during, func() error {
		if got := l.count() - from; got < n {
			return fmt.Errorf("%d of %d more acknowledged", got, n)
		}
		return nil
	})
}

// finish stops producing, waits until every record in flight is
// answered, fails t on any produce error and returns the acknowledged
// values.
func (l *ackedLoad) finish(t *testing.T, ctx context.Context) []string {
	t.Helper()
	close(l.stop)
	<-l.done
	flushErr := l.cl.Flush(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, err := range append([]error{flushErr}, l.failed...) {
		if err != nil {
			t.Fatalf("%d of %d produces failed; %v", len(l.failed), len(l.failed)+len(l.acked), err)
		}
	}
	return slices.Clone(l.acked)
}

// readAll consumes topic from the start and fails t unless each value of
// acked is there exactly once (the producer is idempotent).
func readAll(t *testing.T, ctx context.Context, c *testkit.Cluster, topic string, acked []string) {
	t.Helper()
	cons := client(t, c, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	testkit.ReadBackExactlyOnce(t, ctx, cons, acked)
	t.Logf("read back %d acknowledged records of %s", len(acked), topic)
}

// partitionState reads a partition's state znode: the controller's
// word, whichever kind the controller is.
func partitionState(c *testkit.Cluster, topic string, p int32) (zkmeta.PartitionState, error) {
	path := c.ZKPath(zkmeta.PartitionStatePath(zkmeta.TopicPartition{Topic: topic, Partition: p}))
	data, _, err := c.ZooKeeperConn().Get(path)
	if err != nil {
		return zkmeta.PartitionState{}, fmt.Errorf("reading %s: %w", path, err)
	}
	return zkmeta.DecodePartitionState(data)
}

// waitFullISR waits until each of topic's partitions has a leader and
// all rf replicas in its ISR: the restarted broker caught up.
func waitFullISR(t *testing.T, c *testkit.Cluster, topic string, partitions int32, rf int, d time.Duration) {
	t.Helper()
	eventually(t, d, topic+" back to a full ISR", func() error {
		for p := range partitions {
			st, err := partitionState(c, topic, p)
			if err != nil {
				return err
			}
			if st.Leader < 0 || len(st.ISR) != rf {
				return fmt.Errorf("partition %d: leader %d, isr %v", p, st.Leader, st.ISR)
			}
		}
		return nil
	})
}

// leaderOf is partition p's leader by its state znode.
func leaderOf(t *testing.T, c *testkit.Cluster, topic string, p int32) int32 {
	t.Helper()
	st, err := partitionState(c, topic, p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Leader
}

// createTopic creates topic with one partition per broker, each broker
// the preferred leader of one, and waits until every broker's metadata
// names a leader for each.
func createTopic(t *testing.T, c *testkit.Cluster, topic string, configs map[string]*string) {
	t.Helper()
	ctx := deadline(t, time.Minute)
	ids := []int32{1, 2, 3}
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p := range int32(3) {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition = p
		a.Replicas = []int32{ids[p], ids[(p+1)%3], ids[(p+2)%3]}
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	for k, v := range configs {
		cfg := kmsg.NewCreateTopicsRequestTopicConfig()
		cfg.Name, cfg.Value = k, v
		rt.Configs = append(rt.Configs, cfg)
	}
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, client(t, c))
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	if code := resp.Topics[0].ErrorCode; code != 0 {
		t.Fatalf("create %s: error %d %v", topic, code, resp.Topics[0].ErrorMessage)
	}
	waitLeaders(t, c, topic, 3)
}

// waitLeaders waits until every running broker's metadata has a leader
// for each of topic's n partitions.
func waitLeaders(t *testing.T, c *testkit.Cluster, topic string, n int) {
	t.Helper()
	eventually(t, time.Minute, topic+" led on every broker's metadata", func() error {
		for _, b := range c.Brokers() {
			if !b.Running() {
				continue
			}
			if err := ledOn(b.Addr(), topic, n); err != nil {
				return fmt.Errorf("broker %d: %w", b.ID(), err)
			}
		}
		return nil
	})
}

func ledOn(addr, topic string, n int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	// Straight to addr: a seed broker's own metadata, not the cluster's.
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return err
	}
	m := resp.(*kmsg.MetadataResponse)
	if len(m.Topics) != 1 || m.Topics[0].ErrorCode != 0 || len(m.Topics[0].Partitions) != n {
		return fmt.Errorf("metadata of %s: %+v", topic, m.Topics)
	}
	for _, p := range m.Topics[0].Partitions {
		if p.Leader < 0 || p.ErrorCode != 0 {
			return fmt.Errorf("partition %d: leader %d error %d", p.Partition, p.Leader, p.ErrorCode)
		}
	}
	return nil
}
