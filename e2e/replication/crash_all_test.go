package replication

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// All three brokers killed with SIGKILL at the same moment, with
// produces in flight: after they restart (each recovering its logs,
// electing leaders from what ZooKeeper says, followers truncating to
// their new leaders) every acknowledged record is there. SIGKILL leaves
// the page cache, so this checks the protocol across a whole-cluster
// crash, not the fsyncs; lost unsynced writes are the replication
// simulation's and segment's crash tests' to check.
func TestKillEveryBrokerAtOnce(t *testing.T) {
	c := testkit.StartCluster(t, testkit.ClusterConfig{Kind: testkit.Samsa, Brokers: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	createDurableTopic(t, ctx, c)
	prod := testkit.NewClient(t, kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	var mu sync.Mutex
	want := map[string]bool{}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(want)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	// Produce blocks while the client's buffer is full, which it stays
	// once every broker is dead: cancelling this context frees it.
	pctx, pcancel := context.WithCancel(ctx)
	defer pcancel()
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprintf("a%07d", i)
			prod.Produce(pctx, &kgo.Record{Value: []byte(v)}, func(_ *kgo.Record, err error) {
				if err == nil {
					mu.Lock()
					want[v] = true
					mu.Unlock()
				}
			})
		}
	}()
	// Mid-stream, with produces in flight: every broker at once.
	waitFor(t, ctx, "acknowledgements before the power cut", func() bool { return count() > 20000 })
	for _, b := range c.Brokers() {
		b.Kill()
	}
	close(stop)
	pcancel()
	<-done
	prod.Close() // fails what is still in flight; nothing more is acknowledged
	mu.Lock()
	want = maps.Clone(want)
	mu.Unlock()
	for _, b := range c.Brokers() {
		if err := b.Start(); err != nil {
			t.Fatalf("restart broker %d: %v", b.ID(), err)
		}
	}
	if _, err := c.WaitForBrokers(3); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(testkit.NewClient(t, kgo.SeedBrokers(c.Addrs()...)))
	waitISR(t, ctx, adm, 3)
	cons := testkit.NewClient(t, kgo.SeedBrokers(c.Addrs()...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]bool{}
	idle := time.Now()
	for time.Since(idle) < 10*time.Second && ctx.Err() == nil {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		fs := cons.PollFetches(pctx)
		pcancel()
		if fs.NumRecords() > 0 {
			idle = time.Now()
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
	lost := 0
	for v := range want {
		if !seen[v] {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged records lost when every broker was killed at once", lost, len(want))
	}
	if len(want) == 0 {
		t.Fatal("nothing was acknowledged before the brokers were killed: the test proved nothing")
	}
	t.Logf("%d records acknowledged before the power cut, all there after it", len(want))
}
