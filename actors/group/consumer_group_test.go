package group

import (
	"testing"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func newConsumerHarness(t *testing.T) *harness {
	h := newHarness(t)
	h.topics = consumerTopics()
	return h
}

func newCClient(id string, topics ...string) *cclient {
	return &cclient{id: id, topics: topics, owned: partitions{}}
}

// A second member gets partitions only once the first has given them
// up: first the first member's assignment shrinks at its old epoch, then,
// when its heartbeat shows it owns no more than that, it moves to the new
// epoch and the second member gets what was released.
func TestConsumerIncrementalReconciliation(t *testing.T) {
	h := newConsumerHarness(t)
	a, b := newCClient("a", "a"), newCClient("b", "a")
	h.cgHeartbeat("g", a, 1)
	if a.epoch != 1 || a.owned.count() != 6 {
		t.Fatalf("a alone: epoch %d owns %d", a.epoch, a.owned.count())
	}
	h.cgHeartbeat("g", b, 1)
	if b.epoch != 2 || b.owned.count() != 0 {
		t.Fatalf("b joined: epoch %d owns %d (a still holds everything)", b.epoch, b.owned.count())
	}
	if s := h.c.Group("g").cg.stateName(); s != "Reconciling" {
		t.Fatalf("state %s, want Reconciling", s)
	}
	h.cgHeartbeat("g", a, 1) // a is told to keep 3
	if a.epoch != 1 || a.owned.count() != 3 {
		t.Fatalf("a revoking: epoch %d owns %d", a.epoch, a.owned.count())
	}
	h.cgHeartbeat("g", b, 1)
	if b.owned.count() != 0 {
		t.Fatalf("b got %v before a released", b.owned)
	}
	h.cgHeartbeat("g", a, 1) // reports it owns 3: revocation done
	if a.epoch != 2 {
		t.Fatalf("a after revoking: epoch %d", a.epoch)
	}
	h.cgHeartbeat("g", b, 1)
	if b.owned.count() != 3 || overlaps(a.owned, b.owned) {
		t.Fatalf("b after release: %v (a %v)", b.owned, a.owned)
	}
	if s := h.c.Group("g").cg.stateName(); s != "Stable" {
		t.Fatalf("state %s, want Stable", s)
	}
}

func (h *harness) commit848(group, member string, epoch int32) kerr.Code {
	h.t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 9
	req.Group, req.MemberID, req.Generation = group, member, epoch
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "a", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 5, LeaderEpoch: -1}}}}
	r := h.reply(h.send(req, "client")).(*kmsg.OffsetCommitResponse)
	return kerr.Code(r.Topics[0].Partitions[0].ErrorCode)
}

func (h *harness) fetch848(group string, member *string, epoch int32) kerr.Code {
	h.t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 9
	req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: group, MemberID: member, MemberEpoch: epoch}}
	r := h.reply(h.send(req, "client")).(*kmsg.OffsetFetchResponse)
	return kerr.Code(r.Groups[0].ErrorCode)
}

// OffsetCommit v9 and OffsetFetch v9 carry the member epoch: only the
// member's current epoch is accepted (STALE_MEMBER_EPOCH otherwise); a
// commit without a member is allowed only once the group has none.
func TestConsumerOffsetsWithMemberEpochs(t *testing.T) {
	h := newConsumerHarness(t)
	a := newCClient("a", "a")
	h.cgHeartbeat("g", a, 1)
	for _, c := range []struct {
		member string
		epoch  int32
		want   kerr.Code
	}{
		{"a", a.epoch, kerr.None},
		{"a", a.epoch - 1, kerr.StaleMemberEpoch},
		{"a", a.epoch + 1, kerr.StaleMemberEpoch},
		{"nobody", 1, kerr.UnknownMemberID},
		{"", -1, kerr.UnknownMemberID},
	} {
		if got := h.commit848("g", c.member, c.epoch); got != c.want {
			t.Errorf("commit as %q epoch %d: %v, want %v", c.member, c.epoch, got, c.want)
		}
	}
	if got := h.fetch848("g", strPtr("a"), a.epoch+1); got != kerr.StaleMemberEpoch {
		t.Errorf("fetch with a wrong epoch: %v", got)
	}
	if got := h.fetch848("g", strPtr("a"), a.epoch); got != kerr.None {
		t.Errorf("fetch: %v", got)
	}
	if got := h.fetch848("g", nil, -1); got != kerr.None {
		t.Errorf("admin fetch: %v", got)
	}
	if h.fetched("g", "a", 0) != 5 {
		t.Errorf("committed offset not visible")
	}
	h.cgLeave("g", a, leaveEpoch)
	if got := h.commit848("g", "", -1); got != kerr.None {
		t.Errorf("simple commit to an empty consumer group: %v", got)
	}
}

