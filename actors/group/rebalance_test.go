package group

import (
	"testing"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestSessionTimeoutRemovesSilentMember(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)
	// Only the leader heartbeats.
	for range 2 {
		h.advance(4 * time.Second)
		h.wantCode(h.heartbeat("g", ids[0], 1), kerr.None)
	}
	h.advance(1999 * time.Millisecond)
	h.wantState("g", Stable)
	h.advance(time.Millisecond)
	// 10s since the follower's SyncGroup: it is gone, a rebalance started.
	h.wantState("g", PreparingRebalance)
	if m := h.group("g").Members(); len(m) != 1 || m[0] != ids[0] {
		t.Fatalf("members %v", m)
	}
	h.wantCode(h.heartbeat("g", ids[0], 1), kerr.RebalanceInProgress)
	h.wantCode(h.heartbeat("g", ids[1], 1), kerr.UnknownMemberID)
	j := h.join("g", joinOpts{member: ids[0]})
	jr := h.joinResp(j) // the only member rejoined: the join phase ends at once
	if jr.Generation != 2 || len(jr.Members) != 1 {
		t.Fatalf("%#v", jr)
	}
}

func TestRebalanceTimeoutRemovesMembersThatDoNotRejoin(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 3)
	// The leader rejoins (as it does on a metadata change); member 1
	// heartbeats and rejoins, member 2 heartbeats but never rejoins.
	lj := h.join("g", joinOpts{member: ids[0]})
	h.wantState("g", PreparingRebalance)
	h.wantCode(h.heartbeat("g", ids[1], 1), kerr.RebalanceInProgress)
	j1 := h.join("g", joinOpts{member: ids[1]})
	for range 7 {
		h.advance(4 * time.Second)
		h.heartbeat("g", ids[2], 1)
	}
	// 28s: still waiting for member 2 (rebalance timeout 30s).
	h.wantParked(lj, j1)
	h.advance(2 * time.Second)
	h.wantCode(lj, kerr.None)
	h.wantCode(j1, kerr.None)
	if got := h.joinResp(lj); got.Generation != 2 || len(got.Members) != 2 || got.LeaderID != ids[0] {
		t.Fatalf("%#v", got)
	}
	h.wantCode(h.heartbeat("g", ids[2], 1), kerr.UnknownMemberID)
}

// A member rejoins while the others wait for the leader's assignment: the
// parked SyncGroups are answered REBALANCE_IN_PROGRESS and the new round
// includes everyone.
func TestRejoinDuringSync(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 3)
	for _, id := range ids {
		h.join("g", joinOpts{member: id})
	}
	h.wantState("g", CompletingRebalance)
	s1 := h.sync("g", ids[1], 2, nil)
	s2 := h.sync("g", ids[2], 2, nil)
	h.wantParked(s1, s2)

	// Member 2 rejoins with the same metadata: it lost its answer; it is
	// told the current generation again, nothing changes.
	again := h.join("g", joinOpts{member: ids[2]})
	if r := h.joinResp(again); r.Generation != 2 || r.ErrorCode != 0 || len(r.Members) != 0 {
		t.Fatalf("repeated join: %#v", r)
	}
	h.wantParked(s1, s2)

	// Member 1 rejoins with a new subscription: a new rebalance.
	j := h.join("g", joinOpts{member: ids[1], protocols: rangeOn("t1", "t2")})
	h.wantCode(s1, kerr.RebalanceInProgress)
	h.wantCode(s2, kerr.RebalanceInProgress)
	h.wantState("g", PreparingRebalance)
	h.wantParked(j)
	// The leader's late SyncGroup for the abandoned generation.
	h.wantCode(h.sync("g", ids[0], 2, map[string][]byte{ids[0]: []byte("x")}), kerr.RebalanceInProgress)
	j0 := h.join("g", joinOpts{member: ids[0]})
	j2 := h.join("g", joinOpts{member: ids[2]})
	for _, x := range []int{j, j0, j2} {
		if r := h.joinResp(x); r.Generation != 3 {
			t.Fatalf("join %d: %#v", x, r)
		}
	}
	// The leader's SyncGroup completes generation 3.
	f1 := h.sync("g", ids[1], 3, nil)
	l := h.sync("g", ids[0], 3, map[string][]byte{ids[0]: []byte("a0"), ids[1]: []byte("a1")})
	f2 := h.sync("g", ids[2], 3, nil)
	h.wantCode(l, kerr.None)
	if string(h.syncResp(f1).MemberAssignment) != "a1" || len(h.syncResp(f2).MemberAssignment) != 0 {
		t.Fatalf("assignments: %#v %#v", h.syncResp(f1), h.syncResp(f2))
	}
	h.wantState("g", Stable)
}

