package group

import (
	"cmp"
	"encoding/base64"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConsumerGroupHeartbeat handles a KIP-848 heartbeat (v0-v1): a member
// joins (epoch 0), heartbeats (its epoch), or leaves (-1, or -2 for a
// static member that will come back). topics is the cluster's topics, to
// resolve subscriptions and compute the target assignment. The answer
// comes once the records it implies are durable.
func (g *Group) ConsumerGroupHeartbeat(t Ticket, req *kmsg.ConsumerGroupHeartbeatRequest, c Client, topics Topics, now time.Time) Effects {
	g.begin()
	g.consumerHeartbeat(t, req, c, topics, now)
	return g.end()
}

func heartbeatError(version int16, code kerr.Code, msg string) *kmsg.ConsumerGroupHeartbeatResponse {
	r := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	r.Version = version
	r.ErrorCode = int16(code)
	if msg != "" {
		r.ErrorMessage = strPtr(msg)
	}
	return r
}

// validateHeartbeat checks the request's own fields (Kafka's
// throwIfConsumerGroupHeartbeatRequestIsInvalid).
func (g *Group) validateHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest) (kerr.Code, string) {
	switch {
	case req.Group == "":
		return kerr.InvalidRequest, "GroupId can't be empty."
	case req.InstanceID != nil && *req.InstanceID == "":
		return kerr.InvalidRequest, "InstanceId can't be empty."
	case req.RackID != nil && *req.RackID == "":
		return kerr.InvalidRequest, "RackId can't be empty."
	case req.MemberEpoch < staticLeaveEpoch:
		return kerr.InvalidRequest, "MemberEpoch is invalid."
	case (req.Version >= 1 || req.MemberEpoch != 0) && req.MemberID == "":
		return kerr.InvalidRequest, "MemberId can't be empty."
	case req.MemberEpoch == staticLeaveEpoch && req.InstanceID == nil:
		return kerr.InvalidRequest, "InstanceId can't be null when leaving as a static member."
	}
	if req.MemberEpoch == 0 {
		switch {
		case req.RebalanceTimeoutMillis == -1:
			return kerr.InvalidRequest, "RebalanceTimeoutMs must be provided in first request."
		case len(req.Topics) > 0:
			return kerr.InvalidRequest, "TopicPartitions must be empty when (re-)joining."
		case req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil:
			return kerr.InvalidRequest, "SubscribedTopicNames or SubscribedTopicRegex must be set in first request."
		}
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != "" {
		if _, err := regexp.Compile(*req.SubscribedTopicRegex); err != nil {
			return invalidRegularExpression, "SubscribedTopicRegex `" + *req.SubscribedTopicRegex + "` is not a valid regular expression: " + err.Error()
		}
	}
	if req.ServerAssignor != nil && !slices.Contains(g.cfg.ConsumerAssignors, *req.ServerAssignor) {
		return kerr.UnsupportedAssignor, "ServerAssignor " + *req.ServerAssignor + " is not supported. Supported assignors: " + strings.Join(g.cfg.ConsumerAssignors, ", ") + "."
	}
	return kerr.None, ""
}

// becomeConsumerGroup turns an unknown or empty classic group into a
// consumer group (Kafka's upgrade of an empty classic group): its offsets
// stay, its classic metadata gets a tombstone. ok is false when the group
// has classic members.
func (g *Group) becomeConsumerGroup(now time.Time) (recs []Record, ok bool) {
	if g.cg != nil {
		return nil, true
	}
	if len(g.members) > 0 || len(g.pending) > 0 || (g.state != Empty && g.state != Dead) {
		return nil, false
	}
	if g.generation != 0 || g.protocolType != "" {
		recs = append(recs, Record{Key: GroupKeyBytes(g.id)})
	}
	g.resetMetadata()
	g.cg = newConsumerGroup(now)
	g.protocolType = consumerProtocolType
	g.transition(Empty, now)
	return recs, true
}

func (g *Group) consumerHeartbeat(t Ticket, req *kmsg.ConsumerGroupHeartbeatRequest, c Client, topics Topics, now time.Time) {
	v := req.Version
	fail := func(code kerr.Code, msg string) { g.reply(t, heartbeatError(v, code, msg)) }
	if code, msg := g.validateHeartbeat(req); code != kerr.None {
		fail(code, msg)
		return
	}
	g.groupConfig = c.GroupConfig
	var recs []Record
	if g.cg == nil {
		if req.MemberEpoch != 0 {
			fail(kerr.UnknownMemberID, "Member "+req.MemberID+" is not a member of group "+g.id+".")
			return
		}
		conv, ok := g.becomeConsumerGroup(now)
		if !ok {
			up, code, msg := g.upgradeClassicGroup(topics, now)
			if code != kerr.None {
				fail(code, msg)
				return
			}
			conv = up
		}
		recs = conv
	}
	cg := g.cg
	if req.MemberEpoch == leaveEpoch || req.MemberEpoch == staticLeaveEpoch {
		g.consumerLeave(t, req, recs, now)
		return
	}

	m, joined, removed, code, msg := g.consumerMember(req, now)
	if code != kerr.None {
		fail(code, msg)
		return
	}
	for _, old := range removed {
		recs = append(recs, consumerMemberTombstones(g.id, old)...)
	}
	if len(removed) > 0 {
		// The replacement took over the old member's target: record it
		// under the new id (the epoch bump below writes only targets
		// that change).
		recs = append(recs, consumerTargetMemberRecord(g.id, m.id, cg.target[m.id]))
	}
	before := *m
	changed := g.updateConsumerMember(m, req, c) || joined
	if changed {
		recs = append(recs, consumerMemberMetadataRecord(g.id, m))
	}
	subs := g.resolveSubscriptions(topics)
	if changed || !sameTopics(cg.topics, subs.topics) || len(removed) > 0 {
		recs = append(recs, g.bumpGroupEpoch(subs)...)
	}
	var owned partitions
	if req.Topics != nil {
		owned = partitions{}
		for _, rt := range req.Topics {
			for _, n := range rt.Partitions {
				owned.add(rt.TopicID, n)
			}
		}
	}
	if g.reconcile(m, owned, now) || joined || before.epoch != m.epoch {
		recs = append(recs, consumerCurrentAssignmentRecord(g.id, m))
	}
	g.heartbeatConsumer(m, now)
	g.syncConsumerState(now)

	resp := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	resp.Version = v
	resp.MemberID = strPtr(m.id)
	resp.MemberEpoch = m.epoch
	resp.HeartbeatIntervalMillis = int32(cmp.Or(g.groupConfig.HeartbeatInterval, g.cfg.ConsumerHeartbeatInterval).Milliseconds())
	if joined || req.MemberEpoch != m.epoch || !before.assigned.equal(m.assigned) || (owned != nil && !owned.equal(m.assigned)) {
		a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
		for _, id := range m.assigned.sortedTopics() {
			at := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
			at.TopicID = id
			at.Partitions = slices.Clone(m.assigned[id])
			a.Topics = append(a.Topics, at)
		}
		resp.Assignment = &a
	}
	g.consumerReply(t, recs, resp, func(code kerr.Code) kmsg.Response { return heartbeatError(v, code, "") })
}

// consumerReply answers t with resp once recs are durable (at once when
// there are none), or with failed(the mapped append error).
func (g *Group) consumerReply(t Ticket, recs []Record, resp kmsg.Response, failed func(kerr.Code) kmsg.Response) {
	if len(recs) == 0 {
		g.reply(t, resp)
		return
	}
	g.appendRecords(recs, func(code kerr.Code, _ time.Time) {
		if code != kerr.None {
			g.reply(t, failed(groupAppendError(code)))
			return
		}
		g.reply(t, resp)
	})
}

// consumerMember finds the heartbeat's member, or makes it when it joins.
// removed names members a static member replaced.
func (g *Group) consumerMember(req *kmsg.ConsumerGroupHeartbeatRequest, now time.Time) (m *cmember, joined bool, removed []string, code kerr.Code, msg string) {
	cg := g.cg
	unknown := func() (*cmember, bool, []string, kerr.Code, string) {
		return nil, false, nil, kerr.UnknownMemberID, "Member " + req.MemberID + " is not a member of group " + g.id + "."
	}
	if req.MemberEpoch == 0 {
		if req.InstanceID != nil {
			if oldID, ok := cg.static[*req.InstanceID]; ok && oldID != req.MemberID {
				old := cg.members[oldID]
				if old.epoch != staticLeaveEpoch {
					return nil, false, nil, kerr.UnreleasedInstanceID, "Static member " + oldID + " with instance id " + *req.InstanceID + " is not released yet."
				}
				// The instance comes back: the new member id takes
				// over the old one's assignment and epoch.
				nm := g.newMember(req)
				nm.epoch, nm.prevEpoch, nm.state = old.prevEpoch, old.prevEpoch, old.state
				nm.assigned, nm.revoking = old.assigned.clone(), old.revoking.clone()
				cg.target[nm.id] = cg.target[oldID]
				g.dropConsumerMember(old)
				cg.members[nm.id] = nm
				cg.static[*req.InstanceID] = nm.id
				cg.own(nm)
				return nm, true, []string{oldID}, kerr.None, ""
			}
		}
		if m := cg.members[req.MemberID]; m != nil && req.MemberID != "" {
			// A member rejoining (it was fenced, or retries its join):
			// it owns nothing any more.
			cg.release(m)
			m.assigned, m.revoking, m.state, m.epoch, m.prevEpoch = partitions{}, partitions{}, memberStable, 0, 0
			g.disarm(TimerConsumerRevocation, m.id)
			return m, false, nil, kerr.None, ""
		}
		if g.cfg.ConsumerMaxSize > 0 && len(cg.members) >= g.cfg.ConsumerMaxSize {
			return nil, false, nil, kerr.GroupMaxSizeReached, "The consumer group has reached its maximum capacity of " + itoa(g.cfg.ConsumerMaxSize) + " members."
		}
		m := g.newMember(req)
		cg.members[m.id] = m
		if m.instanceID != "" {
			cg.static[m.instanceID] = m.id
		}
		return m, true, nil, kerr.None, ""
	}
	m = cg.members[req.MemberID]
	if m == nil {
		return unknown()
	}
	if req.InstanceID != nil && cg.static[*req.InstanceID] != m.id {
		return nil, false, nil, kerr.FencedInstanceID, "Static member " + req.MemberID + " with instance id " + *req.InstanceID + " was fenced by another member."
	}
	if req.MemberEpoch > m.epoch {
		return nil, false, nil, kerr.FencedMemberEpoch, "The consumer group member has a greater member epoch (" + itoa(int(req.MemberEpoch)) + ") than the one known by the group coordinator (" + itoa(int(m.epoch)) + "). The member must abandon all its partitions and rejoin."
	}
	if req.MemberEpoch < m.epoch {
		lostResponse := req.MemberEpoch == m.prevEpoch && ownedSubset(req.Topics, m.assigned)
		if !lostResponse {
			return nil, false, nil, kerr.FencedMemberEpoch, "The consumer group member has a smaller member epoch (" + itoa(int(req.MemberEpoch)) + ") than the one known by the group coordinator (" + itoa(int(m.epoch)) + "). The member must abandon all its partitions and rejoin."
		}
	}
	return m, false, nil, kerr.None, ""
}

func ownedSubset(owned []kmsg.ConsumerGroupHeartbeatRequestTopic, assigned partitions) bool {
	for _, t := range owned {
		for _, n := range t.Partitions {
			if !assigned.has(t.TopicID, n) {
				return false
			}
		}
	}
	return true
}

func itoa(n int) string { return strconv.Itoa(n) }

func (g *Group) newMember(req *kmsg.ConsumerGroupHeartbeatRequest) *cmember {
	id := req.MemberID
	if id == "" {
		u := g.cfg.NewUUID()
		id = base64.RawURLEncoding.EncodeToString(u[:])
	}
	m := &cmember{id: id, assigned: partitions{}, revoking: partitions{}}
	if req.InstanceID != nil {
		m.instanceID = *req.InstanceID
	}
	return m
}

// updateMember applies the request's (non-null) fields to m and reports
// whether anything the group records changed.
func (g *Group) updateConsumerMember(m *cmember, req *kmsg.ConsumerGroupHeartbeatRequest, c Client) bool {
	changed := false
	set := func(dst *string, v string) {
		if *dst != v {
			*dst, changed = v, true
		}
	}
	if c.ID != "" || m.clientID == "" {
		set(&m.clientID, c.ID)
	}
	if c.Host != "" {
		set(&m.clientHost, c.Host)
	}
	if req.RackID != nil && (m.rackID == nil || *m.rackID != *req.RackID) {
		m.rackID, changed = strPtr(*req.RackID), true
	}
	if req.RebalanceTimeoutMillis > 0 {
		if d := time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond; d != m.rebalanceTimeout {
			m.rebalanceTimeout, changed = d, true
		}
	}
	if req.SubscribedTopicNames != nil {
		names := slices.Sorted(slices.Values(req.SubscribedTopicNames))
		names = slices.Compact(names)
		if !slices.Equal(names, m.topicNames) {
			m.topicNames, changed = names, true
		}
	}
	if req.SubscribedTopicRegex != nil {
		var re *string
		if *req.SubscribedTopicRegex != "" {
			re = strPtr(*req.SubscribedTopicRegex)
		}
		if !sameOptional(re, m.regex) {
			m.regex, changed = re, true
		}
	}
	if req.ServerAssignor != nil && !sameOptional(req.ServerAssignor, m.assignor) {
		m.assignor, changed = strPtr(*req.ServerAssignor), true
	}
	return changed
}

func sameOptional(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