// A static member leaving with epoch -2 keeps its partitions; the same
// instance coming back under a new member id takes them over at the same
// epoch, without moving anyone else. While the old one still holds the
// instance id, a new one is UNRELEASED_INSTANCE_ID.
func TestConsumerStaticMembership(t *testing.T) {
	h := newConsumerHarness(t)
	a := &cclient{id: "a1", instance: strPtr("ia"), topics: []string{"a"}, owned: partitions{}}
	b := newCClient("b", "a")
	h.cgHeartbeat("g", a, 1)
	h.cgHeartbeat("g", b, 1)
	for range 3 {
		h.cgHeartbeat("g", a, 1)
		h.cgHeartbeat("g", b, 1)
	}
	owned, epoch := a.owned.clone(), a.epoch
	groupEpoch := h.c.Group("g").cg.epoch

	twin := &cclient{id: "a2", instance: strPtr("ia"), topics: []string{"a"}, owned: partitions{}}
	h.cgHeartbeat("g", twin, 1)
	if twin.joined {
		t.Fatal("a second instance joined while the first holds the id")
	}
	h.cgLeave("g", a, staticLeaveEpoch)
	h.cgHeartbeat("g", twin, 1)
	if !twin.joined || !twin.owned.equal(owned) || twin.epoch < epoch {
		t.Fatalf("the returning instance: epoch %d owns %v, want %v at %d", twin.epoch, twin.owned, owned, epoch)
	}
	bOwned := b.owned.clone()
	h.cgHeartbeat("g", b, 1)
	if !b.owned.equal(bOwned) {
		t.Errorf("the other member's partitions moved: %v -> %v", bOwned, b.owned)
	}
	if g := h.c.Group("g").cg; g.members["a1"] != nil || g.static["ia"] != "a2" || g.epoch < groupEpoch {
		t.Errorf("group after the replacement: %+v", g)
	}
}

// A regex subscription follows the topics: one created later that
// matches joins the assignment at the next heartbeat.
func TestConsumerRegexSubscription(t *testing.T) {
	h := newConsumerHarness(t)
	a := &cclient{id: "a", regex: strPtr("c.*"), owned: partitions{}}
	h.cgHeartbeat("g", a, 1)
	if a.owned.count() != 4 {
		t.Fatalf("regex c.*: owns %v", a.owned)
	}
	h.topics["cnew"] = TopicMeta{ID: topicID(9), Partitions: 2}
	h.cgHeartbeat("g", a, 1)
	h.cgHeartbeat("g", a, 1)
	if a.owned.count() != 6 || len(a.owned[topicID(9)]) != 2 {
		t.Fatalf("after cnew appeared: owns %v", a.owned)
	}
	d := h.c.Group("g").ConsumerGroupDescribe(1)
	if d.Members[0].SubscribedTopicRegex == nil || *d.Members[0].SubscribedTopicRegex != "c.*" || len(d.Members[0].Assignment.TopicPartitions) != 2 {
		t.Fatalf("describe: %+v", d.Members[0])
	}
}

