package group

import "time"

// replayConsumer applies one KIP-848 record (value nil: tombstone) read
// back from __consumer_offsets.
func (g *Group) replayConsumer(key Key, value []byte) error {
	if value == nil {
		return g.replayConsumerTombstone(key)
	}
	if g.cg == nil {
		g.resetMetadata()
		g.cg = newConsumerGroup(time.Time{})
		g.protocolType = consumerProtocolType
	}
	cg := g.cg
	r, err := valueReader(value)
	if err != nil {
		return err
	}
	member := func() *cmember {
		m := cg.members[key.Member]
		if m == nil {
			m = &cmember{id: key.Member, assigned: partitions{}, revoking: partitions{}}
			cg.members[m.id] = m
		}
		return m
	}
	// Each kind decodes its fields, then (once the value is known to be
	// whole) apply changes the group.
	var apply func()
	tagsRead := false
	switch key.Version {
	case consumerMetadataKey:
		epoch := r.Int32()
		apply = func() { cg.epoch = epoch }
	case consumerPartitionMetaKey:
		topics := map[string]TopicMeta{}
		n := r.CompactArrayLen()
		for i := int32(0); i < n && r.Ok(); i++ {
			id := r.Uuid()
			name := r.CompactString()
			parts := r.Int32()
			racks := r.CompactArrayLen()
			for j := int32(0); j < racks && r.Ok(); j++ {
				r.Int32()
				readStrings(r)
				skipTags(r)
			}
			skipTags(r)
			topics[name] = TopicMeta{ID: id, Partitions: parts}
		}
		apply = func() { cg.topics = topics }
	case consumerMemberMetaKey:
		instance := r.CompactNullableString()
		rack := r.CompactNullableString()
		clientID := r.CompactString()
		clientHost := r.CompactString()
		names := readStrings(r)
		regex := r.CompactNullableString()
		rebalance := r.Int32()
		assignor := r.CompactNullableString()
		classic := readMemberTags(r)
		tagsRead = true
		apply = func() {
			m := member()
			m.instanceID = ""
			if instance != nil {
				m.instanceID = *instance
			}
			m.rackID, m.clientID, m.clientHost = rack, clientID, clientHost
			m.topicNames, m.regex, m.assignor = names, regex, assignor
			m.rebalanceTimeout = time.Duration(rebalance) * time.Millisecond
			m.classic = classic
		}
	case consumerTargetMetaKey:
		epoch := r.Int32()
		apply = func() { cg.assignmentEpoch = epoch }
	case consumerTargetMemberKey:
		p := readPartitions(r)
		apply = func() { cg.target[key.Member] = p }
	case consumerCurrentAssignmentKey:
		epoch, prev, state := r.Int32(), r.Int32(), r.Int8()
		assigned := readPartitions(r)
		revoking := readPartitions(r)
		apply = func() {
			m := member()
			m.epoch, m.prevEpoch, m.state = epoch, prev, memberState(state)
			m.assigned, m.revoking = assigned, revoking
		}
	default:
		return ErrKeyVersion
	}
	if !tagsRead {
		skipTags(r)
	}
	if !r.Ok() {
		return ErrTruncated
	}
	apply()
	return nil
}

func (g *Group) replayConsumerTombstone(key Key) error {
	cg := g.cg
	if cg == nil {
		return nil
	}
	switch key.Version {
	case consumerMetadataKey:
		// The last record of a deleted (or downgraded) group.
		g.cg = nil
		g.resetMetadata()
		g.state = Dead
	case consumerMemberMetaKey:
		delete(cg.members, key.Member)
		delete(cg.target, key.Member)
	case consumerTargetMemberKey:
		delete(cg.target, key.Member)
	case consumerCurrentAssignmentKey:
		if m := cg.members[key.Member]; m != nil {
			m.assigned, m.revoking = partitions{}, partitions{}
		}
	}
	return nil
}

// loadedConsumer ends a replay of a consumer group: ownership and static
// members are rebuilt from the members, and every member's session starts
// now (one that is gone is fenced when it ends).
func (g *Group) loadedConsumer(now time.Time) {
	cg := g.cg
	clear(cg.owner)
	clear(cg.static)
	for _, id := range cg.sortedMembers() {
		m := cg.members[id]
		cg.own(m)
		if m.instanceID != "" {
			cg.static[m.instanceID] = m.id
		}
		g.heartbeatConsumer(m, now)
		if m.state == memberUnrevoked {
			g.arm(TimerConsumerRevocation, m.id, now.Add(max(m.rebalanceTimeout, time.Second)))
		}
	}
	g.syncConsumerState(now)
}
