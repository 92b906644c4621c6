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

// classicClient is a simulated cooperative classic consumer of topic "a":
// it joins with the partitions it owns in its subscription and owns what
// its SyncGroup answer says.
type classicClient struct {
	id    string
	gen   int32
	owned []int32
}

func (c *classicClient) protocols() []kmsg.JoinGroupRequestProtocol {
	m := kmsg.NewConsumerMemberMetadata()
	m.Version = 1
	m.Topics = []string{"a"}
	if len(c.owned) > 0 {
		m.OwnedPartitions = []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: "a", Partitions: slices.Clone(c.owned)}}
	}
	return []kmsg.JoinGroupRequestProtocol{{Name: "cooperative-sticky", Metadata: m.AppendTo(nil)}}
}

// rejoin runs one JoinGroup/SyncGroup round for c.
func (h *harness) rejoin(group string, c *classicClient) {
	h.t.Helper()
	id := h.join(group, joinOpts{member: c.id, protocols: c.protocols(), clientID: "classic"})
	jr := h.joinResp(id)
	if jr.ErrorCode != 0 {
		h.t.Fatalf("classic rejoin of %s: %v", c.id, kerr.Code(jr.ErrorCode))
	}
	c.gen = jr.Generation
	sr := h.syncResp(h.sync(group, c.id, c.gen, nil))
	if sr.ErrorCode != 0 {
		h.t.Fatalf("classic sync of %s: %v", c.id, kerr.Code(sr.ErrorCode))
	}
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(sr.MemberAssignment); err != nil {
		h.t.Fatalf("assignment of %s: %v", c.id, err)
	}
	c.owned = nil
	for _, t := range a.Topics {
		c.owned = append(c.owned, t.Partitions...)
	}
}

// classicRound heartbeats c and rejoins when told to.
func (h *harness) classicRound(group string, c *classicClient) {
	h.t.Helper()
	switch code := errorCode(h.reply(h.heartbeat(group, c.id, c.gen))); code {
	case kerr.None:
	case kerr.RebalanceInProgress:
		h.rejoin(group, c)
	default:
		h.t.Fatalf("classic heartbeat of %s: %v", c.id, code)
	}
}