func TestLeaderLeavesDuringJoinPhase(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 3)
	// A follower with a new subscription starts a rebalance.
	j1 := h.join("g", joinOpts{member: ids[1], protocols: rangeOn("t1", "t2")})
	h.wantState("g", PreparingRebalance)
	h.wantCode(h.leave("g", kmsg.LeaveGroupRequestMember{MemberID: ids[0]}), kerr.None)
	h.wantParked(j1)
	j2 := h.join("g", joinOpts{member: ids[2]})
	// Both remaining members rejoined: done, with a new leader.
	r1, r2 := h.joinResp(j1), h.joinResp(j2)
	if r1.LeaderID != ids[1] || r2.LeaderID != ids[1] || r1.Generation != 2 || len(r1.Members) != 2 || len(r2.Members) != 0 {
		t.Fatalf("%#v\n%#v", r1, r2)
	}
}

func TestLeaderLeavesBeforeSync(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)
	j0 := h.join("g", joinOpts{member: ids[0]})
	j1 := h.join("g", joinOpts{member: ids[1]})
	h.wantCode(j0, kerr.None)
	h.wantCode(j1, kerr.None)
	s1 := h.sync("g", ids[1], 2, nil)
	h.wantParked(s1)
	lv := h.leave("g", kmsg.LeaveGroupRequestMember{MemberID: ids[0]})
	h.wantCode(lv, kerr.None)
	h.wantCode(s1, kerr.RebalanceInProgress)
	j := h.join("g", joinOpts{member: ids[1]})
	r := h.joinResp(j)
	if r.LeaderID != ids[1] || r.Generation != 3 {
		t.Fatalf("%#v", r)
	}
}

// A leader that rejoined but then leaves while parked has its own JoinGroup
// answered too.
func TestLeaderLeavesWhileParked(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)
	j0 := h.join("g", joinOpts{member: ids[0]})
	h.wantParked(j0)
	lv := h.leave("g", kmsg.LeaveGroupRequestMember{MemberID: ids[0]})
	h.wantCode(lv, kerr.None)
	h.wantCode(j0, kerr.UnknownMemberID)
	j1 := h.join("g", joinOpts{member: ids[1]})
	if r := h.joinResp(j1); r.LeaderID != ids[1] || len(r.Members) != 1 {
		t.Fatalf("%#v", r)
	}
}

func TestSyncTimeoutRemovesMembersThatNeverSync(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)
	h.join("g", joinOpts{member: ids[0]})
	h.join("g", joinOpts{member: ids[1]})
	h.wantState("g", CompletingRebalance)
	// Nobody syncs, but both heartbeat.
	for range 8 {
		h.advance(4 * time.Second)
		h.heartbeat("g", ids[0], 2)
		h.heartbeat("g", ids[1], 2)
	}
	h.wantState("g", Empty)
}

func TestSyncValidation(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 1)
	h.wantCode(h.sync("", ids[0], 1, nil), kerr.InvalidGroupID)
	h.wantCode(h.sync("g", "ghost", 1, nil), kerr.UnknownMemberID)
	h.wantCode(h.sync("g", ids[0], 7, nil), kerr.IllegalGeneration)
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version, req.Group, req.MemberID, req.Generation = 5, "g", ids[0], 1
	req.ProtocolType = strPtr("connect")
	h.wantCode(h.send(req, "c"), kerr.InconsistentGroupProtocol)
	req.ProtocolType, req.Protocol = strPtr("consumer"), strPtr("roundrobin")
	h.wantCode(h.send(req, "c"), kerr.InconsistentGroupProtocol)
	req.Protocol = strPtr("range")
	h.wantCode(h.send(req, "c"), kerr.None)
	// Before v5 the fields do not exist and are not checked.
	req.Version, req.Protocol = 4, strPtr("roundrobin")
	h.wantCode(h.send(req, "c"), kerr.None)
}

