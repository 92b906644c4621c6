package groups

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Static membership (KIP-345): a member with a group.instance.id that
// restarts (closes without LeaveGroup, comes back with the same instance
// id) takes its old assignment back without a rebalance: the other
// member keeps its partitions and is never revoked.
func TestStaticMemberRestartsWithoutRebalance(t *testing.T) {
	b := sharedBroker(t)
	topic, group := name(t, "t"), name(t, "g")
	createTopic(t, b.Addr(), topic, 4)
	adm := admin(t, b.Addr())

	var revokedFromOther atomic.Int32
	static := func(instance string, onRevoked func()) *kgo.Client {
		opts := []kgo.Opt{kgo.SeedBrokers(b.Addr()), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
			kgo.InstanceID(instance), kgo.SessionTimeout(20 * time.Second), kgo.HeartbeatInterval(200 * time.Millisecond), kgo.Balancers(kgo.RangeBalancer()),
			kgo.DisableAutoCommit()}
		if onRevoked != nil {
			opts = append(opts, kgo.OnPartitionsRevoked(func(context.Context, *kgo.Client, map[string][]int32) { onRevoked() }))
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for !cl.PollFetches(context.Background()).IsClientClosed() {
			}
		}()
		return cl
	}
	other := static("other", func() { revokedFromOther.Add(1) })
	t.Cleanup(other.Close)
	first := static("restarting", nil)
	g := waitGroup(t, adm, group, 20*time.Second, stableWith(topic, 2, 4))
	before := memberOf(g, "restarting")
	otherID := memberOf(g, "other")
	revokedBefore := revokedFromOther.Load()

	// franz-go sends no LeaveGroup for a static member on Close.
	first.Close()
	second := static("restarting", nil)
	t.Cleanup(second.Close)
	g = waitGroup(t, adm, group, 20*time.Second, func(g kadm.DescribedGroup) bool {
		id := memberOf(g, "restarting")
		return stableWith(topic, 2, 4)(g) && id != "" && id != before
	})
	if memberOf(g, "other") != otherID {
		t.Errorf("the other member's id changed from %s to %s", otherID, memberOf(g, "other"))
	}
	// A rebalance would reach the other member through its next heartbeat
	// (every 200 ms): give it a few before concluding there was none.
	time.Sleep(time.Second)
	if n := revokedFromOther.Load(); n != revokedBefore {
		t.Errorf("the other member had partitions revoked %d time(s) while the static member restarted", n-revokedBefore)
	}
}

// memberOf returns the member id of the member with this instance id.
func memberOf(g kadm.DescribedGroup, instance string) string {
	for _, m := range g.Members {
		if m.InstanceID != nil && *m.InstanceID == instance {
			return m.MemberID
		}
	}
	return ""
}
