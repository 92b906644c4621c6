package replication

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

const topic = "durable"

// Three brokers, RF 3, min.insync.replicas=2, an idempotent acks=all
// producer under load; the leader of partition 0 is killed with SIGKILL
// and restarted, five times. Every acknowledged record is read back
// exactly once afterwards, and every replica is back in the ISR.
func TestKillTheLeaderFiveTimesUnderLoad(t *testing.T) {
	c := testkit.StartCluster(t, testkit.ClusterConfig{Kind: testkit.Samsa, Brokers: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	adm := createDurableTopic(t, ctx, c)

	prod := testkit.NewClient(t, kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordRetries(1<<30), kgo.RecordDeliveryTimeout(5*time.Minute), kgo.ProducerLinger(0))
	var mu sync.Mutex
	acked := map[string]bool{}
	var failed []error
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprintf("r%07d", i)
			prod.Produce(ctx, &kgo.Record{Value: []byte(v)}, func(_ *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failed = append(failed, err)
					return
				}
				acked[v] = true
			})
			if i%200 == 199 {
				if err := prod.Flush(ctx); err != nil {
					return
				}
			}
		}
	}()
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	waitFor(t, ctx, "the first acknowledgements", func() bool { return count() > 2000 })
	for round := range 5 {
		leader := leaderOf(t, ctx, adm, 0)
		before := count()
		b := c.BrokerByID(leader)
		b.Kill()
		t.Logf("round %d: killed broker %d (leader of partition 0) with %d records acknowledged", round+1, leader, before)
		waitFor(t, ctx, "acknowledgements with the leader dead", func() bool { return count() > before+1000 })
		if err := b.Start(); err != nil {
			t.Fatalf("restart broker %d: %v", leader, err)
		}
		waitISR(t, ctx, adm, 3)
	}
	close(stop)
	<-done
	if err := prod.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	mu.Lock()
	if len(failed) > 0 {
		t.Errorf("%d produces failed; first: %v", len(failed), failed[0])
	}
	want := len(acked)
	mu.Unlock()

	readBackExactlyOnce(t, ctx, c, acked) // no more callbacks: every record was flushed
	t.Logf("%d records acknowledged through five leader kills, all read back", want)
	waitISR(t, ctx, adm, 3)
}

// createDurableTopic makes the 3-partition RF 3 topic the tests write,
// with min.insync.replicas=2, and waits until every replica is in sync;
// it returns the admin client it used.
func createDurableTopic(t *testing.T, ctx context.Context, c *testkit.Cluster) *kadm.Client {
	t.Helper()
	adm := kadm.NewClient(testkit.NewClient(t, kgo.SeedBrokers(c.Addrs()...)))
	// A cluster just started may answer INVALID_REPLICATION_FACTOR until
	// the controller's view lists all three brokers: ask again then.
	waitFor(t, ctx, "the controller to see 3 brokers and create the topic", func() bool {
		resp, err := adm.CreateTopic(ctx, 3, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}, topic)
		if err == nil {
			err = resp.Err
		}
		switch {
		case errors.Is(err, kerr.InvalidReplicationFactor):
			return false
		case err != nil:
			t.Fatalf("create: %v", err)
		}
		return true
	})
	waitISR(t, ctx, adm, 3)
	return adm
}

func leaderOf(t *testing.T, ctx context.Context, adm *kadm.Client, p int32) int32 {
	t.Helper()
	var leader int32 = -1
	waitFor(t, ctx, "a leader for partition 0", func() bool {
		td, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return false
		}
		pd, ok := td[topic].Partitions[p]
		if !ok || pd.Leader < 0 {
			return false
		}
		leader = pd.Leader
		return true
	})
	return leader
}

// waitISR waits until every partition's ISR has n replicas.
func waitISR(t *testing.T, ctx context.Context, adm *kadm.Client, n int) {
	t.Helper()
	waitFor(t, ctx, fmt.Sprintf("every partition with %d replicas in its ISR", n), func() bool {
		td, err := adm.ListTopics(ctx, topic)
		if err != nil || len(td[topic].Partitions) == 0 {
			return false
		}
		for _, p := range td[topic].Partitions {
			if len(p.ISR) != n || p.Leader < 0 {
				return false
			}
		}
		return true
	})
}

// waitFor polls cond until it holds (a remote view: nothing to wait on).
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
