package replication

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
)

// A follower that stops fetching under load (its process frozen with
// SIGSTOP, for longer than replica.lag.time.max.ms but shorter than its
// ZooKeeper session, so it stays registered and only its lag counts)
// drops out of the ISR of the partitions it follows, and the leaders go
// on acknowledging with the two replicas left (min.insync.replicas=2).
// Resumed, it catches up and the leaders take it back into the ISR; once
// the load stops the three replicas of each partition hold the same log,
// byte for byte, and every acknowledged record is read back once.
func TestStalledFollowerCatchesUpAndRejoins(t *testing.T) { testStalledFollower(t, testkit.Samsa) }

// TestStalledFollowerCatchesUpAndRejoinsKafka39 is the reference run
// (requireReference).
func TestStalledFollowerCatchesUpAndRejoinsKafka39(t *testing.T) {
	requireReference(t)
	testStalledFollower(t, testkit.Kafka39)
}

func testStalledFollower(t *testing.T, kind testkit.ClusterKind) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, ctrl := startFaultCluster(t, ctx, testkit.ClusterConfig{Kind: kind,
		// The longest session the test ZooKeeper grants (20 ticks of 500 ms):
		// the freeze must stay well inside it.
		SessionTimeout: 10 * time.Second,
		Properties:     map[string]string{"replica.lag.time.max.ms": "2000"}})
	// Freeze a broker that is not the controller, and write only to the
	// partitions it follows (the one it leads has no leader while it is
	// frozen, and no client could write there).
	var frozen *testkit.ClusterBroker
	for _, b := range c.Brokers() {
		if b.ID() != ctrl {
			frozen = b
			break
		}
	}
	var followed []int32
	for p := range int32(3) {
		if partitionState(t, c, p).Leader != frozen.ID() {
			followed = append(followed, p)
		}
	}
	load := startPartitionLoad(t, ctx, c, followed)
	waitFor(t, ctx, "acknowledgements on the followed partitions", func() bool {
		for _, p := range followed {
			if load.acks(p) < 300 {
				return false
			}
		}
		return true
	})
	pid := frozen.PID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Error(err)
			}
		}
	}
	defer resume()
	t.Logf("froze broker %d (pid %d) with partitions %v under load", frozen.ID(), pid, followed)
	before := map[int32]int{}
	for _, p := range followed {
		before[p] = load.acks(p)
	}
	// Out of the ISR within a few seconds; 7 s leaves 3 s of the session.
	deadline := stopped.Add(7 * time.Second)
	for _, p := range followed {
		for slices.Contains(partitionState(t, c, p).ISR, frozen.ID()) {
			if time.Now().After(deadline) {
				resume()
				t.Fatalf("partition %d: frozen follower %d still in the ISR %v after %v", p, frozen.ID(), partitionState(t, c, p).ISR, time.Since(stopped))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	shrunk := time.Since(stopped)
	// The leaders go on without it.
	for _, p := range followed {
		for load.acks(p) < before[p]+200 {
			if time.Now().After(deadline) {
				resume()
				t.Fatalf("partition %d: no acknowledgements with follower %d out of the ISR (%d since the freeze)", p, frozen.ID(), load.acks(p)-before[p])
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	ids, err := c.RegisteredBrokers()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ids, frozen.ID()) {
		t.Fatalf("broker %d lost its ZooKeeper registration while frozen (registered: %v): the test meant to check lag, not death", frozen.ID(), ids)
	}
	// Stay frozen a little longer, so it falls further behind.
	time.Sleep(time.Until(stopped.Add(6 * time.Second)))
	lag := 0
	for _, p := range followed {
		lag += load.acks(p) - before[p]
	}
	resume()
	t.Logf("broker %d out of the ISRs %v after the freeze, resumed after %v, %d acknowledged records behind", frozen.ID(), shrunk.Round(time.Millisecond), time.Since(stopped).Round(time.Millisecond), lag)
	waitFor(t, ctx, "the resumed follower back in every ISR", func() bool {
		for _, p := range followed {
			if !slices.Contains(partitionState(t, c, p).ISR, frozen.ID()) {
				return false
			}
		}
		return true
	})
	t.Logf("broker %d back in the ISRs %v after the freeze began", frozen.ID(), time.Since(stopped).Round(time.Millisecond))
	acked := load.finish(t, ctx)
	waitZKISR(t, ctx, c, 3)
	for _, p := range followed {
		n := waitIdenticalLogs(t, c, p)
		t.Logf("partition %d: %d batches (%d records acknowledged), the same on every replica", p, n, load.acks(p))
	}
	readBackExactlyOnce(t, ctx, c, acked)
	t.Logf("%d records acknowledged around a follower's freeze, all read back once", len(acked))
}
