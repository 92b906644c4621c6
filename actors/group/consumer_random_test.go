package group

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// cclient is a simulated KIP-848 consumer: what it believes it owns, and
// the epoch it heartbeats with. It follows the protocol the way Java's
// consumer does: an assignment in an answer is what it owns from then
// on (it gives up the rest first, then takes the new), and a fenced or
// unknown member drops everything and rejoins with epoch 0.
type cclient struct {
	id       string
	instance *string
	topics   []string
	regex    *string
	epoch    int32 // 0: not joined
	joined   bool
	owned    partitions
	lastSeen int32 // highest epoch an answer gave this member id
}

func topicID(n byte) [16]byte { return [16]byte{15: n} }

func consumerTopics() TopicMap {
	return TopicMap{
		"a":     {ID: topicID(1), Partitions: 6},
		"b":     {ID: topicID(2), Partitions: 3},
		"c":     {ID: topicID(3), Partitions: 4},
		"other": {ID: topicID(4), Partitions: 2},
	}
}

func (h *harness) cgHeartbeat(group string, c *cclient, version int16) *kmsg.ConsumerGroupHeartbeatResponse {
	h.t.Helper()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = version
	req.Group = group
	req.MemberID = c.id
	req.MemberEpoch = c.epoch
	req.InstanceID = c.instance
	req.RebalanceTimeoutMillis = 30000
	if c.epoch == 0 {
		req.SubscribedTopicNames = c.topics
		if req.SubscribedTopicNames == nil {
			req.SubscribedTopicNames = []string{}
		}
		// A full request: "" says "no regex" (null would keep the one
		// the coordinator has).
		req.SubscribedTopicRegex = c.regex
		if c.regex == nil {
			req.SubscribedTopicRegex = strPtr("")
		}
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	} else {
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		for _, id := range c.owned.sortedTopics() {
			req.Topics = append(req.Topics, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: id, Partitions: slices.Clone(c.owned[id])})
		}
	}
	id := h.send(req, "client-"+c.id)
	r, ok := h.reply(id).(*kmsg.ConsumerGroupHeartbeatResponse)
	if !ok {
		h.t.Fatalf("heartbeat of %s: no answer (%#v)", c.id, h.reply(id))
	}
	switch kerr.Code(r.ErrorCode) {
	case kerr.None:
		if r.MemberEpoch < c.lastSeen {
			h.t.Fatalf("member %s: epoch went back from %d to %d", c.id, c.lastSeen, r.MemberEpoch)
		}
		c.lastSeen = r.MemberEpoch
		c.epoch = r.MemberEpoch
		c.joined = true
		if r.Assignment != nil {
			c.owned = partitions{}
			for _, t := range r.Assignment.Topics {
				for _, n := range t.Partitions {
					c.owned.add(t.TopicID, n)
				}
			}
		}
	case kerr.UnreleasedInstanceID:
		// A static member's new incarnation while the old one still
		// holds the instance id (it crashed without leaving): it may
		// join once the old one's session ends.
		if c.epoch != 0 || c.instance == nil {
			h.t.Fatalf("UNRELEASED_INSTANCE_ID for %s at epoch %d", c.id, c.epoch)
		}
	case kerr.FencedMemberEpoch, kerr.UnknownMemberID:
		c.epoch, c.joined, c.owned, c.lastSeen = 0, false, partitions{}, 0
	default:
		h.t.Fatalf("heartbeat of %s: %v %v", c.id, kerr.Code(r.ErrorCode), r.ErrorMessage)
	}
	return r
}

func (h *harness) cgLeave(group string, c *cclient, epoch int32) {
	h.t.Helper()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID, req.MemberEpoch, req.InstanceID = group, c.id, epoch, c.instance
	// A member the coordinator already fenced (its session ended) is
	// unknown; any other answer but NONE is wrong.
	known := false
	if g := h.c.Group(group); g != nil && g.cg != nil {
		known = g.cg.members[c.id] != nil
	}
	id := h.send(req, "client-"+c.id)
	if code := errorCode(h.reply(id)); code != kerr.None && (known || code != kerr.UnknownMemberID) {
		h.t.Fatalf("leave of %s: %v", c.id, code)
	}
	c.epoch, c.joined, c.owned, c.lastSeen = 0, false, partitions{}, 0
}

