package controller

import "slices"

// The partition state machine (Kafka's ZkPartitionStateMachine and
// PartitionLeaderElectionAlgorithms): new partitions get their first
// state, offline ones a leader from their ISR.

// triggerOnline is triggerOnlinePartitionStateChange: every New or
// Offline partition not queued for deletion is brought online if it can
// be. It reports whether any partition changed.
func (c *Core) triggerOnline() bool {
	var ps []*partition
	for _, p := range c.allPartitions() {
		if (p.phase == phaseNew || p.phase == phaseOffline) && !c.del.queued[p.tp.Topic] {
			ps = append(ps, p)
		}
	}
	return c.toOnline(ps, c.offlineElection)
}

// toOnline moves ps to OnlinePartition: New ones are initialized, the
// others get a leader from elect (nil: no leader can be elected, the
// partition stays as it is).
func (c *Core) toOnline(ps []*partition, elect func(*partition) (s *PartitionState, recipients []int32)) bool {
	changed := false
	for _, p := range ps {
		if p.phase == phaseNew {
			if c.initialize(p) {
				p.phase = phaseOnline
				changed = true
			}
			continue
		}
		if p.state == nil || c.writtenByNewer(p) {
			continue
		}
		s, recipients := elect(p)
		if s == nil {
			continue
		}
		c.write(p, *s)
		c.addLeaderAndISR(recipients, p, false)
		p.phase = phaseOnline
		changed = true
	}
	c.flush()
	return changed
}

// initialize gives a new partition its first state: the first live
// replica leads, the live replicas are the ISR, epoch 0. With no live
// replica the partition stays New until one comes.
func (c *Core) initialize(p *partition) bool {
	var live []int32
	for _, r := range p.replicas {
		if c.online(r) {
			live = append(live, r)
		}
	}
	if len(live) == 0 {
		return false
	}
	c.write(p, PartitionState{Leader: live[0], ISR: live})
	c.addLeaderAndISR(live, p, true)
	return true
}

// offlineElection is Election.leaderForOffline: the first replica in
// assignment order that is live and in the ISR leads, and the ISR keeps
// its live members; failing that, with unclean election allowed, the
// first live replica leads alone and the partition is RECOVERING.
func (c *Core) offlineElection(p *partition) (*PartitionState, []int32) {
	return c.electOffline(p, false)
}

// electOffline is offlineElection; forceUnclean allows the unclean step
// whatever the config says (an admin's unclean ElectLeaders). The config
// is looked up only when no in-sync replica can lead.
func (c *Core) electOffline(p *partition, forceUnclean bool) (*PartitionState, []int32) {
	live := c.liveReplicas(p)
	leader, clean := NoLeader, true
	for _, r := range p.replicas {
		if c.online(r) && slices.Contains(p.state.ISR, r) {
			leader = r
			break
		}
	}
	if leader == NoLeader && len(live) > 0 && (forceUnclean || c.uncleanAllowed(p.tp.Topic)) {
		leader, clean = live[0], false
	}
	if leader == NoLeader {
		return nil, nil
	}
	s := p.state.clone()
	s.Leader = leader
	s.LeaderEpoch++
	if clean {
		s.ISR = slices.DeleteFunc(s.ISR, func(r int32) bool { return !c.online(r) })
	} else {
		s.ISR = []int32{leader}
		s.LeaderRecoveryState = Recovering
	}
	return &s, live
}

// controlledShutdownElection is Election.leaderForControlledShutdown:
// the first replica in the ISR that is not shutting down leads, and the
// shutting-down brokers leave the ISR.
func (c *Core) controlledShutdownElection(p *partition) (*PartitionState, []int32) {
	var recipients []int32
	leader := NoLeader
	for _, r := range p.replicas {
		if !c.live(r) {
			continue
		}
		recipients = append(recipients, r)
		if leader == NoLeader && slices.Contains(p.state.ISR, r) && !c.shuttingDown[r] {
			leader = r
		}
	}
	if leader == NoLeader {
		return nil, nil
	}
	s := p.state.clone()
	s.Leader = leader
	s.LeaderEpoch++
	s.ISR = slices.DeleteFunc(s.ISR, func(r int32) bool { return c.shuttingDown[r] })
	return &s, recipients
}

func (c *Core) liveReplicas(p *partition) []int32 {
	var live []int32
	for _, r := range p.replicas {
		if c.online(r) {
			live = append(live, r)
		}
	}
	return live
}
