package groups

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// A member consumes part of a topic and commits exactly what it
// consumed; the broker restarts (the coordinator reloads
// __consumer_offsets); a new member of the group starts at the committed
// offsets: together the two see every record exactly once.
func TestCommitRestartResume(t *testing.T) {
	b := testkit.StartBroker(t, testkit.BrokerConfig{Args: fastGroups})
	topic, group := name(t, "t"), name(t, "g")
	createTopic(t, b.Addr(), topic, 3)
	const n = 300
	produce(t, b.Addr(), topic, 0, n)

	seen := map[string]int{}
	consume := func(limit int) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
			kgo.DisableAutoCommit(), kgo.RetryTimeout(30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		end := time.Now().Add(20 * time.Second)
		got := 0
		for got < limit && time.Now().Before(end) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			fs := cl.PollRecords(ctx, limit-got)
			cancel()
			var rs []*kgo.Record
			fs.EachRecord(func(r *kgo.Record) { rs = append(rs, r) })
			for _, r := range rs {
				seen[string(r.Value)]++
			}
			got += len(rs)
			if len(rs) > 0 {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err := cl.CommitRecords(ctx, rs...)
				cancel()
				if err != nil {
					t.Fatalf("commit: %v", err)
				}
			}
		}
		if got < limit {
			t.Fatalf("consumed %d of %d records", got, limit)
		}
	}
	consume(n / 3)
	before := committed(t, admin(t, b.Addr()), group, topic)
	if before != n/3 {
		t.Fatalf("committed %d before the restart, want %d", before, n/3)
	}
	if err := b.Restart(); err != nil {
		t.Fatal(err)
	}
	if after := committed(t, admin(t, b.Addr()), group, topic); after != before {
		t.Fatalf("committed %d after the restart, %d before", after, before)
	}
	consume(n - n/3)
	for i := range n {
		if c := seen[strconv.Itoa(i)]; c != 1 {
			t.Errorf("record %d consumed %d times", i, c)
		}
	}
	if len(seen) != n {
		t.Errorf("%d distinct records, want %d", len(seen), n)
	}
}

// Members keep consuming across a broker restart: the coordinator
// reloads the group, the members find it again (rejoining if their
// generation is gone) and every record produced before and after is
// consumed, with the commits reaching the end.
func TestMembersRideThroughRestart(t *testing.T) {
	b := testkit.StartBroker(t, testkit.BrokerConfig{Args: fastGroups})
	topic, group := name(t, "t"), name(t, "g")
	createTopic(t, b.Addr(), topic, 4)
	c := newTally()
	for range 2 {
		startMember(t, b.Addr(), group, topic, c)
	}
	waitGroup(t, admin(t, b.Addr()), group, 20*time.Second, stableWith(topic, 2, 4))
	produce(t, b.Addr(), topic, 0, 200)
	c.waitDistinct(t, 200, 20*time.Second)
	if err := b.Restart(); err != nil {
		t.Fatal(err)
	}
	produce(t, b.Addr(), topic, 200, 200)
	c.waitDistinct(t, 400, 60*time.Second)
	dups := c.check(t, 400, false)
	t.Logf("%d records consumed twice across the restart", dups)
	adm := admin(t, b.Addr())
	for end := time.Now().Add(20 * time.Second); committed(t, adm, group, topic) != 400 && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
	}
	if got := committed(t, adm, group, topic); got != 400 {
		t.Errorf("committed %d after the restart, want 400", got)
	}
}
