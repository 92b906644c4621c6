package group

import (
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestSimpleConsumerCommits(t *testing.T) {
	h := newHarness(t)
	// Unknown group, generation -1, no member: allowed, creates the group.
	h.wantCode(h.commit("simple", "", -1, "t", 0, 42), kerr.None)
	if got := h.fetched("simple", "t", 0); got != 42 {
		t.Fatalf("fetched %d", got)
	}
	h.wantState("simple", Empty)
	if len(h.log) != 1 {
		t.Fatalf("log %d records", len(h.log))
	}
	k, _ := DecodeKey(h.log[0].Key)
	v, err := DecodeOffsetValue(h.log[0].Value)
	if err != nil || k.Group != "simple" || k.Topic != "t" || k.Partition != 0 || v.Offset != 42 || v.Metadata != "m" ||
		v.CommitTimestamp != t0.UnixMilli() || v.ExpireTimestamp != -1 {
		t.Fatalf("record %+v %+v %v", k, v, err)
	}
	// Unknown group with a generation: a member of a vanished group.
	h.wantCode(h.commit("gone", "m", 3, "t", 0, 1), kerr.IllegalGeneration)
	h.wantCode(h.commit("simple", "m", -1, "t", 0, 1), kerr.UnknownMemberID)
}

func TestMemberCommits(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)
	h.wantCode(h.commit("g", ids[1], 1, "t1", 3, 100), kerr.None)
	if got := h.fetched("g", "t1", 3); got != 100 {
		t.Fatalf("fetched %d", got)
	}
	h.wantCode(h.commit("g", ids[1], 0, "t1", 3, 1), kerr.IllegalGeneration)
	h.wantCode(h.commit("g", "stranger", 1, "t1", 3, 1), kerr.UnknownMemberID)
	h.wantCode(h.commit("g", "", -1, "t1", 3, 1), kerr.UnknownMemberID) // simple commit into a live group
	if got := h.fetched("g", "t1", 3); got != 100 {
		t.Fatalf("rejected commits changed the offset: %d", got)
	}
	// During the join phase, the previous generation may still commit.
	h.join("g", joinOpts{member: ids[0]})
	h.wantState("g", PreparingRebalance)
	h.wantCode(h.commit("g", ids[1], 1, "t1", 3, 101), kerr.None)
	// After the join phase, until SyncGroup: REBALANCE_IN_PROGRESS.
	h.join("g", joinOpts{member: ids[1]})
	h.wantState("g", CompletingRebalance)
	h.wantCode(h.commit("g", ids[1], 2, "t1", 3, 102), kerr.RebalanceInProgress)
	if got := h.fetched("g", "t1", 3); got != 101 {
		t.Fatalf("fetched %d", got)
	}
}

func TestCommitMetadataLimitAndRetention(t *testing.T) {
	h := newHarness(t)
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 2
	req.Group, req.Generation = "g", -1
	req.RetentionTimeMillis = 60_000
	big := strings.Repeat("x", 4097)
	ok := strings.Repeat("y", 4096)
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{
		{Partition: 0, Offset: 1, Metadata: &big},
		{Partition: 1, Offset: 2, Metadata: &ok},
		{Partition: 2, Offset: 3}, // null metadata reads as ""
	}}}
	r := h.reply(h.send(req, "c")).(*kmsg.OffsetCommitResponse)
	want := []kerr.Code{kerr.OffsetMetadataTooLarge, kerr.None, kerr.None}
	for i, p := range r.Topics[0].Partitions {
		if kerr.Code(p.ErrorCode) != want[i] {
			t.Fatalf("partition %d: %v", p.Partition, kerr.Code(p.ErrorCode))
		}
	}
	if len(h.log) != 2 {
		t.Fatalf("%d records, want 2", len(h.log))
	}
	v, _ := DecodeOffsetValue(h.log[0].Value)
	if v.ExpireTimestamp != t0.UnixMilli()+60_000 || h.log[0].Value[1] != 1 {
		t.Fatalf("a v2 commit with retention is written as value v1 with its expiry: %+v", v)
	}
	if h.fetched("g", "t", 0) != -1 || h.fetched("g", "t", 2) != 3 {
		t.Fatalf("offsets wrong")
	}
	// The explicit expiry applies regardless of the group's state.
	h.advance(time.Minute)
	h.apply(h.c.ExpireOffsets(h.now))
	if h.fetched("g", "t", 1) != -1 {
		t.Fatalf("offset with expired retention still there")
	}
}