// restart replays the log into a new coordinator, as a coordinator that
// moved or restarted does.
func (h *harness) restart() {
	h.t.Helper()
	h.completeAppends()
	h.c = NewCoordinator(h.cfg)
	clear(h.timers)
	h.c.BeginLoad()
	for _, rec := range h.log {
		if err := h.c.Replay(rec.Key, rec.Value); err != nil {
			h.t.Fatalf("replay: %v", err)
		}
	}
	h.apply(h.c.EndLoad(h.now))
}

// checkNoDoubleOwnership: no partition is owned by two live clients, nor
// (on the coordinator) by two members.
func checkNoDoubleOwnership(t *testing.T, h *harness, group string, clients []*cclient) {
	t.Helper()
	seen := map[tpID]string{}
	for _, c := range clients {
		for tp, ps := range c.owned {
			for _, n := range ps {
				if o, ok := seen[tpID{tp, n}]; ok {
					t.Fatalf("partition %v/%d owned by clients %s and %s", tp[15], n, o, c.id)
				}
				seen[tpID{tp, n}] = c.id
			}
		}
	}
	g := h.c.Group(group)
	if g == nil || g.cg == nil {
		return
	}
	held := map[tpID]string{}
	for _, id := range g.cg.sortedMembers() {
		m := g.cg.members[id]
		for _, p := range []partitions{m.assigned, m.revoking} {
			for tp, ps := range p {
				for _, n := range ps {
					if o, ok := held[tpID{tp, n}]; ok {
						t.Fatalf("partition %v/%d held by members %s and %s", tp[15], n, o, id)
					}
					held[tpID{tp, n}] = id
				}
			}
		}
	}
}

// TestConsumerGroupRandomized runs seeded random joins, leaves, crashes,
// static restarts, subscription and partition changes and coordinator
// restarts against one consumer group, checking after every step that no
// partition is owned twice and that epochs never go back; then, with the
// chaos over, that every subscribed partition ends up owned by exactly
// one live member and the group is Stable.
func TestConsumerGroupRandomized(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { runConsumerSeed(t, seed) })
	}
}

