package group

import (
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// canRebalance reports whether a rebalance may start from the current
// state.
func (g *Group) canRebalance() bool {
	return g.state == Stable || g.state == CompletingRebalance || g.state == Empty
}

// prepareRebalance starts a rebalance (state PreparingRebalance) if one
// can start. Members parked on SyncGroup are told REBALANCE_IN_PROGRESS,
// so they rejoin. An empty group waits the initial rebalance delay for
// more members; otherwise the join phase lasts until every member has
// rejoined or the rebalance timeout passes.
func (g *Group) prepareRebalance(now time.Time) {
	if !g.canRebalance() {
		return
	}
	if g.state == CompletingRebalance {
		g.resetAssignments(kerr.RebalanceInProgress)
	}
	g.disarm(TimerSync, "")
	clear(g.pendingSync)
	g.syncStoreInFlight = false

	timeout := g.rebalanceTimeout()
	if g.state == Empty && g.cfg.initialDelay() > 0 {
		g.initialDelay = true
		g.newMemberAdded = false
		g.delayRemaining = max(timeout-g.cfg.initialDelay(), 0)
		g.arm(TimerJoin, "", now.Add(g.cfg.initialDelay()))
		g.transition(PreparingRebalance, now)
		return
	}
	g.initialDelay = false
	g.arm(TimerJoin, "", now.Add(timeout))
	g.transition(PreparingRebalance, now)
	g.tryCompleteJoin(now)
}

// resetAssignments drops every member's assignment and answers parked
// SyncGroups with code: the generation being completed is abandoned.
func (g *Group) resetAssignments(code kerr.Code) {
	for _, id := range g.order {
		m := g.members[id]
		m.assignment = nil
		g.answerSync(m, code)
	}
}

// allJoined reports whether the join phase can end early: every member
// has a parked JoinGroup and no KIP-394 pending member is still expected.
func (g *Group) allJoined() bool {
	return g.numAwaiting == len(g.members) && len(g.pending) == 0
}

// tryCompleteJoin ends the join phase if everyone is in. The initial
// rebalance delay is never cut short: its purpose is to wait for members
// that have not even arrived.
func (g *Group) tryCompleteJoin(now time.Time) {
	if g.state != PreparingRebalance || g.initialDelay {
		return
	}
	if g.allJoined() {
		g.completeJoin(now)
	}
}

func (g *Group) onJoinTimer(now time.Time) {
	if g.state != PreparingRebalance {
		return
	}
	if g.initialDelay && g.newMemberAdded && g.delayRemaining > 0 {
		// Members keep arriving: wait another delay, within what is
		// left of the rebalance timeout.
		g.newMemberAdded = false
		d := min(g.cfg.initialDelay(), g.delayRemaining)
		g.delayRemaining = max(g.delayRemaining-d, 0)
		g.arm(TimerJoin, "", now.Add(d))
		return
	}
	g.completeJoin(now)
}

// completeJoin ends the join phase (everyone rejoined, or time is up).
// Dynamic members that did not rejoin are removed; static members stay
// (only their session timeout removes them). If the leader did not rejoin,
// a member that did takes over. The generation goes up by one and every
// parked JoinGroup is answered: the leader with the member list, the
// others without. An empty result makes the group Empty and is written
// to the log.
func (g *Group) completeJoin(now time.Time) {
	g.disarm(TimerJoin, "")
	g.initialDelay = false
	for _, id := range append([]string(nil), g.order...) {
		m := g.members[id]
		if m.join == nil && !m.static() {
			g.remove(m, kerr.UnknownMemberID)
		}
	}
	if g.state == Dead {
		return
	}
	if !g.electJoinedLeader() && len(g.members) > 0 {
		// Only static members that have not rejoined remain: wait
		// another rebalance timeout for them (or for their sessions to
		// expire).
		g.arm(TimerJoin, "", now.Add(g.rebalanceTimeout()))
		return
	}

	g.generation++
	clear(g.pendingSync)
	if len(g.members) == 0 {
		g.protocol = ""
		g.subscribed = nil
		g.transition(Empty, now)
		g.storeGroup(nil, nil)
		return
	}
	g.protocol = g.selectProtocol()
	g.subscribed = g.computeSubscribed()
	g.transition(CompletingRebalance, now)
	for _, id := range g.order {
		m := g.members[id]
		g.pendingSync[id] = true
		g.answerJoin(m, func(v int16) *kmsg.JoinGroupResponse { return g.joinResult(v, m, false) })
		m.isNew = false
		g.heartbeatFrom(m, now)
	}
	g.arm(TimerSync, "", now.Add(g.rebalanceTimeout()))
}

// electJoinedLeader keeps the leader if it rejoined, else promotes the
// first member (in join order) that did. It reports false when no member
// has rejoined.
func (g *Group) electJoinedLeader() bool {
	if l := g.get(g.leader); l != nil && l.join != nil {
		return true
	}
	for _, id := range g.order {
		if g.members[id].join != nil {
			g.leader = id
			return true
		}
	}
	return false
}

// joinResult is a successful JoinGroup answer for m in the current
// generation; the leader gets the members and their metadata for the
// selected protocol.
func (g *Group) joinResult(version int16, m *member, skipAssignment bool) *kmsg.JoinGroupResponse {
	r := kmsg.NewPtrJoinGroupResponse()
	r.Version = version
	r.Generation = g.generation
	r.ProtocolType = strPtr(g.protocolType)
	r.Protocol = strPtr(g.protocol)
	r.LeaderID = g.leader
	r.MemberID = m.id
	r.SkipAssignment = skipAssignment
	if g.isLeader(m.id) {
		for _, id := range g.order {
			o := g.members[id]
			jm := kmsg.NewJoinGroupResponseMember()
			jm.MemberID = o.id
			if o.instanceID != "" {
				jm.InstanceID = strPtr(o.instanceID)
			}
			jm.ProtocolMetadata = o.metadataFor(g.protocol)
			r.Members = append(r.Members, jm)
		}
	}
	return r
}

// groupValue is the group's metadata record value, with the given
// assignments (member id -> bytes; nil uses the members' current ones).
func (g *Group) groupValue(assignments map[string][]byte) GroupValue {
	v := GroupValue{
		ProtocolType:          g.protocolType,
		Generation:            g.generation,
		CurrentStateTimestamp: g.stateTimestamp,
	}
	if len(g.members) > 0 {
		v.Protocol = strPtr(g.protocol)
		v.Leader = strPtr(g.leader)
	}
	for _, id := range g.order {
		m := g.members[id]
		mv := MemberValue{
			MemberID:           m.id,
			ClientID:           m.clientID,
			ClientHost:         m.clientHost,
			RebalanceTimeoutMs: int32(m.rebalanceTimeout / time.Millisecond),
			SessionTimeoutMs:   int32(m.sessionTimeout / time.Millisecond),
			Subscription:       nonNil(m.metadataFor(g.protocol)),
			Assignment:         nonNil(m.assignment),
		}
		if assignments != nil {
			mv.Assignment = nonNil(assignments[id])
		}
		if m.instanceID != "" {
			mv.InstanceID = strPtr(m.instanceID)
		}
		v.Members = append(v.Members, mv)
	}
	return v
}

// storeGroup appends the group's metadata record; done (may be nil) runs
// with the append's result and the completion time.
func (g *Group) storeGroup(assignments map[string][]byte, done func(kerr.Code, time.Time)) {
	rec := Record{Key: GroupKeyBytes(g.id), Value: GroupValueBytes(g.groupValue(assignments))}
	if done == nil {
		done = func(kerr.Code, time.Time) {}
	}
	g.appendRecords([]Record{rec}, done)
}

// groupAppendError maps a partition append error to what a JoinGroup or
// SyncGroup client should see (Kafka's mapping).
func groupAppendError(code kerr.Code) kerr.Code {
	switch code {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut:
		return kerr.CoordinatorNotAvailable
	case kerr.NotLeaderOrFollower, kerr.KafkaStorageError:
		return kerr.NotCoordinator
	case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
		return kerr.UnknownServerError
	}
	return code
}

// offsetAppendError is the same mapping for OffsetCommit.
func offsetAppendError(code kerr.Code) kerr.Code {
	switch code {
	case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
		return kerr.InvalidCommitOffsetSize
	}
	return groupAppendError(code)
}

func strPtr(s string) *string { return &s }

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
