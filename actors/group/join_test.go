package group

import (
	"regexp"
	"testing"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var uuidForm = regexp.MustCompile(`^client-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestJoinSyncHeartbeatHappyPath(t *testing.T) {
	h := newHarness(t)
	first := h.join("g", joinOpts{})
	h.wantCode(first, kerr.MemberIDRequired)
	id := h.joinResp(first).MemberID
	if !uuidForm.MatchString(id) {
		t.Fatalf("member id %q is not <clientId>-<uuid>", id)
	}
	h.wantState("g", Empty) // exists, but nobody has joined yet

	j := h.join("g", joinOpts{member: id})
	h.wantParked(j)
	h.wantState("g", PreparingRebalance)
	h.advance(2999 * time.Millisecond)
	h.wantParked(j) // the initial rebalance delay is never cut short
	h.advance(time.Millisecond)
	jr := h.joinResp(j)
	if jr.ErrorCode != 0 || jr.Generation != 1 || jr.LeaderID != id || jr.MemberID != id || *jr.Protocol != "range" || *jr.ProtocolType != "consumer" {
		t.Fatalf("join answer %#v", jr)
	}
	if len(jr.Members) != 1 || jr.Members[0].MemberID != id || string(jr.Members[0].ProtocolMetadata) != string(subscription("t1")) {
		t.Fatalf("the leader must get the members and their metadata: %#v", jr.Members)
	}
	h.wantState("g", CompletingRebalance)

	hb := h.heartbeat("g", id, 1)
	h.wantCode(hb, kerr.None) // allowed between join and sync

	s := h.sync("g", id, 1, map[string][]byte{id: []byte("a"), "stranger": []byte("x")})
	h.wantCode(s, kerr.None)
	if sr := h.syncResp(s); string(sr.MemberAssignment) != "a" || *sr.Protocol != "range" || *sr.ProtocolType != "consumer" {
		t.Fatalf("sync answer %#v", sr)
	}
	h.wantState("g", Stable)

	// The assignment was written to the log before the answer.
	if len(h.log) != 1 {
		t.Fatalf("log has %d records, want the group metadata", len(h.log))
	}
	k, _ := DecodeKey(h.log[0].Key)
	gv, err := DecodeGroupValue(h.log[0].Value)
	if err != nil || k.Kind != KeyGroup || gv.Generation != 1 || *gv.Leader != id || len(gv.Members) != 1 ||
		string(gv.Members[0].Assignment) != "a" || gv.Members[0].ClientID != "client" || gv.Members[0].ClientHost != "/127.0.0.1" ||
		gv.Members[0].SessionTimeoutMs != 10000 || gv.Members[0].RebalanceTimeoutMs != 30000 {
		t.Fatalf("group record %+v %+v %v", k, gv, err)
	}

	for range 5 {
		h.advance(9 * time.Second)
		h.wantCode(h.heartbeat("g", id, 1), kerr.None)
	}
	h.wantState("g", Stable)
	h.wantCode(h.heartbeat("g", id, 0), kerr.IllegalGeneration)
	h.wantCode(h.heartbeat("g", "nobody", 1), kerr.UnknownMemberID)

	// A Stable group answers a repeated SyncGroup from the state.
	s2 := h.sync("g", id, 1, nil)
	if string(h.syncResp(s2).MemberAssignment) != "a" {
		t.Fatalf("repeated sync: %#v", h.syncResp(s2))
	}
}

func TestJoinBeforeV4GetsMemberAtOnce(t *testing.T) {
	for _, v := range []int16{-1, 1, 2, 3} { // -1 is v0 in joinOpts
		h := newHarness(t)
		j := h.join("g", joinOpts{version: v})
		h.wantParked(j)
		h.advance(3 * time.Second)
		jr := h.joinResp(j)
		if jr.ErrorCode != 0 || jr.Generation != 1 || jr.MemberID == "" {
			t.Fatalf("v%d: %#v", v, jr)
		}
	}
}

func TestPendingMemberExpiresAfterSessionTimeout(t *testing.T) {
	h := newHarness(t)
	first := h.join("g", joinOpts{session: 6 * time.Second})
	id := h.joinResp(first).MemberID
	h.advance(6 * time.Second)
	h.wantCode(h.join("g", joinOpts{member: id}), kerr.UnknownMemberID)
	if h.c.Group("g") != nil {
		t.Fatalf("a group whose only pending member expired should be gone")
	}
}

// A member that received MEMBER_ID_REQUIRED holds up the join phase until
// it rejoins or its pending id expires.
func TestPendingMemberDelaysJoinCompletion(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 1)
	newcomer := h.join("g", joinOpts{clientID: "late", session: 20 * time.Second})
	h.wantCode(newcomer, kerr.MemberIDRequired)
	// The leader rejoins: PreparingRebalance, but a pending member is
	// outstanding.
	lj := h.join("g", joinOpts{member: ids[0]})
	h.wantParked(lj)
	h.advance(10 * time.Second)
	h.wantParked(lj)
	nj := h.join("g", joinOpts{member: h.joinResp(newcomer).MemberID, clientID: "late"})
	h.wantCode(lj, kerr.None)
	h.wantCode(nj, kerr.None)
	if h.joinResp(lj).Generation != 2 || len(h.joinResp(lj).Members) != 2 {
		t.Fatalf("leader answer %#v", h.joinResp(lj))
	}
}

func TestInitialDelayExtendsWhileMembersJoin(t *testing.T) {
	h := newHarness(t)
	// Rebalance timeout 10s, delay 3s: completion at 3, extended while
	// members arrive, never after 10.
	joinAt := func(d time.Duration) int {
		h.advance(d)
		return h.join("g", joinOpts{version: 3, rebalance: 10 * time.Second})
	}
	a := joinAt(0)
	b := joinAt(2 * time.Second) // t=2: extends to 6
	c := joinAt(3 * time.Second) // t=5: extends to 9
	h.advance(3999 * time.Millisecond)
	h.wantParked(a, b, c) // t=8.999
	h.advance(time.Millisecond)
	for _, j := range []int{a, b, c} {
		if r := h.joinResp(j); r.ErrorCode != 0 || r.Generation != 1 {
			t.Fatalf("join %d: %#v", j, r)
		}
	}

	h2 := newHarness(t)
	var js []int
	for i := range 10 {
		if i > 0 {
			h2.advance(time.Second)
		}
		js = append(js, h2.join("g", joinOpts{version: 3, rebalance: 10 * time.Second}))
	}
	// t=9; members kept arriving: capped at the rebalance timeout (10s).
	h2.wantParked(js...)
	h2.advance(999 * time.Millisecond)
	h2.wantParked(js...)
	h2.advance(time.Millisecond)
	for _, j := range js {
		h2.wantCode(j, kerr.None)
	}
	if n := len(h2.joinResp(js[0]).Members); n != 10 {
		t.Fatalf("leader saw %d members, want 10", n)
	}
}

func TestZeroInitialDelayCompletesAtOnce(t *testing.T) {
	cfg := testConfig()
	cfg.InitialRebalanceDelay = -1
	h := newHarnessWith(t, cfg)
	j := h.join("g", joinOpts{version: 3})
	h.wantCode(j, kerr.None)
}

func TestJoinValidation(t *testing.T) {
	h := newHarness(t)
	h.wantCode(h.join("", joinOpts{}), kerr.InvalidGroupID)
	h.wantCode(h.join("g", joinOpts{session: 5999 * time.Millisecond}), kerr.InvalidSessionTimeout)
	h.wantCode(h.join("g", joinOpts{session: 1800001 * time.Millisecond}), kerr.InvalidSessionTimeout)
	h.wantCode(h.join("g", joinOpts{member: "ghost"}), kerr.UnknownMemberID)
	h.wantCode(h.join("g", joinOpts{protocols: []kmsg.JoinGroupRequestProtocol{}}), kerr.InconsistentGroupProtocol)
	if h.c.Group("g") != nil {
		t.Fatalf("failed joins must not create the group")
	}

	h.stableGroup("g", 1)
	h.wantCode(h.join("g", joinOpts{ptype: "connect"}), kerr.InconsistentGroupProtocol)
	h.wantCode(h.join("g", joinOpts{protocols: []kmsg.JoinGroupRequestProtocol{{Name: "sticky", Metadata: []byte{}}}}), kerr.InconsistentGroupProtocol)
	h.wantState("g", Stable)
}

func TestProtocolSelectionByVote(t *testing.T) {
	h := newHarness(t)
	p := func(names ...string) []kmsg.JoinGroupRequestProtocol {
		var out []kmsg.JoinGroupRequestProtocol
		for _, n := range names {
			out = append(out, kmsg.JoinGroupRequestProtocol{Name: n, Metadata: []byte(n)})
		}
		return out
	}
	a := h.join("g", joinOpts{version: 3, protocols: p("range", "roundrobin", "sticky")})
	b := h.join("g", joinOpts{version: 3, protocols: p("roundrobin", "range")})
	c := h.join("g", joinOpts{version: 3, protocols: p("roundrobin", "range", "sticky")})
	// sticky is not supported by b: a member offering only sticky is
	// refused.
	h.wantCode(h.join("g", joinOpts{version: 3, protocols: p("sticky")}), kerr.InconsistentGroupProtocol)
	h.advance(6 * time.Second)
	for _, j := range []int{a, b, c} {
		if got := *h.joinResp(j).Protocol; got != "roundrobin" {
			t.Fatalf("selected %q, want roundrobin (2 votes to 1)", got)
		}
	}
	// The leader sees each member's metadata for the chosen protocol.
	for _, m := range h.joinResp(a).Members {
		if string(m.ProtocolMetadata) != "roundrobin" {
			t.Fatalf("metadata %q", m.ProtocolMetadata)
		}
	}
}

func TestGroupMaxSize(t *testing.T) {
	cfg := testConfig()
	cfg.MaxSize = 2
	h := newHarnessWith(t, cfg)
	a := h.join("g", joinOpts{version: 3})
	b := h.join("g", joinOpts{version: 3})
	c := h.join("g", joinOpts{version: 3})
	h.wantCode(c, kerr.GroupMaxSizeReached)
	h.advance(6 * time.Second)
	h.wantCode(a, kerr.None)
	h.wantCode(b, kerr.None)
	h.wantCode(h.join("g", joinOpts{version: 3}), kerr.GroupMaxSizeReached)
	// Members already in may rejoin (here: a repeated JoinGroup in
	// CompletingRebalance, answered from the state).
	h.wantCode(h.join("g", joinOpts{version: 3, member: h.joinResp(a).MemberID}), kerr.None)
}

// A client whose JoinGroup timed out sends another: the first is answered
// (REBALANCE_IN_PROGRESS) rather than dropped, the second gets the result.
func TestSupersededJoinIsAnswered(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("g", 2)
	j1 := h.join("g", joinOpts{member: ids[0]})
	j2 := h.join("g", joinOpts{member: ids[0]})
	h.wantCode(j1, kerr.RebalanceInProgress)
	h.wantParked(j2)
	j3 := h.join("g", joinOpts{member: ids[1]})
	h.wantCode(j2, kerr.None)
	h.wantCode(j3, kerr.None)
}

// Request bytes alias the request frame, which the network layer may
// reuse: the group must keep copies.
func TestGroupDoesNotRetainRequestBytes(t *testing.T) {
	h := newHarness(t)
	meta := subscription("t1")
	j := h.join("g", joinOpts{version: 3, protocols: []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: meta}}})
	h.advance(3 * time.Second)
	id := h.joinResp(j).MemberID
	assign := []byte("mine")
	h.sync("g", id, 1, map[string][]byte{id: assign})
	want := string(meta)
	for i := range meta {
		meta[i] = 0xff
	}
	copy(assign, "XXXX")
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{"g"}
	m := h.reply(h.send(req, "c")).(*kmsg.DescribeGroupsResponse).Groups[0].Members[0]
	if string(m.ProtocolMetadata) != want || string(m.MemberAssignment) != "mine" {
		t.Fatalf("the group kept references into request bytes: %q %q", m.ProtocolMetadata, m.MemberAssignment)
	}
}