// The leader's assignment could not be written: every parked SyncGroup
// gets the mapped error and the group rebalances.
func TestSyncAppendFailure(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)
	h.join("g", joinOpts{member: ids[0]})
	h.join("g", joinOpts{member: ids[1]})
	f := h.sync("g", ids[1], 2, nil)
	h.failNext = kerr.NotLeaderOrFollower
	l := h.sync("g", ids[0], 2, map[string][]byte{ids[0]: []byte("a")})
	h.wantCode(l, kerr.NotCoordinator)
	h.wantCode(f, kerr.NotCoordinator)
	h.wantState("g", PreparingRebalance)
}

// Replies to SyncGroup wait for the append; a join meanwhile abandons the
// generation and the late append does not resurrect it.
func TestJoinWhileAssignmentIsBeingWritten(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)
	h.join("g", joinOpts{member: ids[0]})
	h.join("g", joinOpts{member: ids[1]})
	h.holdAppends = true
	l := h.sync("g", ids[0], 2, map[string][]byte{ids[0]: []byte("a")})
	h.wantParked(l)
	// A repeated leader SyncGroup does not write twice.
	l2 := h.sync("g", ids[0], 2, map[string][]byte{ids[0]: []byte("a")})
	h.wantCode(l, kerr.RebalanceInProgress)
	if len(h.held) != 1 {
		t.Fatalf("%d appends held, want 1", len(h.held))
	}
	j := h.join("g", joinOpts{member: ids[1], protocols: rangeOn("t9")})
	h.wantCode(l2, kerr.RebalanceInProgress)
	h.holdAppends = false
	h.completeAppends()
	h.wantState("g", PreparingRebalance)
	h.wantParked(j)
}

func TestStaticMemberReplacementWithoutRebalance(t *testing.T) {
	h := newHarness(t)
	// A static member and a dynamic one.
	s := h.join("g", joinOpts{instance: "inst-1", clientID: "app"})
	sid := ""
	d := h.join("g", joinOpts{clientID: "dyn"})
	did := h.joinResp(d).MemberID
	dj := h.join("g", joinOpts{member: did})
	h.advance(6 * time.Second)
	sr := h.joinResp(s) // static members need no MEMBER_ID_REQUIRED round trip
	sid = sr.MemberID
	if sr.ErrorCode != 0 || shortID(sid) != "inst" || sr.LeaderID != sid {
		t.Fatalf("static join: %#v", sr)
	}
	h.wantCode(dj, kerr.None)
	h.sync("g", did, 1, nil)
	h.syncV("g", sid, "inst-1", 1, map[string][]byte{sid: []byte("A"), did: []byte("B")}, 5)
	h.wantState("g", Stable)
	logBefore := len(h.log)

	// The static member restarts: unknown member id, same instance id.
	old := h.syncV("g", sid, "inst-1", 1, nil, 5) // answered from the Stable state
	h.wantCode(old, kerr.None)
	r := h.join("g", joinOpts{instance: "inst-1", clientID: "app"})
	nr := h.joinResp(r)
	if nr.ErrorCode != 0 || nr.MemberID == sid || nr.Generation != 1 || nr.LeaderID != nr.MemberID || !nr.SkipAssignment {
		t.Fatalf("replacement join: %#v", nr)
	}
	h.wantState("g", Stable)
	if len(h.log) != logBefore+1 {
		t.Fatalf("the new member id must be written to the log")
	}
	// The old id is fenced; the new one has the old assignment.
	h.wantCode(h.heartbeatI("g", sid, "inst-1", 1), kerr.FencedInstanceID)
	h.wantCode(h.syncV("g", sid, "inst-1", 1, nil, 5), kerr.FencedInstanceID)
	h.wantCode(h.join("g", joinOpts{member: sid, instance: "inst-1"}), kerr.FencedInstanceID)
	h.wantCode(h.heartbeatI("g", nr.MemberID, "inst-1", 1), kerr.None)
	ns := h.syncV("g", nr.MemberID, "inst-1", 1, nil, 5)
	if string(h.syncResp(ns).MemberAssignment) != "A" {
		t.Fatalf("assignment after replacement: %#v", h.syncResp(ns))
	}
	// The dynamic member saw nothing.
	h.wantCode(h.heartbeat("g", did, 1), kerr.None)
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version, commit.Group, commit.Generation, commit.MemberID = 8, "g", 1, sid
	commit.InstanceID = strPtr("inst-1")
	commit.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t1", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
	h.wantCode(h.send(commit, "app"), kerr.FencedInstanceID)
}

