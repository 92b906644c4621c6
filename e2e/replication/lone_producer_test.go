package replication

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// A lone acks=all producer writing one record at a time is acknowledged
// as soon as the followers' fsyncs are done, never after a parked fetch's
// max wait: a follower fetches again while its fsync runs, and that
// fetch, parked at the leader, could not tell it the fsync completed.
// The followers' max wait is raised to 20 s here so that such a stall
// would be unmistakable beside an acknowledgement's usual milliseconds.
func TestLoneProducerIsNotHeldByParkedFetches(t *testing.T) {
	const maxWait = 20 * time.Second
	c := testkit.StartCluster(t, testkit.ClusterConfig{Kind: testkit.Samsa, Brokers: 3, Properties: map[string]string{
		"replica.fetch.wait.max.ms": fmt.Sprint(maxWait.Milliseconds()), "replica.lag.time.max.ms": "120000"}})
	ctx := t.Context()
	createDurableTopic(t, ctx, c)
	prod := testkit.NewClient(t, kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	// The first records wait for the producer id, the metadata, and the
	// followers' first fetches of the new topic (a leader that has not
	// had its LeaderAndIsr yet sends them back off for a second).
	for p := range int32(3) {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("first"), Partition: p}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var slowest time.Duration
	for i := range 20 {
		// Every partition in turn: each leader's followers have just
		// parked their fetches after the previous record there.
		r := &kgo.Record{Value: fmt.Appendf(nil, "r%02d", i), Partition: int32(i % 3)}
		start := time.Now()
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		slowest = max(slowest, took)
		if took >= maxWait/2 {
			t.Fatalf("record %d took %v to be acknowledged: it waited for a parked fetch (max wait %v)", i, took, maxWait)
		}
	}
	t.Logf("slowest acknowledgement of 20: %v", slowest)
}
