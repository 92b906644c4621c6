package group

import (
	"testing"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// parkedCode stands for "no answer yet: parked" in the matrix.
const parkedCode kerr.Code = -100

type matrixSetup struct {
	h   *harness
	ids []string
	gen int32
}

// reach builds a group "g" in the named state. ids[0] is the leader
// (where there are members); gen is the generation members hold.
func reach(t *testing.T, state string) matrixSetup {
	h := newHarness(t)
	switch state {
	case "Absent":
		return matrixSetup{h, []string{"ghost"}, 1}
	case "Empty":
		ids := h.stableGroup("g", 1)
		h.commit("g", ids[0], 1, "t1", 0, 1)
		h.leave("g", kmsg.LeaveGroupRequestMember{MemberID: ids[0]})
		h.wantState("g", Empty)
		return matrixSetup{h, ids, 2}
	case "PreparingRebalance":
		ids := h.stableGroup("g", 3)
		h.join("g", joinOpts{member: ids[1], protocols: rangeOn("t1", "t2")})
		h.wantState("g", PreparingRebalance)
		return matrixSetup{h, ids, 1}
	case "CompletingRebalance":
		ids := h.stableGroup("g", 2)
		h.join("g", joinOpts{member: ids[0]})
		h.join("g", joinOpts{member: ids[1]})
		h.wantState("g", CompletingRebalance)
		return matrixSetup{h, ids, 2}
	case "Stable":
		ids := h.stableGroup("g", 2)
		return matrixSetup{h, ids, 1}
	case "Dead":
		ids := h.stableGroup("g", 1)
		h.commit("g", ids[0], 1, "t1", 0, 1)
		h.leave("g", kmsg.LeaveGroupRequestMember{MemberID: ids[0]})
		h.holdAppends = true
		req := kmsg.NewPtrDeleteGroupsRequest()
		req.Groups = []string{"g"}
		h.send(req, "admin")
		h.wantState("g", Dead)
		return matrixSetup{h, ids, 2}
	}
	t.Fatalf("unknown state %s", state)
	return matrixSetup{}
}

// TestEveryStateAgainstEveryRequest is the state machine's table: each
// request kind sent to a group in each state, with the answer Kafka gives.
func TestEveryStateAgainstEveryRequest(t *testing.T) {
	type request struct {
		name string
		send func(s matrixSetup) int
	}
	follower := func(s matrixSetup) string { return s.ids[len(s.ids)-1] }
	requests := []request{
		{"JoinNew", func(s matrixSetup) int { return s.h.join("g", joinOpts{clientID: "new"}) }},
		{"JoinKnownSameMetadata", func(s matrixSetup) int { return s.h.join("g", joinOpts{member: follower(s)}) }},
		{"SyncFollower", func(s matrixSetup) int { return s.h.sync("g", follower(s), s.gen, nil) }},
		{"Heartbeat", func(s matrixSetup) int { return s.h.heartbeat("g", follower(s), s.gen) }},
		{"Leave", func(s matrixSetup) int {
			return s.h.leave("g", kmsg.LeaveGroupRequestMember{MemberID: follower(s)})
		}},
		{"LeaveAnswerMember", func(s matrixSetup) int {
			id := s.h.leave("g", kmsg.LeaveGroupRequestMember{MemberID: follower(s)})
			// The per-member code is what matters from v3.
			r := s.h.reply(id).(*kmsg.LeaveGroupResponse)
			if len(r.Members) == 1 {
				r.ErrorCode = r.Members[0].ErrorCode
			}
			return id
		}},
		{"CommitMember", func(s matrixSetup) int { return s.h.commit("g", follower(s), s.gen, "t1", 0, 5) }},
		{"CommitSimple", func(s matrixSetup) int { return s.h.commit("g", "", -1, "t1", 0, 5) }},
		{"OffsetFetch", func(s matrixSetup) int {
			req := kmsg.NewPtrOffsetFetchRequest()
			req.Version, req.Group = 5, "g"
			req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t1", Partitions: []int32{0}}}
			return s.h.send(req, "c")
		}},
		{"DeleteGroups", func(s matrixSetup) int {
			req := kmsg.NewPtrDeleteGroupsRequest()
			req.Groups = []string{"g"}
			return s.h.send(req, "admin")
		}},
	}
	const (
		ok      = kerr.None
		unknown = kerr.UnknownMemberID
		rip     = kerr.RebalanceInProgress
		cna     = kerr.CoordinatorNotAvailable
		mir     = kerr.MemberIDRequired
		parked  = parkedCode
	)
	want := map[string][]kerr.Code{
		//                     JoinNew JoinKnown Sync    Heartbeat Leave LeaveMember CommitMember CommitSimple Fetch DeleteGroups
		"Absent":              {mir, unknown, unknown, unknown, ok, unknown, kerr.IllegalGeneration, ok, ok, kerr.GroupIDNotFound},
		"Empty":               {mir, unknown, unknown, unknown, ok, unknown, unknown, ok, ok, ok},
		"PreparingRebalance":  {mir, parked, rip, rip, ok, ok, ok, unknown, ok, kerr.NonEmptyGroup},
		"CompletingRebalance": {mir, ok, parked, ok, ok, ok, rip, unknown, ok, kerr.NonEmptyGroup},
		"Stable":              {mir, ok, ok, ok, ok, ok, ok, unknown, ok, kerr.NonEmptyGroup},
		"Dead":                {cna, cna, cna, cna, cna, cna, cna, cna, ok, kerr.GroupIDNotFound},
	}
	for state, codes := range want {
		for i, r := range requests {
			t.Run(state+"/"+r.name, func(t *testing.T) {
				s := reach(t, state)
				id := r.send(s)
				resp := s.h.reply(id)
				switch {
				case codes[i] == parkedCode && resp != nil:
					t.Fatalf("answered %v, want parked", errorCode(resp))
				case codes[i] == parkedCode:
				case resp == nil:
					t.Fatalf("parked, want %v", codes[i])
				case errorCode(resp) != codes[i]:
					t.Fatalf("answered %v, want %v", errorCode(resp), codes[i])
				}
				describe(t, s.h)
			})
		}
	}
}

// describe checks DescribeGroups and ListGroups agree with the state.
func describe(t *testing.T, h *harness) {
	t.Helper()
	g := h.c.Group("g")
	cur := "Dead"
	if g != nil && g.exists() {
		cur = g.State().String()
	}
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Version = 5
	req.Groups = []string{"g"}
	d := h.reply(h.send(req, "c")).(*kmsg.DescribeGroupsResponse).Groups[0]
	if d.State != cur || d.ErrorCode != 0 {
		t.Fatalf("describe says %s (%d), state is %s", d.State, d.ErrorCode, cur)
	}
	lreq := kmsg.NewPtrListGroupsRequest()
	lreq.Version = 4
	lreq.StatesFilter = []string{cur}
	l := h.reply(h.send(lreq, "c")).(*kmsg.ListGroupsResponse)
	listed := len(l.Groups) == 1 && l.Groups[0].Group == "g" && l.Groups[0].GroupState == cur
	if listed != (cur != "Dead") {
		t.Fatalf("list by state %s: %#v", cur, l.Groups)
	}
}

func TestDescribeAndListGroups(t *testing.T) {
	h := newHarness(t)
	ids := h.stableGroup("a", 2)
	h.commit("simple", "", -1, "t", 0, 1)
	h.join("b", joinOpts{version: 3})

	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Version = 5
	req.Groups = []string{"a", "b", "missing"}
	r := h.reply(h.send(req, "c")).(*kmsg.DescribeGroupsResponse)
	a := r.Groups[0]
	if a.State != "Stable" || a.Protocol != "range" || a.ProtocolType != "consumer" || len(a.Members) != 2 ||
		a.Members[0].MemberID != ids[0] || string(a.Members[0].MemberAssignment) != "assignment-of-"+ids[0] ||
		string(a.Members[0].ProtocolMetadata) != string(subscription("t1")) || a.Members[0].ClientID != "c0" || a.AuthorizedOperations != -2147483648 {
		t.Fatalf("%#v", a)
	}
	if bb := r.Groups[1]; bb.State != "PreparingRebalance" || bb.Protocol != "" || len(bb.Members) != 1 || len(bb.Members[0].ProtocolMetadata) != 0 {
		t.Fatalf("outside Stable, no protocol, metadata or assignment: %#v", bb)
	}
	if m := r.Groups[2]; m.State != "Dead" || m.ErrorCode != 0 {
		t.Fatalf("%#v", m)
	}
	req.Version = 6
	r = h.reply(h.send(req, "c")).(*kmsg.DescribeGroupsResponse)
	if kerr.Code(r.Groups[2].ErrorCode) != kerr.GroupIDNotFound {
		t.Fatalf("v6 unknown group: %#v", r.Groups[2])
	}

	list := func(version int16, states ...string) []string {
		req := kmsg.NewPtrListGroupsRequest()
		req.Version = version
		req.StatesFilter = states
		var out []string
		for _, g := range h.reply(h.send(req, "c")).(*kmsg.ListGroupsResponse).Groups {
			out = append(out, g.Group+"/"+g.ProtocolType+"/"+g.GroupState)
		}
		return out
	}
	if got := list(3); len(got) != 3 || got[0] != "a/consumer/Stable" || got[1] != "b/consumer/PreparingRebalance" || got[2] != "simple//Empty" {
		t.Fatalf("%v", got)
	}
	if got := list(4, "stable", "Empty"); len(got) != 2 || got[0] != "a/consumer/Stable" || got[1] != "simple//Empty" {
		t.Fatalf("%v", got)
	}
	lreq := kmsg.NewPtrListGroupsRequest()
	lreq.Version, lreq.TypesFilter = 5, []string{"consumer"}
	if g := h.reply(h.send(lreq, "c")).(*kmsg.ListGroupsResponse).Groups; len(g) != 0 {
		t.Fatalf("classic groups are not of type consumer: %v", g)
	}
	h.advance(3 * time.Second)
}

func TestDeleteGroups(t *testing.T) {
	h := newHarness(t)
	h.stableGroup("busy", 1)
	h.commit("idle", "", -1, "t", 0, 1)
	h.commit("idle", "", -1, "t", 1, 2)
	logLen := len(h.log)
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Version = 2
	req.Groups = []string{"busy", "idle", "nope"}
	r := h.reply(h.send(req, "admin")).(*kmsg.DeleteGroupsResponse)
	want := []kerr.Code{kerr.NonEmptyGroup, kerr.None, kerr.GroupIDNotFound}
	for i, g := range r.Groups {
		if g.Group != req.Groups[i] || kerr.Code(g.ErrorCode) != want[i] {
			t.Fatalf("%d: %#v", i, g)
		}
	}
	if h.c.Group("idle") != nil || h.fetched("idle", "t", 0) != -1 {
		t.Fatalf("idle group not deleted")
	}
	// Two offset tombstones and a group tombstone.
	if len(h.log) != logLen+3 {
		t.Fatalf("%d records written", len(h.log)-logLen)
	}
	for _, rec := range h.log[logLen:] {
		if rec.Value != nil {
			t.Fatalf("not a tombstone")
		}
	}
	k, _ := DecodeKey(h.log[len(h.log)-1].Key)
	if k.Kind != KeyGroup || k.Group != "idle" {
		t.Fatalf("%+v", k)
	}
}

// The answer to a batched DeleteGroups waits for every group's append.
func TestDeleteGroupsWaitsForAppends(t *testing.T) {
	h := newHarness(t)
	h.commit("a", "", -1, "t", 0, 1)
	h.commit("b", "", -1, "t", 0, 1)
	h.holdAppends = true
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Groups = []string{"a", "b"}
	id := h.send(req, "admin")
	h.wantParked(id)
	if len(h.held) != 2 {
		t.Fatalf("%d appends", len(h.held))
	}
	a := h.held[0]
	h.held = h.held[1:]
	h.log = append(h.log, a.Records...)
	h.apply(h.c.OnAppended(a, kerr.None, h.now))
	h.wantParked(id)
	h.holdAppends = false
	h.completeAppends()
	h.wantCode(id, kerr.None)
}
