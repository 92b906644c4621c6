package group

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// These tests check how many heartbeats a KIP-848 group needs to settle,
// in a deterministic simulation of franz-go's and Java's clients: each
// member heartbeats every interval, and right after an answer that
// changed its assignment it heartbeats again at once (it acknowledges a
// revocation, or reports what it now owns). Kafka's reconciliation gives
// an unowned partition in the answer to the heartbeat that can take it,
// and its uniform assignor only moves partitions from members above
// their share to members below it, so a join settles within one
// interval.

const simInterval = 100 * time.Millisecond

// simMember is one simulated client and when it heartbeats next.
type simMember struct {
	c    *cclient
	next time.Time
}

// simGroup runs members against one group on the harness's clock.
type simGroup struct {
	h       *harness
	group   string
	topic   string
	members []*simMember
}

func newSimGroup(t *testing.T, partitions int32) *simGroup {
	cfg := testConfig()
	cfg.ConsumerHeartbeatInterval = simInterval
	h := newHarnessWith(t, cfg)
	h.topics = TopicMap{"t": {ID: topicID(1), Partitions: partitions}}
	return &simGroup{h: h, group: "g", topic: "t"}
}

// beat sends one heartbeat, then more at once while answers change the
// member's assignment.
func (s *simGroup) beat(m *simMember) {
	for range 10 {
		before := m.c.owned.clone()
		r := s.h.cgHeartbeat(s.group, m.c, 1)
		if r.Assignment == nil || m.c.owned.equal(before) {
			break
		}
	}
	m.next = s.h.now.Add(simInterval)
}

// join adds a member that heartbeats now (epoch 0).
func (s *simGroup) join(id string) *simMember {
	m := &simMember{c: newCClient(id, s.topic), next: s.h.now}
	s.members = append(s.members, m)
	s.beat(m)
	return m
}

// step advances the clock to the next due heartbeat and sends it.
func (s *simGroup) step() {
	next := s.members[0]
	for _, m := range s.members[1:] {
		if m.next.Before(next.next) {
			next = m
		}
	}
	if next.next.After(s.h.now) {
		s.h.advance(next.next.Sub(s.h.now))
	}
	s.beat(next)
}

// settled reports whether every partition is owned by exactly one client,
// each client owns what the coordinator says, and the group is Stable.
func (s *simGroup) settled() bool {
	g := s.h.c.Group(s.group)
	if g == nil || g.cg == nil || g.cg.stateName() != "Stable" {
		return false
	}
	seen := map[tpID]bool{}
	for _, m := range s.members {
		cm := g.cg.members[m.c.id]
		if cm == nil || !cm.assigned.equal(m.c.owned) {
			return false
		}
		for t, ps := range m.c.owned {
			for _, n := range ps {
				if seen[tpID{t, n}] {
					return false
				}
				seen[tpID{t, n}] = true
			}
		}
	}
	return len(seen) == int(s.h.topics[s.topic].Partitions)
}

// runUntilSettled steps until settled and returns how long it took from
// start, failing after limit.
func (s *simGroup) runUntilSettled(start time.Time, limit time.Duration) time.Duration {
	s.h.t.Helper()
	for !s.settled() {
		if s.h.now.Sub(start) > limit {
			s.h.t.Fatalf("not settled %v after the start", limit)
		}
		s.step()
		checkNoDoubleOwnership(s.h.t, s.h, s.group, s.clients())
	}
	return s.h.now.Sub(start)
}

func (s *simGroup) clients() []*cclient {
	var out []*cclient
	for _, m := range s.members {
		out = append(out, m.c)
	}
	return out
}

// formed starts n members one interval apart-ish and lets them settle:
// a stable group to measure a join against.
func (s *simGroup) formed(n int) {
	for i := range n {
		s.join(fmt.Sprintf("m%03d", i))
	}
	s.runUntilSettled(s.h.now, 50*simInterval)
}

// A member alone on a topic nobody owns gets every partition in the
// answer to its first heartbeat; so does a member joining a group whose
// other members do not subscribe to its topic.
func TestConsumerUnownedPartitionsComeInTheFirstAnswer(t *testing.T) {
	h := newConsumerHarness(t)
	a, b := newCClient("a", "a"), newCClient("b", "b")
	h.cgHeartbeat("g", a, 1)
	if a.owned.count() != 6 {
		t.Fatalf("first member on a: owns %v after its first heartbeat", a.owned)
	}
	h.cgHeartbeat("g", b, 1)
	if b.owned.count() != 3 {
		t.Fatalf("member on b, which nobody owns: owns %v after its first heartbeat", b.owned)
	}
}

// One member joining a stable group of 10 on 200 partitions: the others
// give up what it takes at their next heartbeat, and it has all of it at
// its own next one, one interval after it joined. No existing member
// both gives and takes partitions.
func TestConsumerJoinSettlesWithinOneInterval(t *testing.T) {
	s := newSimGroup(t, 200)
	s.formed(10)
	// Spread the members' phases over the interval, as real clients'.
	for i, m := range s.members {
		m.next = s.h.now.Add(time.Duration(i+1) * simInterval / 11)
	}
	g := s.h.c.Group("g").cg
	before := map[string]partitions{}
	for id, m := range g.members {
		before[id] = m.assigned.clone()
	}
	start := s.h.now
	s.join("new")
	for id, owned := range before {
		for tp, ps := range g.target[id] {
			for _, n := range ps {
				if !owned.has(tp, n) {
					t.Errorf("member %s: partition %d in its target, owned by another member", id, n)
				}
			}
		}
	}
	if took := s.runUntilSettled(start, 10*simInterval); took > simInterval {
		t.Fatalf("settled %v after the join, want within one interval (%v)", took, simInterval)
	}
}

// 100 members starting within one interval settle within three intervals
// of the first start: the target moves on with every join, but partitions
// move only from members above their share, so nobody waits on a chain of
// revocations.
func TestConsumerBurstOfJoinsSettles(t *testing.T) {
	s := newSimGroup(t, 200)
	start := s.h.now
	for i := range 100 {
		s.join(fmt.Sprintf("m%03d", i))
		// Heartbeats due before the next start happen first.
		for {
			due := slices.IndexFunc(s.members, func(m *simMember) bool { return !m.next.After(s.h.now) })
			if due < 0 {
				break
			}
			s.beat(s.members[due])
		}
		s.h.advance(simInterval / 100)
	}
	took := s.runUntilSettled(start, 30*simInterval)
	t.Logf("settled %v after the first start", took)
	if took > 3*simInterval {
		t.Fatalf("settled %v after the first start, want within three intervals (%v)", took, 3*simInterval)
	}
}

// A member whose heartbeat already leaves out the partitions it must give
// up is not made to wait for a revocation: it moves to the new epoch in
// that answer.
func TestConsumerRevokedAlreadyMovesOn(t *testing.T) {
	h := newConsumerHarness(t)
	a, b := newCClient("a", "a"), newCClient("b", "a")
	h.cgHeartbeat("g", a, 1)
	h.cgHeartbeat("g", b, 1)
	a.owned = h.c.Group("g").cg.target["a"].clone()
	h.cgHeartbeat("g", a, 1)
	if a.epoch != 2 || a.owned.count() != 3 {
		t.Fatalf("a reporting only its target: epoch %d owns %v", a.epoch, a.owned)
	}
}