// Kafka 4's online upgrade: a Stable classic group of two cooperative
// members becomes a consumer group when a consumer protocol member joins;
// the classic members reconcile through rejoins (their heartbeats answer
// REBALANCE_IN_PROGRESS), nobody owns a partition twice, the three end up
// with two partitions each, and all of it survives a coordinator reload.
func TestClassicMembersInConsumerGroup(t *testing.T) {
	h := newConsumerHarness(t)
	// The classic group: A leads and assigns 0-2 to itself, 3-5 to B.
	var classics []*classicClient
	var parked []int
	for range 2 {
		c := &classicClient{}
		first := h.join("g", joinOpts{protocols: c.protocols(), clientID: "classic"})
		c.id = h.joinResp(first).MemberID
		parked = append(parked, h.join("g", joinOpts{member: c.id, protocols: c.protocols(), clientID: "classic"}))
		classics = append(classics, c)
	}
	h.advance(2 * h.c.cfg.initialDelay())
	for i, p := range parked {
		classics[i].gen = h.joinResp(p).Generation
	}
	asg := func(ps ...int32) []byte {
		a := kmsg.NewConsumerMemberAssignment()
		a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: "a", Partitions: ps}}
		return a.AppendTo(nil)
	}
	leader := h.joinResp(parked[0]).LeaderID
	byID := map[string]*classicClient{classics[0].id: classics[0], classics[1].id: classics[1]}
	other := classics[0].id
	if other == leader {
		other = classics[1].id
	}
	h.sync("g", other, classics[0].gen, nil)
	h.sync("g", leader, classics[0].gen, map[string][]byte{leader: asg(0, 1, 2), other: asg(3, 4, 5)})
	byID[leader].owned, byID[other].owned = []int32{0, 1, 2}, []int32{3, 4, 5}
	h.wantState("g", Stable)

	cons := newCClient("c", "a")
	h.cgHeartbeat("g", cons, 1)
	g := h.c.Group("g")
	if g.cg == nil || len(g.cg.members) != 3 || !cons.joined || cons.owned.count() != 0 {
		t.Fatalf("after the upgrade: %+v, consumer %+v", g.cg, cons)
	}
	check := func() {
		t.Helper()
		seen := map[int32]string{}
		for _, c := range classics {
			for _, p := range c.owned {
				if o, dup := seen[p]; dup {
					t.Fatalf("partition %d owned by %s and %s", p, o, c.id)
				}
				seen[p] = c.id
			}
		}
		for _, p := range cons.owned[topicID(1)] {
			if o, dup := seen[p]; dup {
				t.Fatalf("partition %d owned by %s and the consumer member", p, o)
			}
		}
	}
	for round := range 8 {
		if round == 4 {
			h.restart()
		}
		for _, c := range classics {
			h.classicRound("g", c)
			check()
		}
		h.cgHeartbeat("g", cons, 1)
		check()
		h.advance(time.Second)
	}
	for _, c := range classics {
		if len(c.owned) != 2 {
			t.Errorf("classic member %s owns %v", c.id, c.owned)
		}
	}
	if cons.owned.count() != 2 {
		t.Errorf("consumer member owns %v", cons.owned)
	}
	d := h.c.Group("g").ConsumerGroupDescribe(1)
	if d.State != "Stable" || len(d.Members) != 3 {
		t.Fatalf("describe: %+v", d)
	}
	types := 0
	for _, m := range d.Members {
		types += int(m.MemberType)
	}
	if types != 1 {
		t.Errorf("member types %+v, want two classic (0) and one consumer (1)", d.Members)
	}
	// A classic member commits with its generation.
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 8
	req.Group, req.MemberID, req.Generation = "g", classics[0].id, classics[0].gen
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "a", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: classics[0].owned[0], Offset: 9, LeaderEpoch: -1}}}}
	if code := errorCode(h.reply(h.send(req, "c"))); code != kerr.None {
		t.Errorf("classic member's commit: %v", code)
	}
	req.Generation--
	if code := errorCode(h.reply(h.send(req, "c"))); code != kerr.IllegalGeneration {
		t.Errorf("classic member's commit with an old generation: %v", code)
	}
	// A classic member leaves; the others take its partitions.
	lv := kmsg.NewPtrLeaveGroupRequest()
	lv.Version = 3
	lv.Group = "g"
	lv.Members = []kmsg.LeaveGroupRequestMember{{MemberID: classics[1].id}}
	h.send(lv, "c")
	classics = classics[:1]
	for range 6 {
		h.classicRound("g", classics[0])
		h.cgHeartbeat("g", cons, 1)
		check()
	}
	if len(classics[0].owned)+cons.owned.count() != 6 {
		t.Errorf("after a classic member left: classic %v, consumer %v", classics[0].owned, cons.owned)
	}

	// The last consumer protocol member leaves: the group goes back to
	// the classic protocol and its classic member rejoins it as one.
	h.cgLeave("g", cons, leaveEpoch)
	if g := h.c.Group("g"); g.cg != nil || g.State() != PreparingRebalance {
		t.Fatalf("after the last consumer member left: cg %v, state %v", g.cg, g.State())
	}
	c := classics[0]
	if code := errorCode(h.reply(h.heartbeat("g", c.id, c.gen))); code != kerr.RebalanceInProgress {
		t.Fatalf("classic heartbeat after the downgrade: %v", code)
	}
	jr := h.joinResp(h.join("g", joinOpts{member: c.id, protocols: c.protocols(), clientID: "classic"}))
	if jr.ErrorCode != 0 || jr.LeaderID != c.id {
		t.Fatalf("classic rejoin after the downgrade: %+v", jr)
	}
	h.wantCode(h.sync("g", c.id, jr.Generation, map[string][]byte{c.id: asg(0, 1, 2, 3, 4, 5)}), kerr.None)
	h.wantState("g", Stable)
	h.restart()
	if g := h.c.Group("g"); g == nil || g.cg != nil || g.State() != Stable || g.Generation() != jr.Generation {
		t.Fatalf("the downgraded group after a reload: %+v", g)
	}
}

