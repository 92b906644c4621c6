package partition

// SetRole makes the partition the leader at LeaderEpoch, or a follower
// (cluster mode: the controller's LeaderAndIsr). A new leader records its
// epoch at the log end, so OffsetForLeaderEpoch and the batches it writes
// carry it, and tracks its followers (Replicas, ISR, PartitionEpoch, the
// state znode's version that AlterPartition names); a follower stops
// serving clients and its waiting produces fail over. Done, if set, is
// called on the actor's goroutine once the role is in force.
type SetRole struct {
	LeaderEpoch    int32
	Follower       bool
	Replicas       []int32
	ISR            []int32
	PartitionEpoch int32
	Done           func()
}

func (p *partitionActor) setRole(m *SetRole) {
	wasFollower := p.spec.Follower
	p.spec.LeaderEpoch, p.spec.Follower = m.LeaderEpoch, m.Follower
	p.spec.Replicas, p.spec.ISR, p.spec.PartitionEpoch = m.Replicas, m.ISR, m.PartitionEpoch
	if p.latest != nil {
		spec := p.spec
		p.latest.Store(&spec)
	}
	switch {
	case p.plog == nil:
	case !m.Follower:
		if err := p.plog.AssignEpoch(m.LeaderEpoch, p.plog.LogEndOffset()); err != nil {
			p.log.Error("cannot record the leader epoch; the log refuses appends", append(p.attrs(), "err", err)...)
		}
		if p.repl != nil {
			p.lead(m)
		}
		p.publishView()
		if wasFollower {
			p.log.Info("leading the partition", append(p.attrs(), "leader_epoch", m.LeaderEpoch, "isr", m.ISR)...)
		}
	default:
		p.follow()
		p.hideView()
	}
	wasLeading, isrBefore := p.publishedISR()
	p.publishRole()
	if nowLeading, isrAfter := p.publishedISR(); wasLeading && nowLeading {
		p.countISRChange(isrBefore, isrAfter) // the controller changed the ISR (a broker died or came back)
	}
	if m.Done != nil {
		m.Done()
	}
}
