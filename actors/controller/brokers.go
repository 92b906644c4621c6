package controller

import (
	"maps"
	"slices"
)

// BrokersChanged is /brokers/ids changing (Kafka's processBrokerChange):
// brokers is the whole registered set, with epochs. New brokers come up,
// missing ones have died, and a broker whose epoch grew restarted: it
// dies and comes up again in one step. A broker that only changed its
// endpoints or rack is announced to everyone (processBrokerModification).
//
// Kafka handles the new brokers before the restarted ones, and so sends
// the restarted ones requests under their old epoch, which they refuse
// (a StopReplica refused that way stalls a deletion). This core handles
// the restarted ones first: no request goes out under a stale epoch.
func (c *Core) BrokersChanged(brokers map[int32]BrokerInfo) Effects {
	c.begin()
	var added, dead, bounced, modified []int32
	for _, id := range sortedKeys(brokers) {
		old, ok := c.brokers[id]
		switch {
		case !ok:
			added = append(added, id)
		case brokers[id].Epoch > old.Epoch:
			bounced = append(bounced, id)
		case !sameRegistration(old, brokers[id]):
			modified = append(modified, id)
		}
	}
	for _, id := range sortedKeys(c.brokers) {
		if _, ok := brokers[id]; !ok {
			dead = append(dead, id)
		}
	}
	if len(bounced) > 0 {
		for _, id := range bounced {
			delete(c.brokers, id)
		}
		c.onBrokerFailure(bounced)
		for _, id := range bounced {
			c.brokers[id] = brokers[id]
		}
		c.onBrokerStartup(bounced)
	}
	if len(added) > 0 {
		for _, id := range added {
			c.brokers[id] = brokers[id]
		}
		c.onBrokerStartup(added)
	}
	if len(dead) > 0 {
		for _, id := range dead {
			delete(c.brokers, id)
		}
		c.onBrokerFailure(dead)
	}
	if len(modified) > 0 {
		for _, id := range modified {
			c.brokers[id] = brokers[id]
		}
		c.sendUpdateMetadata(c.liveIDs(), nil)
	}
	return c.end()
}

func sameRegistration(a, b BrokerInfo) bool {
	return a.Rack == b.Rack && slices.Equal(a.Endpoints, b.Endpoints)
}

// onBrokerStartup: the others learn of the new brokers, the new brokers
// get the whole metadata and a LeaderAndIsr for every replica they host,
// then partitions without a leader may get one, and deletions waiting
// for these brokers resume.
func (c *Core) onBrokerStartup(ids []int32) {
	isNew := map[int32]bool{}
	for _, id := range ids {
		isNew[id] = true
	}
	var existing []int32
	for _, id := range c.liveIDs() {
		if !isNew[id] {
			existing = append(existing, id)
		}
	}
	c.sendUpdateMetadata(existing, nil)
	c.sendUpdateMetadata(ids, c.partitionsWithLeaders())
	rs := c.replicasOn(ids)
	c.onlineReplicas(rs)
	c.triggerOnline()
	c.resumeReassignmentsOn(ids)
	resume := map[string]bool{}
	for _, r := range rs {
		if c.del.queued[r.p.tp.Topic] {
			resume[r.p.tp.Topic] = true
		}
	}
	if len(resume) > 0 {
		c.resumeDeletionFor(slices.Sorted(maps.Keys(resume)))
	}
}

// onBrokerFailure: partitions the dead brokers led go offline and get a
// new leader where the ISR allows, the dead replicas leave the ISRs, and
// deletions needing them wait.
func (c *Core) onBrokerFailure(ids []int32) {
	for _, id := range ids {
		delete(c.shuttingDown, id)
	}
	var forDeletion, notForDeletion []replica
	for _, r := range c.replicasOn(ids) {
		if c.del.queued[r.p.tp.Topic] {
			forDeletion = append(forDeletion, r)
		} else {
			notForDeletion = append(notForDeletion, r)
		}
	}
	for _, p := range c.allPartitions() {
		if p.state != nil && p.phase != phaseNew && !c.online(p.state.Leader) && !c.del.queued[p.tp.Topic] {
			p.phase = phaseOffline
		}
	}
	elected := c.triggerOnline()
	byBroker := map[int32][]*partition{}
	for _, r := range notForDeletion {
		byBroker[r.broker] = append(byBroker[r.broker], r.p)
	}
	for _, b := range sortedKeys(byBroker) {
		c.offlineReplicas(b, byBroker[b])
	}
	if len(forDeletion) > 0 {
		c.failReplicaDeletion(forDeletion)
	}
	// Nothing above told the survivors the brokers are gone.
	if len(notForDeletion) == 0 && !elected {
		c.sendUpdateMetadata(c.liveIDs(), nil)
	}
}

// partitionsWithLeaders are the partitions with a state, except those of
// topics queued for deletion: the full metadata a new broker gets.
func (c *Core) partitionsWithLeaders() []*partition {
	var out []*partition
	for _, p := range c.allPartitions() {
		if p.state != nil && !c.del.queued[p.tp.Topic] {
			out = append(out, p)
		}
	}
	return out
}