func runConsumerSeed(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x848))
	cfg := testConfig()
	cfg.ConsumerSessionTimeout = 10 * time.Second
	if seed%2 == 0 {
		cfg.ConsumerAssignors = []string{AssignorRange, AssignorUniform}
	}
	h := newHarnessWith(t, cfg)
	h.topics = consumerTopics()
	const group = "g"
	subs := [][]string{{"a"}, {"a", "b"}, {"b", "c"}, {"c"}}
	var clients []*cclient
	for i := range 6 {
		c := &cclient{id: fmt.Sprintf("m%d", i), topics: subs[rng.IntN(len(subs))], owned: partitions{}}
		if i == 5 {
			c.topics, c.regex = nil, strPtr("a|c")
		}
		if i%3 == 0 {
			c.instance = strPtr(fmt.Sprintf("instance-%d", i))
		}
		clients = append(clients, c)
	}
	alive := map[*cclient]bool{}
	recreated := 0
	var lastGroupEpoch int32
	checkEpoch := func() {
		if g := h.c.Group(group); g != nil && g.cg != nil {
			if g.cg.epoch < lastGroupEpoch {
				t.Fatalf("group epoch went back from %d to %d", lastGroupEpoch, g.cg.epoch)
			}
			lastGroupEpoch = g.cg.epoch
		}
	}
	for step := 0; step < 300; step++ {
		c := clients[rng.IntN(len(clients))]
		switch op := rng.IntN(22); {
		case op < 10: // heartbeat (or join)
			alive[c] = true
			h.cgHeartbeat(group, c, int16(rng.IntN(2)))
		case op == 10 && c.joined: // leave
			h.cgLeave(group, c, leaveEpoch)
			delete(alive, c)
		case op == 11 && c.joined && c.instance != nil: // static member restarts
			h.cgLeave(group, c, staticLeaveEpoch)
			c.id = c.id + "r"
			delete(alive, c)
		case op == 12 && c.joined: // crash: it stops consuming and heartbeating
			delete(alive, c)
			c.epoch, c.joined, c.owned, c.lastSeen = 0, false, partitions{}, 0
			c.id = c.id + "x"
		case op == 13:
			h.advance(time.Duration(rng.IntN(12000)) * time.Millisecond)
			// Clients whose session ended are fenced on their next
			// heartbeat; until then they still consume, which is safe
			// only because the coordinator gives their partitions to
			// nobody else until the partitions are released or the
			// member is removed: model Kafka's client, which stops
			// fetching when its own session would have expired.
			for other := range alive {
				if g := h.c.Group(group); g == nil || g.cg == nil || g.cg.members[other.id] == nil {
					other.owned = partitions{}
				}
			}
		case op == 14:
			h.restart()
		case op == 15 && c.joined: // change subscription
			c.topics = subs[rng.IntN(len(subs))]
			c.regex = nil
			c.epoch = 0 // resubscribe as a full heartbeat
			c.owned = partitions{}
			alive[c] = true
			h.cgHeartbeat(group, c, 1)
		case op == 16:
			meta := h.topics["b"]
			if meta.Partitions < 6 {
				meta.Partitions++
				h.topics["b"] = meta
			}
		case op == 17: // topic c deleted; its partitions are gone for everyone
			if meta, ok := h.topics["c"]; ok {
				delete(h.topics, "c")
				for _, other := range clients {
					delete(other.owned, meta.ID)
				}
			}
		case op == 18: // topic c created again: a new topic id
			if _, ok := h.topics["c"]; !ok {
				recreated++
				h.topics["c"] = TopicMeta{ID: topicID(byte(100 + recreated)), Partitions: 4}
			}
		}
		checkNoDoubleOwnership(t, h, group, clients)
		checkEpoch()
	}
	// Calm: every live client heartbeats until nothing moves.
	var live []*cclient
	for c := range alive {
		live = append(live, c)
	}
	slices.SortFunc(live, func(a, b *cclient) int { return cmpString(a.id, b.id) })
	for round := 0; round < 20; round++ {
		for _, c := range live {
			h.cgHeartbeat(group, c, 1)
			checkNoDoubleOwnership(t, h, group, clients)
		}
		h.advance(time.Second)
	}
	g := h.c.Group(group)
	if len(live) == 0 {
		return
	}
	if g == nil || g.cg == nil {
		t.Fatal("group gone with live members")
	}
	if s := g.cg.stateName(); s != "Stable" {
		t.Fatalf("group %s after calm, want Stable", s)
	}
	want := map[tpID]bool{}
	for _, c := range live {
		for name, meta := range h.topics {
			if slices.Contains(c.topics, name) || c.regex != nil && (name == "a" || name == "c") {
				for n := range meta.Partitions {
					want[tpID{meta.ID, n}] = true
				}
			}
		}
	}
	got := map[tpID]bool{}
	for _, c := range live {
		for tp, ps := range c.owned {
			for _, n := range ps {
				got[tpID{tp, n}] = true
			}
		}
		if m := g.cg.members[c.id]; m == nil || !m.assigned.equal(c.owned) {
			t.Fatalf("client %s owns %v, coordinator says %v", c.id, c.owned, m)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d partitions owned, %d subscribed", len(got), len(want))
	}
	for tp := range want {
		if !got[tp] {
			t.Fatalf("partition %v/%d subscribed but not owned", tp.topic[15], tp.partition)
		}
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
