package sharegroup

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/actors/coordinator"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/actors/routing"
	"github.com/samsa-io/samsa/wire/kerr"
)

// TestStatePartitionFor: a share partition's state goes where Kafka's
// share coordinator puts it, the partition of the key
// "group:topicId:partition" with the topic id as Kafka's Uuid.toString
// writes it (the zero id is 22 A's), and keys spread over every
// partition.
func TestStatePartitionFor(t *testing.T) {
	zero := TopicPartition{Partition: 3}
	if got, want := StatePartitionFor("g", zero, 50), group.PartitionFor("g:AAAAAAAAAAAAAAAAAAAAAA:3", 50); got != want {
		t.Fatalf("StatePartitionFor(g, zero id, 3) = %d, want %d", got, want)
	}
	hit := map[int32]bool{}
	for i := range 500 {
		tp := TopicPartition{Topic: [16]byte{byte(i), byte(i >> 8), 7}, Partition: int32(i % 7)}
		p := StatePartitionFor(fmt.Sprintf("group-%d", i), tp, 6)
		if p < 0 || p >= 6 {
			t.Fatalf("partition %d out of range", p)
		}
		hit[p] = true
	}
	if len(hit) != 6 {
		t.Fatalf("500 keys hit partitions %v of 6", hit)
	}
}

// clusterView is a controller's picture: __consumer_offsets with 6
// partitions led by brokers 1, 2, 3, 1, 2, 3 and topic "data" (id 9...)
// with 3 partitions led by 1, 2, 3 at leader epochs 10, 20, 30.
func clusterView(t *testing.T) *cluster.View {
	t.Helper()
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version, req.ControllerID, req.ControllerEpoch = 7, 1, 1
	for id := int32(1); id <= 3; id++ {
		b := kmsg.NewUpdateMetadataRequestLiveBroker()
		b.ID = id
		req.LiveBrokers = append(req.LiveBrokers, b)
	}
	topic := func(name string, id byte, n int, epoch func(int) int32) {
		ts := kmsg.NewUpdateMetadataRequestTopicState()
		ts.Topic, ts.TopicID = name, [16]byte{id}
		for p := range n {
			s := kmsg.NewUpdateMetadataRequestTopicPartition()
			s.Topic, s.Partition, s.Leader, s.LeaderEpoch = name, int32(p), int32(p%3+1), epoch(p)
			s.Replicas, s.ISR = []int32{1, 2, 3}, []int32{1, 2, 3}
			ts.PartitionStates = append(ts.PartitionStates, s)
		}
		req.TopicStates = append(req.TopicStates, ts)
	}
	topic(coordinator.OffsetsTopic, 1, 6, func(int) int32 { return 0 })
	topic("data", 9, 3, func(p int) int32 { return int32(10 * (p + 1)) })
	v, code := cluster.Empty("c").Apply(req)
	if code != kerr.None {
		t.Fatal(code)
	}
	return v
}

// brokerActor is the share coordinator of broker me, with the view.
func brokerActor(v *cluster.View, me int32) *coordinatorActor {
	e := &env.Env{Cluster: cluster.NewTable(v), Routes: routing.NewTable()}
	return newActor(e, Config{Cluster: &ClusterLink{Me: me}}).(*coordinatorActor)
}

// TestClusterRouting: membership answers only on the leader of the
// group's __consumer_offsets partition, share partitions only on their
// data partition's leader, and only once loaded at its leader epoch.
func TestClusterRouting(t *testing.T) {
	v := clusterView(t)
	for _, id := range []string{"a", "b", "orders", "g-cluster", "ü"} {
		lead := int32(group.PartitionFor(id, 6)%3 + 1)
		for me := int32(1); me <= 3; me++ {
			want := kerr.NotCoordinator
			if me == lead {
				want = kerr.None
			}
			if got := brokerActor(v, me).coordinates(id); got != want {
				t.Errorf("broker %d, group %q (offsets leader %d): %v, want %v", me, id, lead, got, want)
			}
		}
	}
	if got := brokerActor(cluster.Empty("c"), 1).coordinates("a"); got != kerr.CoordinatorNotAvailable {
		t.Errorf("without __consumer_offsets: %v", got)
	}

	a := brokerActor(v, 2)
	data := [16]byte{9}
	for _, c := range []struct {
		tp    TopicPartition
		epoch int32
		code  kerr.Code
	}{
		{TopicPartition{data, 1}, 20, kerr.None},
		{TopicPartition{data, 0}, 0, kerr.NotLeaderOrFollower},
		{TopicPartition{data, 2}, 0, kerr.NotLeaderOrFollower},
		{TopicPartition{data, 3}, 0, kerr.UnknownTopicOrPartition},
		{TopicPartition{[16]byte{5}, 0}, 0, kerr.UnknownTopicID},
	} {
		epoch, code := a.leaderEpoch(c.tp)
		if code != c.code || (code == kerr.None && epoch != c.epoch) {
			t.Errorf("leaderEpoch(%v) = %d, %v; want %d, %v", c.tp, epoch, code, c.epoch, c.code)
		}
	}
	// Led here but not loaded, then loaded at an older epoch: not served.
	k := partKey{"g", TopicPartition{data, 1}}
	if got := a.servable(k.group, k.tp); got != kerr.NotLeaderOrFollower {
		t.Errorf("before its state is loaded: %v", got)
	}
	a.cl.epochs[k] = 19
	if a.loadedAt(k, 20) {
		t.Error("loaded at epoch 19 counts for 20")
	}
	a.cl.epochs[k] = 20
	if !a.loadedAt(k, 20) {
		t.Error("loaded at epoch 20 does not count")
	}
	// A failed load answers NOT_LEADER_OR_FOLLOWER once.
	a.cl.failed[k] = true
	if got := a.servable(k.group, k.tp); got != kerr.NotLeaderOrFollower || a.cl.failed[k] {
		t.Errorf("after a failed load: %v, failed still marked %v", got, a.cl.failed[k])
	}
}

// TestClusterListGroups: a broker lists the share groups it coordinates
// only; one whose coordinator moved is left out (and forgotten on the
// tick).
func TestClusterListGroups(t *testing.T) {
	v := clusterView(t)
	var mine, theirs string
	for i := 0; mine == "" || theirs == ""; i++ {
		id := fmt.Sprintf("share-%d", i)
		if group.PartitionFor(id, 6)%3+1 == 1 {
			mine = id
		} else {
			theirs = id
		}
	}
	a := brokerActor(v, 1)
	a.groups[mine], a.groups[theirs] = NewGroup(mine), NewGroup(theirs)
	req := kmsg.NewPtrListGroupsRequest()
	req.Version = 5
	resp := a.listGroups(req)
	if len(resp.Groups) != 1 || resp.Groups[0].Group != mine || resp.Groups[0].GroupType != "share" || resp.Groups[0].GroupState != "Empty" {
		t.Fatalf("listed %+v, want only %s (share, Empty)", resp.Groups, mine)
	}
	a.onClusterTick(time.Now())
	if a.groups[theirs] != nil || a.groups[mine] == nil {
		t.Fatalf("after the tick: groups %v", a.groups)
	}
}
