package group

import (
	"bytes"
	"slices"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// classicInfo is what a consumer group keeps of a member that speaks the
// classic protocol (JoinGroup/SyncGroup/Heartbeat) inside a KIP-848 group:
// Kafka 4's online migration. Such a member is assigned by the broker's
// assignor like the others and reconciles through rejoins: its heartbeat
// answers REBALANCE_IN_PROGRESS while it is not at the target, its
// JoinGroup is answered at once with its member epoch as the generation,
// and its SyncGroup with what it may own now.
type classicInfo struct {
	protocols      []protocol
	protocol       string // the one its JoinGroup answer named
	sessionTimeout time.Duration
}

// upgradeClassicGroup turns a Stable classic consumer group into a KIP-848
// group when a consumer protocol member joins it (Kafka's online upgrade):
// every classic member becomes a member of the new group at the current
// generation as its epoch, owning what the leader assigned it. code is
// not NONE when the group cannot be upgraded now.
func (g *Group) upgradeClassicGroup(topics Topics, now time.Time) (recs []Record, code kerr.Code, msg string) {
	switch {
	case !g.cfg.upgradeEnabled():
		return nil, kerr.GroupIDNotFound, "Cannot upgrade classic group " + g.id + " to consumer group because online upgrade is disabled."
	case g.protocolType != consumerProtocolType:
		return nil, kerr.GroupIDNotFound, "Group " + g.id + " is not a consumer group (protocol type " + g.protocolType + ")."
	case g.state != Stable || len(g.pending) > 0:
		// Retriable: once the classic rebalance is over it can be.
		return nil, kerr.CoordinatorNotAvailable, "Group " + g.id + " is rebalancing; the upgrade to the consumer protocol waits for it."
	case g.cfg.ConsumerMaxSize > 0 && len(g.members) >= g.cfg.ConsumerMaxSize:
		return nil, kerr.GroupMaxSizeReached, "The consumer group has reached its maximum capacity of " + itoa(g.cfg.ConsumerMaxSize) + " members."
	}
	cg := newConsumerGroup(now)
	cg.epoch, cg.assignmentEpoch = g.generation, g.generation
	for _, id := range g.order {
		old := g.members[id]
		var sub kmsg.ConsumerMemberMetadata
		var asg kmsg.ConsumerMemberAssignment
		if sub.ReadFrom(old.metadataFor(g.protocol)) != nil || (len(old.assignment) > 0 && asg.ReadFrom(old.assignment) != nil) {
			return nil, kerr.GroupIDNotFound, "Group " + g.id + " has a member whose subscription or assignment does not decode; it cannot be upgraded."
		}
		m := &cmember{
			id: old.id, instanceID: old.instanceID, clientID: old.clientID, clientHost: old.clientHost,
			rebalanceTimeout: old.rebalanceTimeout, topicNames: sortedUnique(sub.Topics),
			epoch: g.generation, prevEpoch: g.generation, assigned: partitions{}, revoking: partitions{},
			classic: &classicInfo{protocols: old.protocols, protocol: g.protocol, sessionTimeout: old.sessionTimeout},
		}
		for _, t := range asg.Topics {
			if meta, ok := topics.Topic(t.Topic); ok {
				for _, p := range t.Partitions {
					m.assigned.add(meta.ID, p)
				}
			}
		}
		cg.members[m.id] = m
		cg.target[m.id] = m.assigned.clone()
		if m.instanceID != "" {
			cg.static[m.instanceID] = m.id
		}
		cg.own(m)
	}
	for k := range g.timers {
		g.disarm(k.Kind, k.Member)
	}
	recs = append(recs, Record{Key: GroupKeyBytes(g.id)})
	g.resetMetadata()
	g.cg = cg
	g.protocolType = consumerProtocolType
	cg.topics = g.resolveSubscriptions(topics).topics
	for _, id := range cg.sortedMembers() {
		m := cg.members[id]
		recs = append(recs, consumerMemberMetadataRecord(g.id, m), consumerTargetMemberRecord(g.id, id, cg.target[id]),
			consumerCurrentAssignmentRecord(g.id, m))
		g.heartbeatConsumer(m, now)
	}
	recs = append(recs, consumerPartitionMetadataRecord(g.id, cg.topics), consumerMetadataRecord(g.id, cg.epoch),
		consumerTargetMetadataRecord(g.id, cg.epoch))
	g.syncConsumerState(now)
	return recs, kerr.None, ""
}

func sortedUnique(ss []string) []string {
	out := slices.Sorted(slices.Values(ss))
	return slices.Compact(out)
}

// classicJoin is a JoinGroup to a consumer group: a classic member joins
// (or rejoins to reconcile). It is answered at once, generation = its
// epoch, no leader (the broker assigns), once its records are durable.
func (g *Group) classicJoin(t Ticket, req *kmsg.JoinGroupRequest, c Client, now time.Time) {
	v := req.Version
	fail := func(code kerr.Code) { g.reply(t, joinError(v, req.MemberID, code)) }
	cg := g.cg
	session := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	rebalance := time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	if v == 0 || req.RebalanceTimeoutMillis < 0 {
		rebalance = session
	}
	if req.ProtocolType != consumerProtocolType || len(req.Protocols) == 0 {
		fail(kerr.InconsistentGroupProtocol)
		return
	}
	var sub kmsg.ConsumerMemberMetadata
	if err := sub.ReadFrom(req.Protocols[0].Metadata); err != nil {
		fail(kerr.InconsistentGroupProtocol)
		return
	}
	var instance string
	if v >= 5 && req.InstanceID != nil {
		instance = *req.InstanceID
	}
	var recs []Record
	m := cg.members[req.MemberID]
	joined := false
	switch {
	case req.MemberID == "" && instance != "" && cg.static[instance] != "":
		// A static classic member restarting: the new id takes over.
		old := cg.members[cg.static[instance]]
		m = &cmember{id: g.newMemberID(c.ID, instance), instanceID: instance, epoch: old.epoch, prevEpoch: old.prevEpoch,
			state: old.state, assigned: old.assigned.clone(), revoking: old.revoking.clone()}
		cg.target[m.id] = cg.target[old.id]
		g.dropConsumerMember(old)
		recs = append(recs, consumerMemberTombstones(g.id, old.id)...)
		recs = append(recs, consumerTargetMemberRecord(g.id, m.id, cg.target[m.id]))
		cg.members[m.id], cg.static[instance] = m, m.id
		cg.own(m)
		joined = true
	case req.MemberID == "":
		if g.cfg.ConsumerMaxSize > 0 && len(cg.members) >= g.cfg.ConsumerMaxSize {
			fail(kerr.GroupMaxSizeReached)
			return
		}
		m = &cmember{id: g.newMemberID(c.ID, instance), instanceID: instance, assigned: partitions{}, revoking: partitions{}}
		cg.members[m.id] = m
		if instance != "" {
			cg.static[instance] = m.id
		}
		joined = true
	case m == nil || m.classic == nil:
		fail(kerr.UnknownMemberID)
		return
	case instance != "" && cg.static[instance] != m.id:
		fail(kerr.FencedInstanceID)
		return
	}
	protocols := make([]protocol, 0, len(req.Protocols))
	for _, p := range req.Protocols {
		protocols = append(protocols, protocol{name: p.Name, metadata: nonNil(bytes.Clone(p.Metadata))})
	}
	changed := joined || m.classic == nil || !slices.Equal(m.topicNames, sortedUnique(sub.Topics)) ||
		m.clientID != c.ID || m.rebalanceTimeout != rebalance || m.classic.sessionTimeout != session
	m.topicNames, m.clientID, m.clientHost, m.rebalanceTimeout = sortedUnique(sub.Topics), c.ID, c.Host, rebalance
	m.classic = &classicInfo{protocols: protocols, protocol: req.Protocols[0].Name, sessionTimeout: session}
	if changed {
		recs = append(recs, consumerMemberMetadataRecord(g.id, m))
	}
	topics := c.Topics
	if topics == nil {
		topics = TopicMap(cg.topics)
	}
	subs := g.resolveSubscriptions(topics)
	if changed || !sameTopics(cg.topics, subs.topics) {
		recs = append(recs, g.bumpGroupEpoch(subs)...)
	}
	owned := partitions{}
	for _, t := range sub.OwnedPartitions {
		if meta, ok := topics.Topic(t.Topic); ok {
			for _, p := range t.Partitions {
				owned.add(meta.ID, p)
			}
		}
	}
	before := m.epoch
	if g.reconcile(m, owned, now) || joined || before != m.epoch {
		recs = append(recs, consumerCurrentAssignmentRecord(g.id, m))
	}
	g.heartbeatConsumer(m, now)
	g.syncConsumerState(now)

	resp := joinError(v, m.id, kerr.None)
	resp.Generation = m.epoch
	resp.ProtocolType = strPtr(consumerProtocolType)
	resp.Protocol = strPtr(m.classic.protocol)
	resp.LeaderID = ""
	g.consumerReply(t, recs, resp, func(code kerr.Code) kmsg.Response { return joinError(v, m.id, code) })
}

// classicMember finds a classic member of the consumer group for a
// SyncGroup or Heartbeat, or the error to answer.
func (g *Group) classicMember(memberID string, instance *string, generation int32) (*cmember, kerr.Code) {
	m := g.cg.members[memberID]
	switch {
	case m == nil || m.classic == nil:
		return nil, kerr.UnknownMemberID
	case instance != nil && g.cg.static[*instance] != m.id:
		return nil, kerr.FencedInstanceID
	case generation != m.epoch:
		return nil, kerr.IllegalGeneration
	}
	return m, kerr.None
}

// classicSync answers a classic member's SyncGroup with what it owns now
// (the leader's assignments in the request, if any, are ignored: the
// broker assigns).
func (g *Group) classicSync(t Ticket, req *kmsg.SyncGroupRequest, now time.Time) {
	var instance *string
	if req.Version >= 3 {
		instance = req.InstanceID
	}
	m, code := g.classicMember(req.MemberID, instance, req.Generation)
	if code != kerr.None {
		g.reply(t, syncError(req.Version, code))
		return
	}
	g.heartbeatConsumer(m, now)
	names := g.cg.idToName()
	var asg kmsg.ConsumerMemberAssignment
	for _, id := range m.assigned.sortedTopics() {
		if name, ok := names[id]; ok {
			asg.Topics = append(asg.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: name, Partitions: slices.Clone(m.assigned[id])})
		}
	}
	r := syncError(req.Version, kerr.None)
	r.MemberAssignment = asg.AppendTo(nil)
	if req.Version >= 5 {
		r.ProtocolType, r.Protocol = strPtr(consumerProtocolType), strPtr(m.classic.protocol)
	}
	g.reply(t, r)
}

