package group

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// checkInvariants verifies the group's internal bookkeeping.
func checkInvariants(t *testing.T, g *Group) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("group %s (%v gen %d): %s", g.id, g.state, g.generation, fmt.Sprintf(format, args...))
	}
	if len(g.order) != len(g.members) {
		fail("order %v vs %d members", g.order, len(g.members))
	}
	awaiting := 0
	for _, id := range g.order {
		m := g.members[id]
		if m == nil || m.id != id {
			fail("order has %s, members do not", id)
		}
		if m.join != nil {
			awaiting++
		}
		if m.instanceID != "" && g.staticMembers[m.instanceID] != id {
			fail("static member %s not mapped", id)
		}
		if g.pending[id] {
			fail("%s both member and pending", id)
		}
		if g.state == PreparingRebalance || g.state == Empty || g.state == Dead {
			if m.sync != nil {
				fail("parked SyncGroup of %s in %v", id, g.state)
			}
		}
		if m.join != nil && g.state != PreparingRebalance && (g.state != Stable || !m.static()) {
			fail("parked JoinGroup of %s in %v", id, g.state)
		}
	}
	if awaiting != g.numAwaiting {
		fail("numAwaiting %d, counted %d", g.numAwaiting, awaiting)
	}
	for inst, id := range g.staticMembers {
		if m := g.members[id]; m == nil || m.instanceID != inst {
			fail("static mapping %s -> %s dangling", inst, id)
		}
	}
	for id := range g.pendingSync {
		if g.members[id] == nil {
			fail("pending sync of non-member %s", id)
		}
	}
	switch g.state {
	case Empty, Dead:
		if len(g.members) != 0 {
			fail("members in %v", g.state)
		}
	case CompletingRebalance, Stable:
		if len(g.members) == 0 || g.members[g.leader] == nil || g.protocol == "" {
			fail("no members, leader or protocol in %v", g.state)
		}
	}
	if len(g.members) > 0 && g.members[g.leader] == nil {
		fail("leader %q is not a member", g.leader)
	}
	for k := range g.timers {
		if k.Kind == TimerSession && g.members[k.Member] == nil {
			fail("session timer of non-member %s", k.Member)
		}
	}
}

// simClient is a simulated consumer: it remembers its member id and the
// generation it last saw, and does what a client would, or something
// random.
type simClient struct {
	name     string
	instance string
	member   string
	gen      int32
	topics   []string
}

// TestRandomClients runs seeded random client behaviour against one group
// (with coordinator restarts) and checks invariants after every step; the
// harness checks that no request is answered twice and, at the end, that
// every request was answered.
func TestRandomClients(t *testing.T) {
	seeds := 150
	if testing.Short() {
		seeds = 20
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runRandom(t, uint64(seed)) })
	}
}

func runRandom(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	h := newHarness(t)
	var clients []*simClient
	for i := range 5 {
		c := &simClient{name: fmt.Sprintf("c%d", i), topics: []string{"t1"}}
		if i%2 == 1 {
			c.instance = fmt.Sprintf("inst%d", i)
		}
		clients = append(clients, c)
	}
	learn := func(c *simClient, id int) {
		switch r := h.reply(id).(type) {
		case *kmsg.JoinGroupResponse:
			if r.MemberID != "" {
				c.member = r.MemberID
			}
			if r.ErrorCode == 0 {
				c.gen = r.Generation
			}
		}
	}
	for step := range 300 {
		c := clients[rng.IntN(len(clients))]
		gen := c.gen
		if rng.IntN(10) == 0 {
			gen = rng.Int32N(5)
		}
		switch a := rng.IntN(20); {
		case a < 4:
			o := joinOpts{member: c.member, instance: c.instance, clientID: c.name, protocols: rangeOn(c.topics...),
				session: time.Duration(6+rng.IntN(10)) * time.Second, rebalance: time.Duration(5+rng.IntN(30)) * time.Second}
			if rng.IntN(4) == 0 {
				o.version = 3
				o.instance = ""
			}
			if rng.IntN(6) == 0 {
				o.member = "" // a restart
			}
			id := h.join("g", o)
			learn(c, id)
		case a < 5:
			c.topics = append(c.topics, fmt.Sprintf("t%d", rng.IntN(4)))
		case a < 8:
			var assign map[string][]byte
			if g := h.c.Group("g"); g != nil && g.Leader() == c.member {
				assign = map[string][]byte{}
				for _, m := range g.Members() {
					assign[m] = []byte(m)
				}
			}
			h.syncV("g", c.member, c.instance, gen, assign, 5)
		case a < 12:
			h.heartbeatI("g", c.member, c.instance, gen)
		case a < 13:
			m := kmsg.LeaveGroupRequestMember{MemberID: c.member}
			if c.instance != "" && rng.IntN(2) == 0 {
				m = kmsg.LeaveGroupRequestMember{InstanceID: &c.instance}
			}
			h.leave("g", m)
		case a < 15:
			h.commit("g", c.member, gen, "t1", rng.Int32N(3), int64(step))
		case a < 16:
			req := kmsg.NewPtrDeleteGroupsRequest()
			req.Groups = []string{"g"}
			h.send(req, "admin")
		case a < 19:
			h.advance(time.Duration(rng.IntN(12000)) * time.Millisecond)
		default:
			if rng.IntN(4) == 0 {
				h = restart(t, h)
			}
		}
		if g := h.c.Group("g"); g != nil {
			checkInvariants(t, g)
		}
	}
	if g := h.c.Group("g"); g != nil && !slices.Contains([]State{Empty, PreparingRebalance, CompletingRebalance, Stable, Dead}, g.State()) {
		t.Fatalf("state %v", g.State())
	}
}