func TestStaticMemberReplacementFencesParkedRequests(t *testing.T) {
	h := newHarness(t)
	s := h.join("g", joinOpts{instance: "i", version: 5})
	d1 := h.join("g", joinOpts{version: 3, clientID: "d1"})
	d2 := h.join("g", joinOpts{version: 3, clientID: "d2"})
	h.advance(6 * time.Second)
	sid, d1id, d2id := h.joinResp(s).MemberID, h.joinResp(d1).MemberID, h.joinResp(d2).MemberID
	h.wantState("g", CompletingRebalance)
	// d1 rejoins with a new subscription: a rebalance; the old static
	// instance rejoins too and is parked, waiting for d2...
	j1 := h.join("g", joinOpts{version: 3, member: d1id, protocols: rangeOn("t1", "t3")})
	old := h.join("g", joinOpts{member: sid, instance: "i", version: 5})
	h.wantState("g", PreparingRebalance)
	h.wantParked(j1, old)
	// ...when a new instance with the same instance id arrives.
	nw := h.join("g", joinOpts{instance: "i", version: 5})
	h.wantCode(old, kerr.FencedInstanceID)
	h.wantParked(nw, j1)
	j2 := h.join("g", joinOpts{version: 3, member: d2id})
	for _, j := range []int{nw, j1, j2} {
		if r := h.joinResp(j); r.ErrorCode != 0 || r.Generation != 2 {
			t.Fatalf("join %d: %#v", j, r)
		}
	}
	nid := h.joinResp(nw).MemberID
	if nid == sid || h.joinResp(nw).LeaderID != nid {
		t.Fatalf("the new instance should have a new id and keep the leadership: %#v", h.joinResp(nw))
	}
}

// A static member whose instance would change the selected protocol
// causes a rebalance instead of a silent replacement.
func TestStaticMemberReplacementWithNewProtocolRebalances(t *testing.T) {
	h := newHarness(t)
	s := h.join("g", joinOpts{instance: "i"})
	h.advance(3 * time.Second)
	sid := h.joinResp(s).MemberID
	h.syncV("g", sid, "i", 1, map[string][]byte{sid: []byte("A")}, 5)
	h.wantState("g", Stable)
	// Kafka checks the new protocols against the current members first:
	// sticky alone is refused...
	h.wantCode(h.join("g", joinOpts{instance: "i", protocols: []kmsg.JoinGroupRequestProtocol{{Name: "sticky", Metadata: subscription("t1")}}}), kerr.InconsistentGroupProtocol)
	// ...but sticky preferred over range is accepted and changes the
	// selection.
	r := h.join("g", joinOpts{instance: "i", protocols: []kmsg.JoinGroupRequestProtocol{
		{Name: "sticky", Metadata: subscription("t1")}, {Name: "range", Metadata: subscription("t1")}}})
	// It is the only member and it has rejoined: the rebalance completes
	// at once with generation 2 on sticky.
	h.wantState("g", CompletingRebalance)
	if got := h.joinResp(r); got.Generation != 2 || *got.Protocol != "sticky" {
		t.Fatalf("%#v", got)
	}
}