// classicHeartbeat keeps a classic member's session and tells it to
// rejoin (REBALANCE_IN_PROGRESS) while it has not reached its target.
func (g *Group) classicHeartbeat(req *kmsg.HeartbeatRequest, now time.Time) kerr.Code {
	var instance *string
	if req.Version >= 3 {
		instance = req.InstanceID
	}
	m, code := g.classicMember(req.MemberID, instance, req.Generation)
	if code != kerr.None {
		return code
	}
	g.heartbeatConsumer(m, now)
	if m.state != memberStable || m.epoch != g.cg.assignmentEpoch {
		return kerr.RebalanceInProgress
	}
	return kerr.None
}

// classicLeave removes a classic member of the consumer group (by member
// id, or by instance id alone for an administrative removal).
func (g *Group) classicLeave(memberID string, instance *string, now time.Time) kerr.Code {
	cg := g.cg
	if instance != nil {
		id, ok := cg.static[*instance]
		switch {
		case !ok:
			return kerr.UnknownMemberID
		case memberID != "" && memberID != id:
			return kerr.FencedInstanceID
		}
		memberID = id
	}
	m := cg.members[memberID]
	if m == nil {
		return kerr.UnknownMemberID
	}
	g.appendRecords(g.removeConsumerMember(m, now), func(kerr.Code, time.Time) {})
	return kerr.None
}

