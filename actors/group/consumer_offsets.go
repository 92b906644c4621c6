package group

import "github.com/samsa-io/samsa/wire/kerr"

// validateConsumerCommit is validateCommit for a consumer group: the
// generation field carries the member epoch (OffsetCommit v9+). A commit
// without a member is allowed only while the group has no members.
func (g *Group) validateConsumerCommit(epoch int32, memberID string) kerr.Code {
	cg := g.cg
	if epoch < 0 && memberID == "" && len(cg.members) == 0 {
		return kerr.None
	}
	if m := cg.members[memberID]; m != nil && m.classic != nil && epoch != m.epoch {
		// A classic member commits with its generation.
		return kerr.IllegalGeneration
	}
	return memberEpochCode(cg.members[memberID], epoch)
}

// validateConsumerFetch checks OffsetFetch v9's member id and epoch
// against a consumer group; a fetch that names no member (an admin) is
// always allowed.
func (g *Group) validateConsumerFetch(memberID *string, epoch int32) kerr.Code {
	if g.cg == nil || memberID == nil || (*memberID == "" && epoch < 0) {
		return kerr.None
	}
	return memberEpochCode(g.cg.members[*memberID], epoch)
}

// memberEpochCode is UNKNOWN_MEMBER_ID for no member, STALE_MEMBER_EPOCH
// for an epoch other than the member's.
func memberEpochCode(m *cmember, epoch int32) kerr.Code {
	switch {
	case m == nil:
		return kerr.UnknownMemberID
	case epoch != m.epoch:
		return kerr.StaleMemberEpoch
	}
	return kerr.None
}

// dropConsumerGroup forgets the consumer group state (the group is
// deleted, or goes back to the classic protocol) and returns the
// tombstones of all its records.
func (g *Group) dropConsumerGroup() []Record {
	var recs []Record
	for _, id := range g.cg.sortedMembers() {
		g.disarm(TimerConsumerSession, id)
		g.disarm(TimerConsumerRevocation, id)
		recs = append(recs, consumerMemberTombstones(g.id, id)...)
	}
	g.cg = nil
	g.subscribed = nil
	return append(recs, consumerGroupTombstones(g.id)...)
}
