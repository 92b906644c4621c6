package group

import "time"

// reconcile moves m from its current assignment towards its target, one
// safe step at a time (KIP-848's reconciliation, Kafka's
// CurrentAssignmentBuilder), and reports whether anything changed. owned
// is what the member said it owns (nil when the request did not say).
//
//   - A member that must give partitions up first loses them from its
//     assignment and keeps its epoch (state unrevoked), until a heartbeat
//     shows it no longer owns any of them (at once if this one does).
//   - Then it moves to the target epoch and gets every target partition
//     no other member owns; those still owned elsewhere wait (state
//     unreleased) and come with a later heartbeat, once released.
//
// So a partition is never owned by two members at once.
func (g *Group) reconcile(m *cmember, owned partitions, now time.Time) bool {
	cg := g.cg
	changed := false
	if m.state == memberUnrevoked {
		if owned == nil || overlaps(owned, m.revoking) {
			return false
		}
		cg.release(m)
		m.revoking = partitions{}
		cg.own(m)
		m.state = memberStable
		g.disarm(TimerConsumerRevocation, m.id)
		changed = true
	}
	if m.epoch == cg.assignmentEpoch && m.state == memberStable {
		return changed
	}
	target := cg.target[m.id]
	keep, revoke := partitions{}, partitions{}
	for t, ps := range m.assigned {
		for _, n := range ps {
			if target.has(t, n) {
				keep.add(t, n)
			} else {
				revoke.add(t, n)
			}
		}
	}
	// A member whose heartbeat shows it no longer owns what it must give
	// up (it let go on its own) moves on at once, as in Kafka.
	if revoke.count() > 0 && (owned == nil || overlaps(owned, revoke)) {
		m.assigned, m.revoking, m.state = keep, revoke, memberUnrevoked
		g.arm(TimerConsumerRevocation, m.id, now.Add(max(m.rebalanceTimeout, time.Second)))
		return true
	}
	waiting := false
	for t, ps := range target {
		for _, n := range ps {
			if o, held := cg.owner[tpID{t, n}]; held && o != m.id {
				waiting = true
				continue
			}
			keep.add(t, n)
		}
	}
	state := memberStable
	if waiting {
		state = memberUnreleased
	}
	if m.epoch != cg.assignmentEpoch {
		m.prevEpoch, m.epoch = m.epoch, cg.assignmentEpoch
		changed = true
	}
	if !keep.equal(m.assigned) || state != m.state {
		changed = true
	}
	cg.release(m)
	m.assigned, m.state = keep, state
	cg.own(m)
	return changed
}

func overlaps(a, b partitions) bool {
	for t, ps := range b {
		for _, n := range ps {
			if a.has(t, n) {
				return true
			}
		}
	}
	return false
}