func TestStaticMembersStayUntilSessionExpiry(t *testing.T) {
	h := newHarness(t)
	a := h.join("g", joinOpts{instance: "a"})
	b := h.join("g", joinOpts{instance: "b", session: 45 * time.Second})
	h.advance(6 * time.Second)
	aid, bid := h.joinResp(a).MemberID, h.joinResp(b).MemberID
	h.syncV("g", aid, "a", 1, map[string][]byte{aid: []byte("A"), bid: []byte("B")}, 5)
	h.syncV("g", bid, "b", 1, nil, 5)
	h.wantState("g", Stable)
	// b goes away without a LeaveGroup (static members do not send one);
	// a triggers a rebalance by rejoining as leader.
	aj := h.join("g", joinOpts{member: aid, instance: "a"})
	for range 6 {
		h.advance(5 * time.Second)
		h.heartbeatI("g", aid, "a", 1)
	}
	// The rebalance timeout (30s) passed: b is static, so it is kept
	// (its 45s session has not run out), and the join completes.
	if r := h.joinResp(aj); r.Generation != 2 || len(r.Members) != 2 {
		t.Fatalf("%#v", r)
	}
	h.syncV("g", aid, "a", 2, map[string][]byte{aid: []byte("A2"), bid: []byte("B2")}, 5)
	h.wantState("g", Stable)
	if got := h.group("g").Members(); len(got) != 2 {
		t.Fatalf("b should still be a member: %v", got)
	}
	// b never sends its SyncGroup: a rebalance timeout after the join
	// completed, it is removed.
	for range 6 {
		h.advance(5 * time.Second)
		h.heartbeatI("g", aid, "a", 2)
	}
	h.wantState("g", PreparingRebalance)
	if got := h.group("g").Members(); len(got) != 1 || got[0] != aid {
		t.Fatalf("members %v", got)
	}
}

func TestLeaveGroup(t *testing.T) {
	h := newHarness(t)
	s := h.join("g", joinOpts{instance: "i"})
	d := h.join("g", joinOpts{version: 3})
	h.advance(6 * time.Second)
	did := h.joinResp(d).MemberID

	lv := h.leave("g",
		kmsg.LeaveGroupRequestMember{MemberID: "stale", InstanceID: strPtr("i")},
		kmsg.LeaveGroupRequestMember{MemberID: "ghost"},
		kmsg.LeaveGroupRequestMember{InstanceID: strPtr("nobody")},
	)
	r := h.reply(lv).(*kmsg.LeaveGroupResponse)
	want := []kerr.Code{kerr.FencedInstanceID, kerr.UnknownMemberID, kerr.UnknownMemberID}
	for i, m := range r.Members {
		if kerr.Code(m.ErrorCode) != want[i] {
			t.Fatalf("member %d: %v, want %v", i, kerr.Code(m.ErrorCode), want[i])
		}
	}
	if len(h.group("g").Members()) != 2 {
		t.Fatalf("no one should have left")
	}
	// An administrator removes the static member by instance id and the
	// dynamic one by member id, in one batch.
	lv = h.leave("g", kmsg.LeaveGroupRequestMember{InstanceID: strPtr("i")}, kmsg.LeaveGroupRequestMember{MemberID: did})
	for _, m := range h.reply(lv).(*kmsg.LeaveGroupResponse).Members {
		if m.ErrorCode != 0 {
			t.Fatalf("%#v", m)
		}
	}
	h.wantState("g", Empty)
	h.wantCode(s, kerr.None)

	// v0-v2: one member, error at the top.
	old := kmsg.NewPtrLeaveGroupRequest()
	old.Version, old.Group, old.MemberID = 1, "g", "ghost"
	h.wantCode(h.send(old, "c"), kerr.UnknownMemberID)
}

// The new static member id could not be written: the replacement is
// undone, the old id stays valid and the new instance gets the error.
func TestStaticMemberReplacementAppendFailure(t *testing.T) {
	h := newHarness(t)
	s := h.join("g", joinOpts{instance: "i", clientID: "old"})
	h.advance(3 * time.Second)
	sid := h.joinResp(s).MemberID
	h.syncV("g", sid, "i", 1, map[string][]byte{sid: []byte("A")}, 5)
	h.failNext = kerr.NotEnoughReplicas
	r := h.join("g", joinOpts{instance: "i", clientID: "new"})
	h.wantCode(r, kerr.CoordinatorNotAvailable)
	h.wantState("g", Stable)
	if m := h.group("g").Members(); len(m) != 1 || m[0] != sid || h.group("g").Leader() != sid {
		t.Fatalf("members %v leader %s", m, h.group("g").Leader())
	}
	h.wantCode(h.heartbeatI("g", sid, "i", 1), kerr.None)
	if got := string(h.syncResp(h.syncV("g", sid, "i", 1, nil, 5)).MemberAssignment); got != "A" {
		t.Fatalf("assignment %q", got)
	}
}
