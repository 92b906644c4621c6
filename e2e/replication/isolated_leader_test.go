package replication

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
)

// A leader cut off from everything but its clients: from the other
// brokers and from ZooKeeper. Its session expires, so the controller
// elects another leader from the rest of the ISR; the old one, still
// believing it leads (nobody can tell it otherwise), takes writes it can
// never acknowledge, since its followers now fetch from the new leader.
// No write is acknowledged between the cut and the new leader's election;
// the new leader then acknowledges them. Healed, the old leader learns
// that its session is gone, registers again, follows, truncates the tail
// only it had, and rejoins the ISR: the replicas end byte for byte the
// same and every acknowledged record is read back exactly once.
func TestIsolatedLeaderIsReplaced(t *testing.T) { testIsolatedLeader(t, testkit.Samsa) }

// TestIsolatedLeaderIsReplacedKafka39 is the reference run
// (requireReference).
func TestIsolatedLeaderIsReplacedKafka39(t *testing.T) {
	requireReference(t)
	testIsolatedLeader(t, testkit.Kafka39)
}

func testIsolatedLeader(t *testing.T, kind testkit.ClusterKind) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, ctrl := startFaultCluster(t, ctx, testkit.ClusterConfig{Kind: kind, BrokerLinks: true,
		Properties: map[string]string{"replica.lag.time.max.ms": strconv.FormatInt(lagMax.Milliseconds(), 10)}})
	// A partition whose leader is not the controller: the controller has
	// to stay reachable to elect a new leader.
	p, old := int32(-1), int32(-1)
	for q := range int32(3) {
		if l := partitionState(t, c, q).Leader; l != ctrl {
			p, old = q, l
			break
		}
	}
	if p < 0 {
		t.Fatalf("the controller (broker %d) leads every partition", ctrl)
	}
	load := startPartitionLoad(t, ctx, c, []int32{p})
	waitFor(t, ctx, "acknowledgements", func() bool { return load.acks(p) > 500 })

	b := c.BrokerByID(old)
	mark := b.OutputMark()
	before := partitionState(t, c, p)
	if err := c.CutFromBrokers(old); err != nil {
		t.Fatal(err)
	}
	b.CutZooKeeper()
	healed := false
	heal := func() {
		if !healed {
			healed = true
			b.HealZooKeeper()
			if err := c.HealBrokers(old); err != nil {
				t.Error(err)
			}
		}
	}
	defer heal()
	t.Logf("isolated broker %d (leader of partition %d at epoch %d) from the brokers and ZooKeeper", old, p, before.LeaderEpoch)
	frozen := settledAcks(t, load, p, old)
	st := before
	waitFor(t, ctx, "a new leader elected by the controller", func() bool {
		if n := load.acks(p); n != frozen {
			heal()
			t.Fatalf("partition %d: %d records acknowledged with the leader isolated and no other elected", p, n-frozen)
		}
		st = partitionState(t, c, p)
		return st.Leader != old && st.Leader >= 0
	})
	t.Logf("broker %d leads partition %d at epoch %d (ISR %v)", st.Leader, p, st.LeaderEpoch, st.ISR)
	if slices.Contains(st.ISR, old) {
		t.Errorf("partition %d: the isolated broker %d is still in the ISR %v the controller wrote at the election", p, old, st.ISR)
	}
	waitFor(t, ctx, "acknowledgements from the new leader", func() bool { return load.acks(p) > frozen+500 })
	heal()
	waitFor(t, ctx, "the old leader back in the ISR", func() bool {
		return slices.Contains(partitionState(t, c, p).ISR, old)
	})
	acked := load.finish(t, ctx)
	waitZKISR(t, ctx, c, 3)
	n := waitIdenticalLogs(t, c, p)
	// What the old leader took alone after the cut it had to give up.
	truncated := strings.Contains(b.OutputSince(mark), "truncated a tail that diverged") || // samsa
		strings.Contains(b.OutputSince(mark), "Truncating partition "+topic+"-"+strconv.Itoa(int(p))) // Kafka
	t.Logf("partition %d: %d batches, the same on every replica (the old leader truncated a tail of its own: %v)", p, n, truncated)
	readBackExactlyOnce(t, ctx, c, acked)
	t.Logf("%d records acknowledged around the isolation, all read back once", len(acked))
}
