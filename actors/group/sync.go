package group

import (
	"bytes"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SyncGroup handles a SyncGroup (v0-v5). In CompletingRebalance followers
// are parked until the leader's SyncGroup brings the assignment; the
// leader's assignment is appended to the log first, and every parked
// SyncGroup (the leader's too) is answered from OnAppended. A Stable group
// answers at once with the member's current assignment.
func (g *Group) SyncGroup(t Ticket, req *kmsg.SyncGroupRequest, now time.Time) Effects {
	g.begin()
	g.sync(t, req, now)
	return g.end()
}

func (g *Group) sync(t Ticket, req *kmsg.SyncGroupRequest, now time.Time) {
	v := req.Version
	fail := func(code kerr.Code) { g.reply(t, syncError(v, code)) }
	var instance *string
	if v >= 3 {
		instance = req.InstanceID
	}
	switch {
	case req.Group == "":
		fail(kerr.InvalidGroupID)
		return
	case g.state == Dead:
		fail(kerr.CoordinatorNotAvailable)
		return
	case g.fenced(instance, req.MemberID):
		fail(kerr.FencedInstanceID)
		return
	}
	if g.cg != nil {
		g.classicSync(t, req, now)
		return
	}
	m := g.get(req.MemberID)
	switch {
	case m == nil:
		fail(kerr.UnknownMemberID)
		return
	case req.Generation != g.generation:
		fail(kerr.IllegalGeneration)
		return
	case v >= 5 && req.ProtocolType != nil && *req.ProtocolType != g.protocolType:
		fail(kerr.InconsistentGroupProtocol)
		return
	case v >= 5 && req.Protocol != nil && *req.Protocol != g.protocol:
		fail(kerr.InconsistentGroupProtocol)
		return
	}
	switch g.state {
	case Empty:
		fail(kerr.UnknownMemberID)
	case PreparingRebalance:
		fail(kerr.RebalanceInProgress)
	case CompletingRebalance:
		g.parkSync(m, &parked{ticket: t, version: v})
		delete(g.pendingSync, m.id)
		if g.isLeader(m.id) && !g.syncStoreInFlight {
			g.storeAssignment(req.GroupAssignment)
		}
	case Stable:
		delete(g.pendingSync, m.id)
		g.heartbeatFrom(m, now)
		r := syncError(v, kerr.None)
		r.MemberAssignment = nonNil(m.assignment)
		if v >= 5 {
			r.ProtocolType = strPtr(g.protocolType)
			r.Protocol = strPtr(g.protocol)
		}
		g.reply(t, r)
	}
}

// storeAssignment appends the leader's assignment (members it forgot get
// an empty one) and, once durable, hands every member its part and makes
// the group Stable — unless the group moved on meanwhile (a join or a
// departure restarted the rebalance and already answered the parked
// SyncGroups).
func (g *Group) storeAssignment(from []kmsg.SyncGroupRequestGroupAssignment) {
	assignments := make(map[string][]byte, len(g.members))
	for _, id := range g.order {
		assignments[id] = []byte{}
	}
	for _, a := range from {
		if _, ok := assignments[a.MemberID]; ok {
			assignments[a.MemberID] = nonNil(bytes.Clone(a.MemberAssignment)) // outlives the request frame
		}
	}
	gen := g.generation
	g.syncStoreInFlight = true
	g.storeGroup(assignments, func(code kerr.Code, now time.Time) {
		if g.state != CompletingRebalance || g.generation != gen {
			return
		}
		g.syncStoreInFlight = false
		if code != kerr.None {
			g.resetAssignments(groupAppendError(code))
			g.prepareRebalance(now)
			return
		}
		for _, id := range g.order {
			m := g.members[id]
			m.assignment = assignments[id]
		}
		g.transition(Stable, now)
		for _, id := range g.order {
			m := g.members[id]
			if m.sync != nil {
				g.answerSync(m, kerr.None)
				g.heartbeatFrom(m, now)
			}
		}
	})
}
