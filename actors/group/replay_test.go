package group

import (
	"testing"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// restart builds a second coordinator from h's log, as a broker that
// takes over the __consumer_offsets partition would, and checks that it
// answers COORDINATOR_LOAD_IN_PROGRESS until loaded.
func restart(t *testing.T, h *harness) *harness {
	t.Helper()
	h2 := newHarnessWith(t, testConfig())
	h2.now = h.now
	// Tickets continue from the old harness. Requests still parked on the
	// old coordinator die with it (their clients time out and retry); the
	// old harness still checks that its coordinator answers them.
	h2.sent = h.sent
	for i := 1; i <= h.sent; i++ {
		h2.replies[i] = h.replies[i]
		if h2.replies[i] == nil {
			h2.replies[i] = kmsg.NewPtrHeartbeatResponse()
		}
	}
	h2.c.BeginLoad()
	h2.wantCode(h2.join("g", joinOpts{}), kerr.CoordinatorLoadInProgress)
	h2.wantCode(h2.heartbeat("g", "m", 1), kerr.None) // Kafka answers heartbeats blindly while loading
	for _, rec := range h.log {
		if err := h2.c.Replay(rec.Key, rec.Value); err != nil {
			t.Fatalf("replay: %v", err)
		}
	}
	h2.log = append(h2.log, h.log...)
	h2.apply(h2.c.EndLoad(h2.now))
	if h2.c.Loading() {
		t.Fatalf("still loading")
	}
	return h2
}

func TestReplayRebuildsGroupsAndOffsets(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)
	h.commit("g", ids[0], 1, "t1", 0, 10)
	h.commit("g", ids[1], 1, "t1", 1, 11)
	h.commit("g", ids[1], 1, "t1", 1, 12) // the later commit wins
	h.commit("simple", "", -1, "x", 0, 1)
	h.commit("deleted", "", -1, "x", 0, 1)
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Groups = []string{"deleted"}
	h.send(req, "admin")
	del := kmsg.NewPtrOffsetDeleteRequest()
	del.Group = "simple"
	del.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "x", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
	h.send(del, "admin")
	h.commit("simple", "", -1, "y", 0, 2)

	h2 := restart(t, h)
	g := h2.group("g")
	if g.State() != Stable || g.Generation() != 1 || g.Leader() != ids[0] || g.Protocol() != "range" || len(g.Members()) != 2 {
		t.Fatalf("replayed group: %v gen %d leader %s members %v", g.State(), g.Generation(), g.Leader(), g.Members())
	}
	if h2.fetched("g", "t1", 0) != 10 || h2.fetched("g", "t1", 1) != 12 {
		t.Fatalf("offsets not replayed")
	}
	if h2.c.Group("deleted") != nil || h2.fetched("simple", "x", 0) != -1 || h2.fetched("simple", "y", 0) != 2 {
		t.Fatalf("tombstones not replayed")
	}
	// Members carry on without noticing: heartbeats and syncs of the
	// current generation work, with their assignments.
	h2.wantCode(h2.heartbeat("g", ids[1], 1), kerr.None)
	s := h2.sync("g", ids[1], 1, nil)
	if string(h2.syncResp(s).MemberAssignment) != "assignment-of-"+ids[1] {
		t.Fatalf("%#v", h2.syncResp(s))
	}
	// Session timers run from the load: a member that does not come back
	// is removed after its session timeout.
	for range 3 {
		h2.advance(4 * time.Second)
		h2.heartbeat("g", ids[1], 1)
	}
	h2.wantState("g", PreparingRebalance)
	if m := g.Members(); len(m) != 1 || m[0] != ids[1] {
		t.Fatalf("members %v", m)
	}
}