func TestCommitAppendFailureIsReportedAndNotApplied(t *testing.T) {
	h := newHarness(t)
	h.failNext = kerr.MessageTooLarge
	h.wantCode(h.commit("g", "", -1, "t", 0, 5), kerr.InvalidCommitOffsetSize)
	if h.fetched("g", "t", 0) != -1 {
		t.Fatalf("a failed commit became visible")
	}
	h.failNext = kerr.NotLeaderOrFollower
	h.wantCode(h.commit("g", "", -1, "t", 0, 5), kerr.NotCoordinator)
}

func TestOffsetFetchVersionsAndRequireStable(t *testing.T) {
	h := newHarness(t)
	h.commit("a", "", -1, "t2", 1, 21)
	h.commit("a", "", -1, "t1", 0, 10)
	h.commit("b", "", -1, "t1", 0, 99)

	// All partitions (null topics), sorted.
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group = 6, "a"
	r := h.reply(h.send(req, "c")).(*kmsg.OffsetFetchResponse)
	if len(r.Topics) != 2 || r.Topics[0].Topic != "t1" || r.Topics[1].Topic != "t2" || r.Topics[1].Partitions[0].Offset != 21 {
		t.Fatalf("%#v", r.Topics)
	}

	// v8: batched groups; one asks for everything, one for a partition
	// that has no commit, one for a group that does not exist.
	req = kmsg.NewPtrOffsetFetchRequest()
	req.Version = 8
	req.Groups = []kmsg.OffsetFetchRequestGroup{
		{Group: "a"},
		{Group: "b", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t1", Partitions: []int32{0, 5}}}},
		{Group: "nope", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t1", Partitions: []int32{0}}}},
	}
	r = h.reply(h.send(req, "c")).(*kmsg.OffsetFetchResponse)
	if len(r.Groups) != 3 || len(r.Groups[0].Topics) != 2 {
		t.Fatalf("%#v", r.Groups)
	}
	bp := r.Groups[1].Topics[0].Partitions
	if bp[0].Offset != 99 || bp[1].Offset != -1 || bp[1].LeaderEpoch != -1 || *bp[1].Metadata != "" {
		t.Fatalf("%#v", bp)
	}
	if np := r.Groups[2].Topics[0].Partitions[0]; np.Offset != -1 || np.ErrorCode != 0 {
		t.Fatalf("%#v", np)
	}

	// require_stable: a commit still being appended is unstable.
	h.holdAppends = true
	h.commit("a", "", -1, "t1", 0, 11)
	req = kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group, req.RequireStable = 7, "a", true
	req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t1", Partitions: []int32{0}}, {Topic: "t2", Partitions: []int32{1}}}
	r = h.reply(h.send(req, "c")).(*kmsg.OffsetFetchResponse)
	if kerr.Code(r.Topics[0].Partitions[0].ErrorCode) != kerr.UnstableOffsetCommit || r.Topics[1].Partitions[0].Offset != 21 {
		t.Fatalf("%#v", r.Topics)
	}
	req.RequireStable = false
	r = h.reply(h.send(req, "c")).(*kmsg.OffsetFetchResponse)
	if r.Topics[0].Partitions[0].Offset != 10 {
		t.Fatalf("before the append completes the old offset shows: %#v", r.Topics[0])
	}
	h.holdAppends = false
	h.completeAppends()
	if h.fetched("a", "t1", 0) != 11 {
		t.Fatalf("commit not applied")
	}
}

func TestOffsetDelete(t *testing.T) {
	h := newHarness(t)
	del := func(group string, topics ...string) *kmsg.OffsetDeleteResponse {
		req := kmsg.NewPtrOffsetDeleteRequest()
		req.Group = group
		for _, tp := range topics {
			req.Topics = append(req.Topics, kmsg.OffsetDeleteRequestTopic{Topic: tp, Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}})
		}
		return h.reply(h.send(req, "c")).(*kmsg.OffsetDeleteResponse)
	}
	if r := del("nope", "t"); kerr.Code(r.ErrorCode) != kerr.GroupIDNotFound {
		t.Fatalf("%#v", r)
	}
	ids := h.stableGroup("g", 1) // subscribed to t1
	h.commit("g", ids[0], 1, "t1", 0, 1)
	h.commit("g", ids[0], 1, "t2", 0, 2)
	logLen := len(h.log)
	r := del("g", "t1", "t2")
	if r.ErrorCode != 0 || kerr.Code(r.Topics[0].Partitions[0].ErrorCode) != kerr.GroupSubscribedToTopic || r.Topics[1].Partitions[0].ErrorCode != 0 {
		t.Fatalf("%#v", r)
	}
	if h.fetched("g", "t1", 0) != 1 || h.fetched("g", "t2", 0) != -1 {
		t.Fatalf("wrong offsets deleted")
	}
	if len(h.log) != logLen+1 || h.log[logLen].Value != nil {
		t.Fatalf("want one tombstone")
	}
	// Once the group is empty, everything may go.
	h.leave("g", kmsg.LeaveGroupRequestMember{MemberID: ids[0]})
	h.wantState("g", Empty)
	if r := del("g", "t1"); r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != 0 || h.fetched("g", "t1", 0) != -1 {
		t.Fatalf("%#v", r)
	}
}

func TestOffsetDeleteNonConsumerGroup(t *testing.T) {
	h := newHarness(t)
	j := h.join("c", joinOpts{version: 3, ptype: "connect", protocols: []kmsg.JoinGroupRequestProtocol{{Name: "v1", Metadata: []byte{1}}}})
	h.advance(3 * time.Second)
	h.wantCode(j, kerr.None)
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = "c"
	h.wantCode(h.send(req, "x"), kerr.NonEmptyGroup)
}

func TestOffsetExpiry(t *testing.T) {
	cfg := testConfig()
	cfg.OffsetsRetention = time.Hour
	h := newHarnessWith(t, cfg)

	// alive lists (group, member, generation) to keep heartbeating.
	type hb struct {
		group, member string
		gen           int32
	}
	var alive []hb
	keepAlive := func(d time.Duration) {
		for end := h.now.Add(d); h.now.Before(end); {
			h.advance(min(5*time.Second, end.Sub(h.now)))
			for _, a := range alive {
				h.heartbeat(a.group, a.member, a.gen)
			}
		}
	}

	// A consumer group that became Empty: all offsets expire an hour
	// after it emptied, whatever their commit times.
	ids := h.stableGroup("g", 1)
	alive = append(alive, hb{"g", ids[0], 1})
	h.commit("g", ids[0], 1, "t1", 0, 5)
	keepAlive(30 * time.Minute)
	h.commit("g", ids[0], 1, "t1", 1, 6)
	h.leave("g", kmsg.LeaveGroupRequestMember{MemberID: ids[0]})
	alive = nil
	h.wantState("g", Empty)
	emptiedAt := h.now

	// A Stable consumer group keeps the offsets of topics it subscribes
	// to, however old; others expire from their commit time.
	ids2 := h.stableGroup("s", 1) // subscribed to t1
	alive = append(alive, hb{"s", ids2[0], 1})
	h.commit("s", ids2[0], 1, "t1", 0, 7)
	h.commit("s", ids2[0], 1, "old", 0, 8)
	// A simple consumer's offsets expire from their commit time.
	h.commit("simple", "", -1, "t", 0, 9)

	keepAlive(59 * time.Minute)
	h.apply(h.c.ExpireOffsets(h.now))
	if h.fetched("g", "t1", 0) != 5 || h.fetched("s", "old", 0) != 8 || h.fetched("simple", "t", 0) != 9 {
		t.Fatalf("expired too early: %d %d %d", h.fetched("g", "t1", 0), h.fetched("s", "old", 0), h.fetched("simple", "t", 0))
	}
	keepAlive(emptiedAt.Add(time.Hour).Sub(h.now) + time.Minute)
	h.wantState("s", Stable)
	logLen := len(h.log)
	h.apply(h.c.ExpireOffsets(h.now))
	if h.c.Group("g") != nil {
		t.Fatalf("an Empty group with no offsets left is dead and gone")
	}
	if h.fetched("g", "t1", 1) != -1 || h.fetched("s", "old", 0) != -1 || h.fetched("simple", "t", 0) != -1 || h.fetched("s", "t1", 0) != 7 {
		t.Fatalf("expiry wrong")
	}
	var groupTombstones, offsetTombstones int
	for _, rec := range h.log[logLen:] {
		k, _ := DecodeKey(rec.Key)
		if rec.Value != nil {
			t.Fatalf("expiry wrote a non-tombstone")
		}
		if k.Kind == KeyGroup {
			groupTombstones++
		} else {
			offsetTombstones++
		}
	}
	// g: 2 offsets + group; s: "old"; simple: 1 offset + group.
	if groupTombstones != 2 || offsetTombstones != 4 {
		t.Fatalf("tombstones: %d group, %d offset", groupTombstones, offsetTombstones)
	}
}
