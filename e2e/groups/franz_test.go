package groups

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Three franz-go members form a group (eager range, and KIP-429
// cooperative-sticky), then consume what is produced after: every record
// exactly once between them, and the committed offsets reach the end.
func TestFranzMembersConsumeExactlyOnce(t *testing.T) {
	b := sharedBroker(t)
	for _, tc := range []struct {
		name     string
		balancer kgo.GroupBalancer
	}{
		{"eager-range", kgo.RangeBalancer()},
		{"cooperative-sticky", kgo.CooperativeStickyBalancer()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topic, group := name(t, "t"), name(t, "g")
			createTopic(t, b.Addr(), topic, 6)
			adm := admin(t, b.Addr())
			c := newTally()
			for range 3 {
				startMember(t, b.Addr(), group, topic, c, kgo.Balancers(tc.balancer))
			}
			g := waitGroup(t, adm, group, 20*time.Second, stableWith(topic, 3, 6))
			if g.Protocol != tc.balancer.ProtocolName() {
				t.Errorf("group chose protocol %q, want %q", g.Protocol, tc.balancer.ProtocolName())
			}
			const n = 600
			produce(t, b.Addr(), topic, 0, n)
			c.waitDistinct(t, n, 20*time.Second)
			c.check(t, n, true)
			for end := time.Now().Add(10 * time.Second); committed(t, adm, group, topic) != n && time.Now().Before(end); {
				time.Sleep(50 * time.Millisecond)
			}
			if got := committed(t, adm, group, topic); got != n {
				t.Errorf("committed offsets add up to %d, want %d", got, n)
			}
		})
	}
}

// Members join and leave while records are produced: nothing is lost,
// and once the last member has caught up and left, the committed offsets
// are the log end offsets and the group is Empty.
func TestFranzMembersJoinAndLeaveUnderLoad(t *testing.T) {
	b := sharedBroker(t)
	topic, group := name(t, "t"), name(t, "g")
	createTopic(t, b.Addr(), topic, 4)
	adm := admin(t, b.Addr())
	c := newTally()

	const batches, per = 10, 100
	produced := make(chan struct{})
	pace := make(chan struct{})
	go func() {
		defer close(produced)
		for i := range batches {
			<-pace
			produce(t, b.Addr(), topic, i*per, per)
		}
	}()
	step := func() { pace <- struct{}{} }

	m1 := startMember(t, b.Addr(), group, topic, c)
	step()
	m2 := startMember(t, b.Addr(), group, topic, c)
	step()
	waitGroup(t, adm, group, 20*time.Second, stableWith(topic, 2, 4))
	step()
	m3 := startMember(t, b.Addr(), group, topic, c)
	step()
	waitGroup(t, adm, group, 20*time.Second, stableWith(topic, 3, 4))
	step()
	m1.close() // leaves: the others take its partitions at once
	step()
	waitGroup(t, adm, group, 20*time.Second, stableWith(topic, 2, 4))
	step()
	m2.close()
	step()
	step()
	step()
	<-produced
	c.waitDistinct(t, batches*per, 30*time.Second)
	dups := c.check(t, batches*per, false)
	t.Logf("%d records consumed twice across the rebalances", dups)
	m3.close()
	if got := committed(t, adm, group, topic); got != batches*per {
		t.Errorf("committed offsets add up to %d, want %d", got, batches*per)
	}
	waitGroup(t, adm, group, 10*time.Second, func(g kadm.DescribedGroup) bool { return g.State == "Empty" })
}
