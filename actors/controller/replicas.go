package controller

import "slices"

// The replica state machine's transitions that send or write (Kafka's
// ZkReplicaStateMachine): OnlineReplica tells a replica its partition's
// state; OfflineReplica stops it and shrinks it out of the ISR.

type replica struct {
	p      *partition
	broker int32
}

// onlineReplicas is the OnlineReplica transition of replicas that already
// existed: a LeaderAndIsr (not new) to each, for partitions with a state.
func (c *Core) onlineReplicas(rs []replica) {
	for _, r := range rs {
		if r.p.state != nil {
			c.addLeaderAndISR([]int32{r.broker}, r.p, false)
		}
	}
	c.flush()
}

// offlineReplicas is the OfflineReplica transition of broker b's replicas
// of ps: StopReplica (keep the data) to b if it is still registered, then
// b leaves each ISR (the leader becomes NoLeader when b led; a last ISR
// member stays, so the ISR never goes empty), the leader epoch goes up,
// and the other replicas learn the new state.
//
// Kafka writes these shrinks for topics queued for deletion too; this
// core leaves their states alone (they are about to be deleted, and
// brokers are told leader -2 for them anyway).
func (c *Core) offlineReplicas(b int32, ps []*partition) {
	if len(ps) == 0 {
		return
	}
	for _, p := range ps {
		c.addStopReplica(b, p, false)
	}
	for _, p := range ps {
		if p.state == nil {
			c.addUpdateMetadata(c.liveIDs(), []*partition{p})
			continue
		}
		if c.writtenByNewer(p) {
			continue
		}
		if !c.del.queued[p.tp.Topic] {
			c.shrinkOut(p, b)
		}
		if !c.del.queued[p.tp.Topic] {
			others := slices.DeleteFunc(slices.Clone(p.replicas), func(r int32) bool { return r == b })
			c.addLeaderAndISR(others, p, false)
		}
	}
	c.flush()
}

// shrinkOut is Kafka's removeReplicasFromIsr for one replica: out of the
// ISR unless it is the last member, no leader if it led, a new leader
// epoch.
func (c *Core) shrinkOut(p *partition, b int32) {
	if p.state == nil || c.writtenByNewer(p) || !slices.Contains(p.state.ISR, b) {
		return
	}
	s := p.state.clone()
	if s.Leader == b {
		s.Leader = NoLeader
	}
	if len(s.ISR) > 1 {
		s.ISR = slices.DeleteFunc(s.ISR, func(r int32) bool { return r == b })
	}
	s.LeaderEpoch++
	c.write(p, s)
}

// replicasOn returns the replicas the given brokers host, in partition
// order.
func (c *Core) replicasOn(brokers []int32) []replica {
	var out []replica
	for _, b := range brokers {
		for _, p := range c.allPartitions() {
			if slices.Contains(p.replicas, b) {
				out = append(out, replica{p, b})
			}
		}
	}
	return out
}
