package group

import (
	"errors"
	"time"
)

// ErrWrongGroup is returned by Group.Replay for a record of another group.
var ErrWrongGroup = errors.New("group: record belongs to another group")

// Replay applies one __consumer_offsets record of this group, read back
// from the log (value nil for a tombstone), in log order. It rebuilds
// what the records say: the last group metadata (members, generation,
// leader, protocol, assignments) and the committed offsets. Records of
// other kinds (KIP-848) are ignored. Call Loaded when the partition has
// been read to its end.
func (g *Group) Replay(key Key, value []byte) error {
	if key.Group != g.id && key.Kind != KeyOther {
		return ErrWrongGroup
	}
	switch key.Kind {
	case KeyOffset:
		tp := topicPartition{key.Topic, key.Partition}
		if value == nil {
			delete(g.offsets, tp)
			return nil
		}
		ov, err := DecodeOffsetValue(value)
		if err != nil {
			return err
		}
		g.offsets[tp] = ov
		if g.state == Dead {
			g.resetMetadata()
		}
	case KeyConsumer:
		return g.replayConsumer(key, value)
	case KeyGroup:
		if value == nil {
			g.resetMetadata()
			g.state = Dead
			return nil
		}
		gv, err := DecodeGroupValue(value)
		if err != nil {
			return err
		}
		g.loadMetadata(gv)
	}
	return nil
}

// resetMetadata forgets members and generation: the group as if never
// joined (its offsets stay; they have records of their own).
func (g *Group) resetMetadata() {
	g.state = Empty
	g.stateTimestamp = -1
	g.generation = 0
	g.protocolType = ""
	g.protocol = ""
	g.leader = ""
	g.subscribed = nil
	clear(g.members)
	clear(g.staticMembers)
	g.order = nil
	g.numAwaiting = 0
}

func (g *Group) loadMetadata(gv GroupValue) {
	g.resetMetadata()
	g.protocolType = gv.ProtocolType
	g.generation = gv.Generation
	if gv.Protocol != nil {
		g.protocol = *gv.Protocol
	}
	if gv.Leader != nil {
		g.leader = *gv.Leader
	}
	g.stateTimestamp = gv.CurrentStateTimestamp
	for _, mv := range gv.Members {
		m := &member{
			id:               mv.MemberID,
			clientID:         mv.ClientID,
			clientHost:       mv.ClientHost,
			rebalanceTimeout: time.Duration(mv.RebalanceTimeoutMs) * time.Millisecond,
			sessionTimeout:   time.Duration(mv.SessionTimeoutMs) * time.Millisecond,
			protocolType:     gv.ProtocolType,
			protocols:        []protocol{{name: g.protocol, metadata: nonNil(mv.Subscription)}},
			assignment:       nonNil(mv.Assignment),
		}
		if mv.InstanceID != nil {
			m.instanceID = *mv.InstanceID
			g.staticMembers[m.instanceID] = m.id
		}
		if _, dup := g.members[m.id]; dup {
			continue
		}
		g.members[m.id] = m
		g.order = append(g.order, m.id)
	}
	if len(g.members) > 0 {
		g.state = Stable
		if g.members[g.leader] == nil {
			g.leader = g.order[0]
		}
		g.subscribed = g.computeSubscribed()
	} else {
		g.state = Empty
		g.leader = ""
	}
}

// Loaded ends a replay: every member's session timer starts now (a member
// that is gone is removed once its session expires, which starts a
// rebalance). The group is Stable with the members of its last stored
// generation, or Empty. A group whose last record was its tombstone is
// Dead (and Vacant).
func (g *Group) Loaded(now time.Time) Effects {
	g.begin()
	if g.state == Dead && len(g.offsets) > 0 {
		g.resetMetadata()
	}
	for _, id := range g.order {
		g.heartbeatFrom(g.members[id], now)
	}
	if g.cg != nil {
		g.loadedConsumer(now)
	}
	return g.end()
}