// downgradeToClassic turns a consumer group whose members all speak the
// classic protocol back into a classic group (Kafka's downgrade, when the
// last consumer protocol member leaves): the members keep their ids, the
// generation is the group epoch (so their heartbeats match), each member's
// assignment is what it owns, and a rebalance starts at once so they
// rejoin through the classic protocol and their leader assigns. It
// returns the records: tombstones of the consumer group's, then the
// classic group's.
func (g *Group) downgradeToClassic(now time.Time) []Record {
	cg := g.cg
	names := cg.idToName()
	epoch := cg.epoch
	var ms []*cmember
	for _, id := range cg.sortedMembers() {
		ms = append(ms, cg.members[id])
	}
	recs := g.dropConsumerGroup()
	g.resetMetadata()
	g.protocolType = consumerProtocolType
	g.generation = epoch
	for _, cm := range ms {
		var asg kmsg.ConsumerMemberAssignment
		for _, id := range cm.assigned.sortedTopics() {
			if name, ok := names[id]; ok {
				asg.Topics = append(asg.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: name, Partitions: slices.Clone(cm.assigned[id])})
			}
		}
		m := &member{
			id: cm.id, instanceID: cm.instanceID, clientID: cm.clientID, clientHost: cm.clientHost,
			rebalanceTimeout: cm.rebalanceTimeout, sessionTimeout: cm.classic.sessionTimeout,
			protocolType: consumerProtocolType, protocols: cm.classic.protocols, assignment: asg.AppendTo(nil),
		}
		g.add(m)
		g.heartbeatFrom(m, now)
	}
	g.protocol = g.selectProtocol()
	g.subscribed = g.computeSubscribed()
	g.transition(Stable, now)
	recs = append(recs, Record{Key: GroupKeyBytes(g.id), Value: GroupValueBytes(g.groupValue(nil))})
	g.prepareRebalance(now)
	return recs
}

// mayDowngrade reports whether the group, left with classic members only,
// may become a classic group: group.consumer.migration.policy allows it
// and they fit in group.max.size (Kafka's validateOnlineDowngrade).
func (g *Group) mayDowngrade() bool {
	return g.cg.onlyClassicLeft() && g.cfg.downgradeEnabled() && (g.cfg.MaxSize == 0 || len(g.cg.members) <= g.cfg.MaxSize)
}

// onlyClassicLeft reports whether the group has members and all of them
// speak the classic protocol.
func (cg *consumerGroup) onlyClassicLeft() bool {
	for _, m := range cg.members {
		if m.classic == nil {
			return false
		}
	}
	return len(cg.members) > 0
}