// The group's life in the other group APIs: ListGroups v5 types it,
// DeleteGroups refuses it while it has members and deletes it (records
// and offsets) once empty; a classic JoinGroup cannot join it while it
// has members; ConsumerGroupHeartbeat cannot take over a classic group
// with members; size is capped.
func TestConsumerGroupInOtherAPIs(t *testing.T) {
	cfg := testConfig()
	cfg.ConsumerMaxSize = 1
	h := newHarnessWith(t, cfg)
	h.topics = consumerTopics()
	a := newCClient("a", "a")
	h.cgHeartbeat("g", a, 1)

	list := kmsg.NewPtrListGroupsRequest()
	list.Version = 5
	list.TypesFilter = []string{"consumer"}
	lr := h.reply(h.send(list, "c")).(*kmsg.ListGroupsResponse)
	if len(lr.Groups) != 1 || lr.Groups[0].GroupType != "consumer" || lr.Groups[0].GroupState != "Stable" {
		t.Fatalf("list: %+v", lr.Groups)
	}
	list.TypesFilter = []string{"classic"}
	if lr := h.reply(h.send(list, "c")).(*kmsg.ListGroupsResponse); len(lr.Groups) != 0 {
		t.Fatalf("classic list: %+v", lr.Groups)
	}

	full := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	full.Version, full.Group, full.MemberID, full.RebalanceTimeoutMillis = 1, "g", "b", 1000
	full.SubscribedTopicNames = []string{"a"}
	if code := errorCode(h.reply(h.send(full, "c"))); code != kerr.GroupMaxSizeReached {
		t.Fatalf("second member over max size 1: %v", code)
	}

	id := h.join("g", joinOpts{protocols: rangeOn("a")})
	h.wantCode(id, kerr.GroupMaxSizeReached) // a classic member may join, but not past the cap

	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"g"}
	dr := h.reply(h.send(del, "c")).(*kmsg.DeleteGroupsResponse)
	if kerr.Code(dr.Groups[0].ErrorCode) != kerr.NonEmptyGroup {
		t.Fatalf("delete with a member: %v", kerr.Code(dr.Groups[0].ErrorCode))
	}
	h.cgLeave("g", a, leaveEpoch)
	dr = h.reply(h.send(del, "c")).(*kmsg.DeleteGroupsResponse)
	if dr.Groups[0].ErrorCode != 0 {
		t.Fatalf("delete empty: %v", kerr.Code(dr.Groups[0].ErrorCode))
	}
	desc := kmsg.NewPtrConsumerGroupDescribeRequest()
	desc.Groups = []string{"g"}
	if r := h.reply(h.send(desc, "c")).(*kmsg.ConsumerGroupDescribeResponse); kerr.Code(r.Groups[0].ErrorCode) != kerr.GroupIDNotFound {
		t.Fatalf("describe after delete: %+v", r.Groups[0])
	}
	h.restart()
	if g := h.c.Group("g"); g != nil {
		t.Fatalf("deleted group back after replay: %+v", g)
	}

	// A classic group with members is upgraded only within the cap,
	// and only when its members' subscriptions and assignments are the
	// consumer protocol's (these are opaque bytes).
	h.stableGroup("classic", 1)
	full.Group, full.MemberID = "classic", "x"
	if code := errorCode(h.reply(h.send(full, "c"))); code != kerr.GroupMaxSizeReached {
		t.Fatalf("heartbeat to a full classic group: %v", code)
	}
	h2 := newConsumerHarness(t)
	h2.stableGroup("classic", 1)
	if code := errorCode(h2.reply(h2.send(full, "c"))); code != kerr.GroupIDNotFound {
		t.Fatalf("heartbeat to a classic group with opaque assignments: %v", code)
	}
}

// A member that does not give up its partitions within its rebalance
// timeout is fenced, and its partitions go to the others.
func TestConsumerRevocationTimeout(t *testing.T) {
	h := newConsumerHarness(t)
	a, b := newCClient("a", "a"), newCClient("b", "a")
	h.cgHeartbeat("g", a, 1)
	h.cgHeartbeat("g", b, 1)
	h.cgHeartbeat("g", a, 1) // told to revoke; it never reports it did
	for range 4 {
		h.advance(10 * time.Second)
		h.cgHeartbeat("g", b, 1)
	}
	g := h.c.Group("g").cg
	if g.members["a"] != nil {
		t.Fatal("a member that never revoked is still in the group")
	}
	if b.owned.count() != 6 {
		t.Fatalf("b owns %v after a was fenced", b.owned)
	}
}

