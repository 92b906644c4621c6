package group

import (
	"cmp"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// heartbeatConsumer restarts m's session timer.
func (g *Group) heartbeatConsumer(m *cmember, now time.Time) {
	session := cmp.Or(g.groupConfig.SessionTimeout, g.cfg.ConsumerSessionTimeout)
	if m.classic != nil {
		session = m.classic.sessionTimeout
	}
	g.arm(TimerConsumerSession, m.id, now.Add(session))
}

// syncConsumerState keeps the classic fields the offset code reads in
// step with the consumer group: Stable with members, Empty without, and
// the subscribed topics.
func (g *Group) syncConsumerState(now time.Time) {
	want := Empty
	if len(g.cg.members) > 0 {
		want = Stable
	}
	if g.state != want {
		g.transition(want, now)
	}
	g.subscribed = g.cg.subscribedNames()
}

// consumerLeave handles epoch -1 (leave) and -2 (a static member leaving
// for now, keeping its assignment until its session times out).
func (g *Group) consumerLeave(t Ticket, req *kmsg.ConsumerGroupHeartbeatRequest, recs []Record, now time.Time) {
	cg := g.cg
	v := req.Version
	m := cg.members[req.MemberID]
	if req.InstanceID != nil {
		if id, ok := cg.static[*req.InstanceID]; ok {
			if req.MemberID != id {
				g.reply(t, heartbeatError(v, kerr.FencedInstanceID, "Static member "+req.MemberID+" with instance id "+*req.InstanceID+" was fenced by another member."))
				return
			}
			m = cg.members[id]
		}
	}
	if m == nil {
		g.reply(t, heartbeatError(v, kerr.UnknownMemberID, "Member "+req.MemberID+" is not a member of group "+g.id+"."))
		return
	}
	resp := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	resp.Version = v
	resp.MemberID = strPtr(m.id)
	resp.MemberEpoch = req.MemberEpoch
	if req.MemberEpoch == staticLeaveEpoch {
		m.prevEpoch, m.epoch = m.epoch, staticLeaveEpoch
		recs = append(recs, consumerCurrentAssignmentRecord(g.id, m))
	} else {
		recs = append(recs, g.removeConsumerMember(m, now)...)
	}
	g.consumerReply(t, recs, resp, func(code kerr.Code) kmsg.Response { return heartbeatError(v, code, "") })
}

// dropConsumerMember forgets m without touching the epoch.
func (g *Group) dropConsumerMember(m *cmember) {
	cg := g.cg
	cg.release(m)
	delete(cg.members, m.id)
	delete(cg.target, m.id)
	if m.instanceID != "" && cg.static[m.instanceID] == m.id {
		delete(cg.static, m.instanceID)
	}
	g.disarm(TimerConsumerSession, m.id)
	g.disarm(TimerConsumerRevocation, m.id)
}

// removeConsumerMember removes m (it left, or was fenced) and moves the
// group to a new epoch without it; it returns the records.
func (g *Group) removeConsumerMember(m *cmember, now time.Time) []Record {
	g.dropConsumerMember(m)
	recs := consumerMemberTombstones(g.id, m.id)
	if m.classic == nil && g.mayDowngrade() {
		// The last consumer protocol member is gone: back to classic
		// (else the classic members stay in a consumer group).
		return append(recs, g.downgradeToClassic(now)...)
	}
	recs = append(recs, g.bumpGroupEpoch(g.resolveSubscriptions(nil))...)
	g.syncConsumerState(now)
	return recs
}

// onConsumerSessionTimer fences a member that stopped heartbeating.
func (g *Group) onConsumerSessionTimer(id string, now time.Time) {
	if g.cg == nil || g.cg.members[id] == nil {
		return
	}
	g.fenceConsumerMember(g.cg.members[id], now)
}

// onConsumerRevocationTimer fences a member that did not revoke its
// partitions within its rebalance timeout.
func (g *Group) onConsumerRevocationTimer(id string, now time.Time) {
	if g.cg == nil {
		return
	}
	if m := g.cg.members[id]; m != nil && m.state == memberUnrevoked {
		g.fenceConsumerMember(m, now)
	}
}

func (g *Group) fenceConsumerMember(m *cmember, now time.Time) {
	recs := g.removeConsumerMember(m, now)
	g.appendRecords(recs, func(kerr.Code, time.Time) {})
}