// The coordinator fails after a rebalance's join phase, before the
// leader's SyncGroup reached the log. The new coordinator knows only the
// last stored generation; the members' requests for the newer one fail,
// they rejoin with their member ids, and the group converges.
func TestRestartInTheMiddleOfARebalance(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 3)
	h.commit("g", ids[2], 1, "t1", 0, 7)
	// A rebalance: everyone rejoins, generation 2 is handed out.
	for _, id := range ids {
		h.join("g", joinOpts{member: id})
	}
	h.wantState("g", CompletingRebalance)
	h.sync("g", ids[1], 2, nil) // parked when the coordinator dies

	h2 := restart(t, h)
	g := h2.group("g")
	if g.State() != Stable || g.Generation() != 1 {
		t.Fatalf("replayed %v gen %d", g.State(), g.Generation())
	}
	if h2.fetched("g", "t1", 0) != 7 {
		t.Fatalf("offset lost")
	}
	// The clients retry against the new coordinator.
	h2.wantCode(h2.sync("g", ids[0], 2, map[string][]byte{ids[0]: []byte("x")}), kerr.IllegalGeneration)
	h2.wantCode(h2.sync("g", ids[1], 2, nil), kerr.IllegalGeneration)
	h2.wantCode(h2.heartbeat("g", ids[2], 2), kerr.IllegalGeneration)
	h2.wantCode(h2.commit("g", ids[2], 2, "t1", 0, 8), kerr.IllegalGeneration)
	// They rejoin with their member ids (the follower first: its
	// metadata is unchanged, so the Stable group answers it at once with
	// generation 1; it then syncs and rejoins when told to).
	j1 := h2.join("g", joinOpts{member: ids[1]})
	if r := h2.joinResp(j1); r.Generation != 1 || r.ErrorCode != 0 {
		t.Fatalf("%#v", r)
	}
	j0 := h2.join("g", joinOpts{member: ids[0]}) // the leader: a rebalance
	h2.wantState("g", PreparingRebalance)
	h2.wantCode(h2.heartbeat("g", ids[1], 1), kerr.RebalanceInProgress)
	j1 = h2.join("g", joinOpts{member: ids[1]})
	j2 := h2.join("g", joinOpts{member: ids[2]})
	for _, j := range []int{j0, j1, j2} {
		if r := h2.joinResp(j); r.ErrorCode != 0 || r.Generation != 2 {
			t.Fatalf("join %d: %#v", j, r)
		}
	}
	if r := h2.joinResp(j0); r.LeaderID != ids[0] || len(r.Members) != 3 {
		t.Fatalf("%#v", r)
	}
	s1 := h2.sync("g", ids[1], 2, nil)
	s2 := h2.sync("g", ids[2], 2, nil)
	s0 := h2.sync("g", ids[0], 2, map[string][]byte{ids[0]: []byte("A"), ids[1]: []byte("B"), ids[2]: []byte("C")})
	for i, s := range []int{s0, s1, s2} {
		if got := string(h2.syncResp(s).MemberAssignment); got != string(rune('A'+i)) {
			t.Fatalf("member %d got %q", i, got)
		}
	}
	h2.wantState("g", Stable)
	h2.wantCode(h2.commit("g", ids[2], 2, "t1", 0, 8), kerr.None)

	// And a third coordinator sees generation 2.
	h3 := restart(t, h2)
	if g := h3.group("g"); g.Generation() != 2 || g.State() != Stable || h3.fetched("g", "t1", 0) != 8 {
		t.Fatalf("third load: gen %d %v", g.Generation(), g.State())
	}
}

// A static member replaced without a rebalance: the new member id is in
// the log, so after a restart the old id stays fenced.
func TestReplayKeepsStaticReplacement(t *testing.T) {
	h := newHarness(t)
	s := h.join("g", joinOpts{instance: "i"})
	h.advance(3 * time.Second)
	old := h.joinResp(s).MemberID
	h.syncV("g", old, "i", 1, map[string][]byte{old: []byte("A")}, 5)
	nw := h.joinResp(h.join("g", joinOpts{instance: "i"})).MemberID
	h2 := restart(t, h)
	h2.wantCode(h2.heartbeatI("g", old, "i", 1), kerr.FencedInstanceID)
	h2.wantCode(h2.heartbeatI("g", nw, "i", 1), kerr.None)
	if got := string(h2.syncResp(h2.syncV("g", nw, "i", 1, nil, 5)).MemberAssignment); got != "A" {
		t.Fatalf("assignment %q", got)
	}
}

// An Empty group's record (all members left) replays as Empty with its
// generation, so the next generation continues from there.
func TestReplayEmptyGroup(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 1)
	h.leave("g", kmsg.LeaveGroupRequestMember{MemberID: ids[0]})
	h2 := restart(t, h)
	g := h2.group("g")
	if g.State() != Empty || g.Generation() != 2 || g.ProtocolType() != "consumer" {
		t.Fatalf("%v gen %d %q", g.State(), g.Generation(), g.ProtocolType())
	}
	j := h2.join("g", joinOpts{version: 3})
	h2.advance(3 * time.Second)
	if r := h2.joinResp(j); r.Generation != 3 {
		t.Fatalf("%#v", r)
	}
}

func TestReplayErrors(t *testing.T) {
	c := NewCoordinator(testConfig())
	c.BeginLoad()
	if err := c.Replay([]byte{0}, nil); err == nil {
		t.Fatalf("short key accepted")
	}
	if err := c.Replay(GroupKeyBytes("g"), []byte{0, 3, 0}); err == nil {
		t.Fatalf("bad value accepted")
	}
	if err := c.Replay([]byte{0, 5, 1, 2, 3}, []byte{9, 9}); err == nil {
		t.Fatalf("a malformed KIP-848 key was accepted")
	}
	if err := c.Replay([]byte{0, 10, 1, 2, 3}, []byte{9, 9}); err != nil {
		t.Fatalf("share group records are skipped, got %v", err)
	}
	g := NewGroup("g", testConfig())
	if err := g.Replay(Key{Kind: KeyOffset, Group: "other"}, nil); err != ErrWrongGroup {
		t.Fatalf("%v", err)
	}
	c.EndLoad(t0)
	if len(c.GroupIDs()) != 0 {
		t.Fatalf("a group with nothing valid replayed should not exist: %v", c.GroupIDs())
	}
}