// A group's own consumer.heartbeat.interval.ms and
// consumer.session.timeout.ms (brought by each heartbeat) replace the
// broker's: answers carry the interval, and a silent member is fenced
// after the group's session timeout.
func TestConsumerGroupConfigApplies(t *testing.T) {
	h := newConsumerHarness(t)
	a, b := newCClient("a", "a"), newCClient("b", "a")
	h.cgHeartbeat("g", a, 1)
	h.cgHeartbeat("g", b, 1)
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.MemberEpoch = 1, "g", "a", a.epoch
	id := h.sent + 1
	h.sent++
	h.apply(h.c.Handle(id, req, Client{ID: "client-a", Topics: h.topics,
		GroupConfig: ConsumerGroupConfig{SessionTimeout: 7 * time.Second, HeartbeatInterval: 700 * time.Millisecond}}, h.now))
	if r := h.reply(id).(*kmsg.ConsumerGroupHeartbeatResponse); r.ErrorCode != 0 || r.HeartbeatIntervalMillis != 700 {
		t.Fatalf("heartbeat with the group's configs: %v, interval %d ms", kerr.Code(r.ErrorCode), r.HeartbeatIntervalMillis)
	}
	h.advance(8 * time.Second) // past the group's 7 s, well within the broker's 45 s
	if h.c.Group("g").cg.members["a"] != nil {
		t.Fatal("member a still in the group after the group's session timeout")
	}
	if h.c.Group("g").cg.members["b"] == nil {
		t.Fatal("member b, whose last heartbeat came before the group's configs, was fenced before the broker's 45 s")
	}
}

// snapshotTopics is a TopicsSnapshot that counts how often the core lists
// every topic (what resolving a regex costs).
type snapshotTopics struct {
	TopicMap
	snapshot int
	names    *int
}

func (s snapshotTopics) Names() []string { *s.names++; return s.TopicMap.Names() }
func (s snapshotTopics) Snapshot() any   { return s.snapshot }

// Regex subscriptions are resolved once per topics snapshot: heartbeats
// that see the same snapshot reuse the matches; a new snapshot (a topic
// created) or a new regex resolves again.
func TestConsumerRegexResolvedOncePerSnapshot(t *testing.T) {
	h := newConsumerHarness(t)
	names := 0
	beat := func(c *cclient, snapshot int) *kmsg.ConsumerGroupHeartbeatResponse {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Version, req.Group, req.MemberID, req.MemberEpoch = 1, "g", c.id, c.epoch
		if c.epoch == 0 {
			req.RebalanceTimeoutMillis, req.SubscribedTopicRegex = 30000, c.regex
		}
		h.sent++
		id := h.sent
		h.apply(h.c.Handle(id, req, Client{ID: c.id, Topics: snapshotTopics{h.topics, snapshot, &names}}, h.now))
		r := h.reply(id).(*kmsg.ConsumerGroupHeartbeatResponse)
		if r.ErrorCode != 0 {
			t.Fatalf("heartbeat of %s: %v", c.id, kerr.Code(r.ErrorCode))
		}
		c.epoch = r.MemberEpoch
		return r
	}
	a := &cclient{id: "a", regex: strPtr("c.*"), owned: partitions{}}
	for range 3 {
		beat(a, 1)
	}
	if names != 1 {
		t.Fatalf("topics listed %d times for three heartbeats on one snapshot", names)
	}
	b := &cclient{id: "b", regex: strPtr("a|b"), owned: partitions{}}
	beat(b, 1)
	beat(a, 1)
	if names != 2 {
		t.Fatalf("topics listed %d times after a second regex joined, want 2", names)
	}
	h.topics["cnew"] = TopicMeta{ID: topicID(9), Partitions: 2}
	beat(a, 2)
	beat(b, 2)
	if names != 3 {
		t.Fatalf("topics listed %d times after a new snapshot, want 3", names)
	}
	if subs := h.c.Group("g").subscribed; !subs["cnew"] || !subs["a"] {
		t.Fatalf("subscribed topics %v after cnew appeared", subs)
	}
}
