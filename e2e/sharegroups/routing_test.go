package sharegroups

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// TestClusterRouting asks each of three samsa brokers directly, with
// franz-go's raw requests, what Kafka 4.1's share consumer asks: every
// broker advertises the share APIs; only the group's coordinator (the
// broker FindCoordinator names) takes ShareGroupHeartbeat and
// ShareGroupDescribe and lists the group, the others answer
// NOT_COORDINATOR; ShareFetch serves a partition on its leader only and
// answers NOT_LEADER_OR_FOLLOWER for it elsewhere.
func TestClusterRouting(t *testing.T) {
	c := shareCluster(t)
	const topic, group = "share-route", "g-route"
	cl := testkit.NewClient(t, kgo.SeedBrokers(c.Addrs()...))
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 3, 3, nil, topic); err != nil {
		t.Fatal(err)
	}
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	topicID := md.Topics[topic].ID
	coord := findCoordinator(ctx, t, cl, group)

	for _, b := range c.Brokers() {
		id := b.ID()
		direct := cl.Broker(int(id))
		avReq := kmsg.NewPtrApiVersionsRequest()
		avReq.ClientSoftwareName, avReq.ClientSoftwareVersion = "samsa-e2e-sharegroups", "1"
		av, err := avReq.RequestWith(ctx, direct)
		if err != nil || av.ErrorCode != 0 {
			t.Fatalf("broker %d: ApiVersions %v %+v", id, err, av)
		}
		for _, key := range []int16{76, 77, 78, 79, 90, 91, 92} {
			if !slices.ContainsFunc(av.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool { return k.ApiKey == key }) {
				t.Errorf("broker %d does not advertise API %d", id, key)
			}
		}
		if id == coord {
			continue
		}
		hb := kmsg.NewPtrShareGroupHeartbeatRequest()
		hb.Version, hb.GroupID, hb.MemberID, hb.SubscribedTopicNames = 1, group, "m1", []string{topic}
		resp, err := hb.RequestWith(ctx, direct)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != kerr.NotCoordinator.Code {
			t.Errorf("broker %d (not the coordinator %d) answered a heartbeat with %v", id, coord, kerr.ErrorForCode(resp.ErrorCode))
		}
	}
	hb := kmsg.NewPtrShareGroupHeartbeatRequest()
	hb.Version, hb.GroupID, hb.MemberID, hb.SubscribedTopicNames = 1, group, "m1", []string{topic}
	joined, err := hb.RequestWith(ctx, cl.Broker(int(coord)))
	if err != nil || joined.ErrorCode != 0 || joined.Assignment == nil {
		t.Fatalf("the coordinator %d answered the join with %v, %+v", coord, err, joined)
	}

	for _, b := range c.Brokers() {
		id := b.ID()
		direct := cl.Broker(int(id))
		// Listed and described by the coordinator only.
		lg := kmsg.NewPtrListGroupsRequest()
		lg.Version, lg.TypesFilter = 5, []string{"share"}
		listed, err := lg.RequestWith(ctx, direct)
		if err != nil {
			t.Fatal(err)
		}
		has := slices.ContainsFunc(listed.Groups, func(g kmsg.ListGroupsResponseGroup) bool {
			return g.Group == group && g.GroupType == "share" && g.GroupState == "Stable"
		})
		if has != (id == coord) {
			t.Errorf("broker %d (coordinator %d) lists %+v", id, coord, listed.Groups)
		}
		d := kmsg.NewPtrShareGroupDescribeRequest()
		d.Version, d.GroupIDs = 1, []string{group}
		described, err := d.RequestWith(ctx, direct)
		if err != nil || len(described.Groups) != 1 {
			t.Fatalf("broker %d: ShareGroupDescribe %v %+v", id, err, described)
		}
		want := kerr.NotCoordinator.Code
		if id == coord {
			want = 0
		}
		if g := described.Groups[0]; g.ErrorCode != want || (want == 0 && len(g.Members) != 1) {
			t.Errorf("broker %d (coordinator %d) described %+v", id, coord, g)
		}

		// ShareFetch of every partition: served where it is led.
		sf := kmsg.NewPtrShareFetchRequest()
		sf.Version, sf.GroupID, sf.MemberID = 1, kmsg.StringPtr(group), kmsg.StringPtr("m1")
		sf.MaxWaitMillis, sf.MinBytes, sf.MaxBytes, sf.MaxRecords, sf.BatchSize = 0, 1, 1<<20, 100, 100
		st := kmsg.NewShareFetchRequestTopic()
		st.TopicID = topicID
		for p := range int32(3) {
			sp := kmsg.NewShareFetchRequestTopicPartition()
			sp.Partition, sp.PartitionMaxBytes = p, 1<<20
			st.Partitions = append(st.Partitions, sp)
		}
		sf.Topics = append(sf.Topics, st)
		fetched, err := sf.RequestWith(ctx, direct)
		if err != nil || fetched.ErrorCode != 0 {
			t.Fatalf("broker %d: ShareFetch %v %+v", id, err, fetched)
		}
		codes := map[int32]int16{}
		for _, rt := range fetched.Topics {
			for _, rp := range rt.Partitions {
				codes[rp.Partition] = rp.ErrorCode
			}
		}
		for p, info := range md.Topics[topic].Partitions {
			// A led partition with nothing to deliver is left out.
			want := kerr.NotLeaderForPartition.Code
			if info.Leader == id {
				want = 0
			}
			if codes[p] != want {
				t.Errorf("broker %d, partition %d (leader %d): code %v, want %v", id, p, info.Leader, kerr.ErrorForCode(codes[p]), kerr.ErrorForCode(want))
			}
		}
	}
}

// findCoordinator asks FindCoordinator until it names group's coordinator
// (the first answers are COORDINATOR_NOT_AVAILABLE while
// __consumer_offsets is made).
func findCoordinator(ctx context.Context, t *testing.T, cl *kgo.Client, group string) int32 {
	t.Helper()
	for {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKeys = []string{group}
		fr, err := fc.RequestWith(ctx, cl)
		switch {
		case err != nil:
			t.Fatalf("FindCoordinator: %v", err)
		case len(fr.Coordinators) != 1:
			t.Fatalf("FindCoordinator answered %+v", fr)
		case fr.Coordinators[0].ErrorCode == 0:
			return fr.Coordinators[0].NodeID
		case fr.Coordinators[0].ErrorCode != kerr.CoordinatorNotAvailable.Code:
			t.Fatalf("FindCoordinator: %v", kerr.ErrorForCode(fr.Coordinators[0].ErrorCode))
		}
		select {
		case <-ctx.Done():
			t.Fatal("FindCoordinator: no coordinator before the deadline")
		case <-time.After(100 * time.Millisecond):
		}
	}
}
