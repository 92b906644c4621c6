package cluster

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// consumerGroupMembers waits until ConsumerGroupDescribe shows the KIP-848
// group reconciled with n members owning all partitions of topic, and
// returns its members' ids and epochs.
func consumerGroupMembers(t *testing.T, adm *kadm.Client, group, topic string, n, partitions int, d time.Duration) map[string]int32 {
	t.Helper()
	end := time.Now().Add(d)
	var last string
	for time.Now().Before(end) {
		ds, err := adm.DescribeConsumerGroups(deadline(t, 10*time.Second), group)
		if err == nil && testkit.ConsumerGroupReconciled(ds[group], topic, n, partitions) {
			out := map[string]int32{}
			for _, m := range ds[group].Members {
				out[m.MemberID] = m.MemberEpoch
			}
			return out
		}
		last = fmt.Sprintf("%+v %v", ds[group], err)
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("consumer group %s not reconciled with %d members within %v: %s", group, n, d, last)
	return nil
}

// TestConsumerGroupCoordinatorKill: a KIP-848 group (franz-go members on
// the consumer protocol) consumes an RF 3 topic and commits; the broker
// coordinating it is killed with SIGKILL; the new leader of the group's
// __consumer_offsets partition loads the group from its records, so the
// members carry on with the same member ids (none had to rejoin as a new
// member), and records produced after the kill are consumed exactly once.
func TestConsumerGroupCoordinatorKill(t *testing.T) {
	c, topic, group, adm, seen := threeMembersOnOwnCluster(t, kgo.ServerSideBalancer(), kgo.Balancers(kgo.StickyBalancer()))
	membersBefore := consumerGroupMembers(t, adm, group, topic, 3, 6, 60*time.Second)

	k := killCoordinatorAfterCommits(t, c, adm, group, topic, seen)
	t.Logf("coordinator %d killed; %d coordinates %s after %v", k.coord, k.next, group, k.took.Round(time.Millisecond))
	adm = admin(t, liveAddrs(c))
	if !replicationWorks(t, adm, topic, k.coord, k.ledBefore, k.ends) {
		t.Skipf("the group's records led by the killed broker %d are not on the new leader: followers do not replicate (issue #17)", k.coord)
	}
	membersAfter := consumerGroupMembers(t, adm, group, topic, 3, 6, 60*time.Second)
	for id := range membersBefore {
		if _, ok := membersAfter[id]; !ok {
			t.Errorf("member %s is gone after the coordinator moved (before %v, after %v): the group was not loaded from __consumer_offsets",
				id, slices.Sorted(maps.Keys(membersBefore)), slices.Sorted(maps.Keys(membersAfter)))
		}
	}

	after := values("after", 300)
	produceValues(t, liveAddrs(c), topic, after)
	seen.waitAll(t, after, 60*time.Second)
	seen.exactlyOnce(t, "committed before the kill", k.before)
	seen.exactlyOnce(t, "produced after the kill", after)
}