// TestMixedGroupRandomized runs seeded random joins, leaves, crashes and
// coordinator reloads of classic (cooperative) and consumer protocol
// members in one consumer group, kept a consumer group by an anchor
// member that always heartbeats, and checks after every step that no
// partition is owned twice; then, calm, that every partition of the topic
// is owned by exactly one live member and the group is Stable.
func TestMixedGroupRandomized(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { runMixedSeed(t, seed) })
	}
}

// dropFenced models clients whose session ended while the clock ran:
// Kafka's clients stop consuming when their own session would have
// expired, so a member the coordinator fenced owns nothing any more (it
// learns it was fenced on its next heartbeat).
func (h *harness) dropFenced(group string, classics map[*classicClient]bool, cons []*cclient) {
	g := h.c.Group(group)
	known := func(id string) bool { return g != nil && g.cg != nil && g.cg.members[id] != nil }
	for c := range classics {
		if !known(c.id) {
			c.owned = nil
		}
	}
	for _, c := range cons {
		if !known(c.id) {
			c.owned = partitions{}
		}
	}
}

func runMixedSeed(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x932))
	h := newConsumerHarness(t)
	const group = "g"
	anchor := newCClient("anchor", "a")
	h.cgHeartbeat(group, anchor, 1)
	cons := []*cclient{newCClient("c0", "a"), newCClient("c1", "a")}
	classics := []*classicClient{{}, {}, {}}
	joined := map[*classicClient]bool{}
	check := func() {
		t.Helper()
		seen := map[int32]string{}
		add := func(who string, ps []int32) {
			for _, p := range ps {
				if o, dup := seen[p]; dup {
					t.Fatalf("partition %d owned by %s and %s", p, o, who)
				}
				seen[p] = who
			}
		}
		for c := range joined {
			add("classic "+c.id, c.owned)
		}
		for _, c := range append([]*cclient{anchor}, cons...) {
			add("consumer "+c.id, c.owned[topicID(1)])
		}
	}
	classicStep := func(c *classicClient) {
		if !joined[c] {
			id := h.join(group, joinOpts{protocols: c.protocols(), clientID: "classic"})
			jr := h.joinResp(id)
			if jr.ErrorCode != 0 {
				t.Fatalf("classic join: %v", kerr.Code(jr.ErrorCode))
			}
			c.id, c.gen = jr.MemberID, jr.Generation
			joined[c] = true
			sr := h.syncResp(h.sync(group, c.id, c.gen, nil))
			var a kmsg.ConsumerMemberAssignment
			if sr.ErrorCode != 0 || a.ReadFrom(sr.MemberAssignment) != nil {
				t.Fatalf("classic sync: %v", kerr.Code(sr.ErrorCode))
			}
			for _, tp := range a.Topics {
				c.owned = append(c.owned, tp.Partitions...)
			}
			return
		}
		switch code := errorCode(h.reply(h.heartbeat(group, c.id, c.gen))); code {
		case kerr.None:
		case kerr.RebalanceInProgress:
			h.rejoin(group, c)
		case kerr.UnknownMemberID, kerr.IllegalGeneration:
			// Fenced (its session ended while the clock ran): it
			// loses everything and joins again as a new member.
			delete(joined, c)
			*c = classicClient{}
		default:
			t.Fatalf("classic heartbeat: %v", code)
		}
	}
	for step := 0; step < 250; step++ {
		switch op := rng.IntN(12); {
		case op < 4:
			classicStep(classics[rng.IntN(len(classics))])
		case op < 7:
			h.cgHeartbeat(group, cons[rng.IntN(len(cons))], 1)
		case op == 7:
			c := classics[rng.IntN(len(classics))]
			if joined[c] {
				lv := kmsg.NewPtrLeaveGroupRequest()
				lv.Version, lv.Group = 3, group
				lv.Members = []kmsg.LeaveGroupRequestMember{{MemberID: c.id}}
				h.send(lv, "classic")
				delete(joined, c)
				*c = classicClient{}
			}
		case op == 8:
			c := classics[rng.IntN(len(classics))]
			if joined[c] { // crash: it stops consuming and heartbeating
				delete(joined, c)
				*c = classicClient{}
			}
		case op == 9:
			if c := cons[rng.IntN(len(cons))]; c.joined {
				h.cgLeave(group, c, leaveEpoch)
			}
		case op == 10:
			h.advance(time.Duration(rng.IntN(3000)) * time.Millisecond)
			h.dropFenced(group, joined, cons)
		case op == 11:
			h.restart()
		}
		h.cgHeartbeat(group, anchor, 1)
		check()
	}
	for range 20 {
		for _, c := range classics {
			if joined[c] {
				classicStep(c)
			}
		}
		for _, c := range cons {
			if c.joined {
				h.cgHeartbeat(group, c, 1)
			}
		}
		h.cgHeartbeat(group, anchor, 1)
		check()
		h.advance(time.Second)
		h.dropFenced(group, joined, cons)
	}
	g := h.c.Group(group)
	if g == nil || g.cg == nil || g.cg.stateName() != "Stable" {
		t.Fatalf("after calm: %+v", g)
	}
	owned := len(anchor.owned[topicID(1)])
	for c := range joined {
		owned += len(c.owned)
	}
	for _, c := range cons {
		owned += len(c.owned[topicID(1)])
	}
	if owned != 6 {
		t.Fatalf("%d of 6 partitions owned after calm", owned)
	}
}

// group.consumer.migration.policy: a consumer protocol member may turn a
// classic group with members into a consumer group only when upgrades are
// allowed (GROUP_ID_NOT_FOUND otherwise, Kafka's message); the last
// consumer protocol member leaving turns the group back into a classic
// one only when downgrades are, and otherwise its classic members carry
// on in the consumer group.
func TestConsumerMigrationPolicy(t *testing.T) {
	for _, policy := range []string{MigrationDisabled, MigrationUpgrade, MigrationDowngrade, MigrationBidirectional} {
		t.Run(policy, func(t *testing.T) {
			cfg := testConfig()
			cfg.ConsumerMigrationPolicy = policy
			h := newHarnessWith(t, cfg)
			h.topics = consumerTopics()
			upgrade := policy == MigrationUpgrade || policy == MigrationBidirectional
			downgrade := policy == MigrationDowngrade || policy == MigrationBidirectional

			h.stableGroup("classic", 1)
			req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			req.Version, req.Group, req.MemberID, req.RebalanceTimeoutMillis = 1, "classic", "x", 1000
			req.SubscribedTopicNames = []string{"a"}
			r := h.reply(h.send(req, "c")).(*kmsg.ConsumerGroupHeartbeatResponse)
			refused := kerr.Code(r.ErrorCode) == kerr.GroupIDNotFound && r.ErrorMessage != nil &&
				*r.ErrorMessage == "Cannot upgrade classic group classic to consumer group because online upgrade is disabled."
			if refused == upgrade {
				t.Errorf("upgrade: %v %v", kerr.Code(r.ErrorCode), r.ErrorMessage)
			}

			cons := newCClient("c", "a")
			h.cgHeartbeat("g", cons, 1)
			cl := &classicClient{}
			jr := h.joinResp(h.join("g", joinOpts{protocols: cl.protocols(), clientID: "classic"}))
			if jr.ErrorCode != 0 {
				t.Fatalf("classic join to a consumer group: %v", kerr.Code(jr.ErrorCode))
			}
			cl.id = jr.MemberID
			h.rejoin("g", cl)
			h.cgLeave("g", cons, leaveEpoch)
			if g := h.c.Group("g"); (g.cg == nil) != downgrade {
				t.Fatalf("downgrade allowed %v, but the group is a consumer group: %v", downgrade, g.cg != nil)
			}
			if downgrade {
				// Classic now: the member rejoins and, as leader, assigns.
				if code := errorCode(h.reply(h.heartbeat("g", cl.id, cl.gen))); code != kerr.RebalanceInProgress {
					t.Fatalf("classic heartbeat after the downgrade: %v", code)
				}
				return
			}
			for range 3 {
				h.classicRound("g", cl)
			}
			if len(cl.owned) != 6 {
				t.Errorf("the classic member alone in the consumer group owns %v", cl.owned)
			}
		})
	}
}
