package group

import (
	"bytes"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Client is who sent a request: the client id from the request header and
// the client's host as Kafka records it ("/" + IP address).
type Client struct {
	ID   string
	Host string
	// Topics is the cluster's topics as the request found them; only
	// ConsumerGroupHeartbeat uses it (nil: no topic exists).
	Topics Topics
	// GroupConfig is the group's own configs as the request found them;
	// only ConsumerGroupHeartbeat uses it.
	GroupConfig ConsumerGroupConfig
}

// ConsumerGroupConfig is a consumer group's own configs (Kafka's
// GroupConfig, set with IncrementalAlterConfigs on its GROUP resource,
// which checks them against the broker's bounds). A zero field is not
// set: the broker's value (Config) applies. Kafka reads them at every
// heartbeat, and so does the core: a change reaches each member at its
// next heartbeat.
type ConsumerGroupConfig struct {
	// SessionTimeout is consumer.session.timeout.ms.
	SessionTimeout time.Duration
	// HeartbeatInterval is consumer.heartbeat.interval.ms.
	HeartbeatInterval time.Duration
}

// joinError is a failed JoinGroup answer: generation -1, no protocol, no
// leader, memberID echoed (or the generated id for MEMBER_ID_REQUIRED).
func joinError(version int16, memberID string, code kerr.Code) *kmsg.JoinGroupResponse {
	r := kmsg.NewPtrJoinGroupResponse()
	r.Version = version
	r.ErrorCode = int16(code)
	r.Generation = -1
	r.MemberID = memberID
	return r
}

func syncError(version int16, code kerr.Code) *kmsg.SyncGroupResponse {
	r := kmsg.NewPtrSyncGroupResponse()
	r.Version = version
	r.ErrorCode = int16(code)
	r.MemberAssignment = []byte{}
	return r
}

// newMemberID makes a member id the way Kafka does: the group instance id
// (static members) or the client id, a dash, and a random UUID.
func (g *Group) newMemberID(clientID, instanceID string) string {
	prefix := clientID
	if instanceID != "" {
		prefix = instanceID
	}
	return prefix + "-" + formatUUID(g.cfg.NewUUID())
}

// JoinGroup handles a JoinGroup (v0-v9). The answer may come in these
// Effects or later, when the rebalance's join phase ends (from another
// request, or OnTimer): the request is then parked under t.
func (g *Group) JoinGroup(t Ticket, req *kmsg.JoinGroupRequest, c Client, now time.Time) Effects {
	g.begin()
	g.join(t, req, c, now)
	return g.end()
}

func (g *Group) join(t Ticket, req *kmsg.JoinGroupRequest, c Client, now time.Time) {
	v := req.Version
	fail := func(code kerr.Code) { g.reply(t, joinError(v, req.MemberID, code)) }

	if req.Group == "" {
		fail(kerr.InvalidGroupID)
		return
	}
	session := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	if session < g.cfg.MinSessionTimeout || session > g.cfg.MaxSessionTimeout {
		fail(kerr.InvalidSessionTimeout)
		return
	}
	rebalance := time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	if v == 0 || req.RebalanceTimeoutMillis < 0 {
		rebalance = session // v0 has no rebalance timeout
	}
	instanceID := ""
	if v >= 5 && req.InstanceID != nil {
		instanceID = *req.InstanceID
	}
	if g.state == Dead {
		// Deleted while the request was on its way: the client finds
		// the coordinator again and rejoins a fresh group.
		fail(kerr.CoordinatorNotAvailable)
		return
	}
	if g.cg != nil {
		if len(g.cg.members) > 0 {
			g.classicJoin(t, req, c, now)
			return
		}
		// An empty consumer group goes back to the classic protocol
		// (Kafka's downgrade): its records are deleted, its offsets stay.
		g.appendRecords(g.dropConsumerGroup(), func(kerr.Code, time.Time) {})
		g.resetMetadata()
	}
	if req.MemberID != "" && !g.exists() {
		fail(kerr.UnknownMemberID)
		return
	}
	if !g.acceptsJoin(req.MemberID) {
		if m := g.get(req.MemberID); m != nil {
			g.removeAndUpdate(m, kerr.GroupMaxSizeReached, now)
		}
		fail(kerr.GroupMaxSizeReached)
		return
	}
	// Copies: request bytes alias the request frame, and the group keeps
	// them for as long as the member lives.
	protocols := make([]protocol, 0, len(req.Protocols))
	for _, p := range req.Protocols {
		protocols = append(protocols, protocol{name: p.Name, metadata: nonNil(bytes.Clone(p.Metadata))})
	}
	j := joinRequest{
		ticket: t, version: v, memberID: req.MemberID, instanceID: instanceID,
		client: c, session: session, rebalance: rebalance,
		protocolType: req.ProtocolType, protocols: protocols,
	}
	if !g.supportsProtocols(req.ProtocolType, protocols) {
		fail(kerr.InconsistentGroupProtocol)
		return
	}
	if req.MemberID == "" {
		g.joinNewMember(j, now)
	} else {
		g.joinKnownMember(j, now)
	}
	g.tryCompleteJoin(now)
}

// joinRequest is a validated JoinGroup.
type joinRequest struct {
	ticket       Ticket
	version      int16
	memberID     string
	instanceID   string
	client       Client
	session      time.Duration
	rebalance    time.Duration
	protocolType string
	protocols    []protocol
}

func (j *joinRequest) park() *parked { return &parked{ticket: j.ticket, version: j.version} }

// acceptsJoin applies group.max.size: a member already counted may always
// rejoin; a new one only while there is room.
func (g *Group) acceptsJoin(memberID string) bool {
	if g.cfg.MaxSize <= 0 {
		return true
	}
	m := g.get(memberID)
	switch g.state {
	case PreparingRebalance:
		return (m != nil && m.join != nil) || g.numAwaiting < g.cfg.MaxSize
	case CompletingRebalance, Stable:
		return m != nil || len(g.members) < g.cfg.MaxSize
	}
	return true
}

func (g *Group) joinNewMember(j joinRequest, now time.Time) {
	newID := g.newMemberID(j.client.ID, j.instanceID)
	if j.instanceID != "" {
		if oldID, ok := g.staticMembers[j.instanceID]; ok {
			g.replaceStaticMember(j, oldID, newID, now)
			return
		}
		j.memberID = newID
		g.addMemberAndRebalance(j, now)
		return
	}
	if j.version >= 4 {
		// KIP-394: hand out an id and have the client come back with
		// it, so a client that times out and retries cannot leave
		// anonymous members behind. Never for v0-v3: those clients do
		// not know the error.
		g.pending[newID] = true
		g.arm(TimerPendingMember, newID, now.Add(j.session))
		g.reply(j.ticket, joinError(j.version, newID, kerr.MemberIDRequired))
		return
	}
	j.memberID = newID
	g.addMemberAndRebalance(j, now)
}

func (g *Group) joinKnownMember(j joinRequest, now time.Time) {
	if g.pending[j.memberID] {
		// The KIP-394 round trip's second half: a pending id is
		// accepted as a new member (pending members are never static).
		g.disarm(TimerPendingMember, j.memberID)
		j.instanceID = ""
		g.addMemberAndRebalance(j, now)
		return
	}
	var instance *string
	if j.instanceID != "" {
		instance = &j.instanceID
	}
	if g.fenced(instance, j.memberID) {
		g.reply(j.ticket, joinError(j.version, j.memberID, kerr.FencedInstanceID))
		return
	}
	m := g.get(j.memberID)
	if m == nil || (j.instanceID != "" && g.staticMembers[j.instanceID] == "") {
		g.reply(j.ticket, joinError(j.version, j.memberID, kerr.UnknownMemberID))
		return
	}
	switch g.state {
	case PreparingRebalance:
		g.updateMember(m, j)
	case CompletingRebalance:
		if m.sameProtocols(j.protocols) {
			// A lost JoinGroup answer: repeat it.
			g.reply(j.ticket, g.joinResult(j.version, m, false))
			return
		}
		g.updateMember(m, j)
		g.prepareRebalance(now)
	case Stable:
		if g.isLeader(m.id) || !m.sameProtocols(j.protocols) {
			// The leader rejoins to trigger a rebalance (for example
			// on topic metadata changes); anyone's new metadata needs
			// a new assignment.
			g.updateMember(m, j)
			g.prepareRebalance(now)
			return
		}
		g.reply(j.ticket, g.joinResult(j.version, m, false))
		g.heartbeatFrom(m, now)
	default:
		// Empty with a member id it does not know.
		g.reply(j.ticket, joinError(j.version, j.memberID, kerr.UnknownMemberID))
	}
}

// updateMember takes the member's new protocols and timeouts and parks
// its JoinGroup.
func (g *Group) updateMember(m *member, j joinRequest) {
	m.protocols = j.protocols
	m.rebalanceTimeout = j.rebalance
	m.sessionTimeout = j.session
	m.clientID = j.client.ID
	m.clientHost = j.client.Host
	g.parkJoin(m, j.park())
}

func (g *Group) addMemberAndRebalance(j joinRequest, now time.Time) {
	m := &member{
		id:               j.memberID,
		instanceID:       j.instanceID,
		clientID:         j.client.ID,
		clientHost:       j.client.Host,
		rebalanceTimeout: j.rebalance,
		sessionTimeout:   j.session,
		protocolType:     j.protocolType,
		protocols:        j.protocols,
		join:             j.park(),
		isNew:            true,
	}
	if g.state == PreparingRebalance && g.initialDelay {
		g.newMemberAdded = true
	}
	g.add(m)
	g.arm(TimerSession, m.id, now.Add(g.cfg.NewMemberJoinTimeout))
	g.prepareRebalance(now)
}

// replaceStaticMember handles a static member that restarted: its
// instance id is known but it comes with no member id. The old member id
// is fenced (its parked requests get FENCED_INSTANCE_ID, and so will any
// later request). In a Stable group whose selected protocol would not
// change, the new id takes over the old one's assignment without a
// rebalance, once the new mapping is in the log (KIP-345).
func (g *Group) replaceStaticMember(j joinRequest, oldID, newID string, now time.Time) {
	m := g.get(oldID)
	oldProtocols, oldRebalance, oldSession := m.protocols, m.rebalanceTimeout, m.sessionTimeout
	oldClientID, oldClientHost := m.clientID, m.clientHost
	g.answerJoin(m, func(v int16) *kmsg.JoinGroupResponse { return joinError(v, oldID, kerr.FencedInstanceID) })
	g.answerSync(m, kerr.FencedInstanceID)
	g.renameMember(m, newID)
	g.disarm(TimerSession, oldID)
	g.heartbeatFrom(m, now)
	g.updateMember(m, j)

	switch g.state {
	case Stable:
		if g.selectProtocol() != g.protocol {
			g.prepareRebalance(now)
			return
		}
		gen := g.generation
		g.storeGroup(nil, func(code kerr.Code, now time.Time) {
			cur := g.get(newID)
			if cur == nil || cur.join == nil || g.state != Stable || g.generation != gen {
				return // a rebalance took over; it answers the join
			}
			if code != kerr.None {
				// Not durable: undo, so the old id stays valid.
				g.answerJoin(cur, func(v int16) *kmsg.JoinGroupResponse {
					return joinError(v, "", groupAppendError(code))
				})
				cur.protocols, cur.rebalanceTimeout, cur.sessionTimeout = oldProtocols, oldRebalance, oldSession
				cur.clientID, cur.clientHost = oldClientID, oldClientHost
				g.disarm(TimerSession, newID)
				g.renameMember(cur, oldID)
				g.heartbeatFrom(cur, now)
				return
			}
			leader := g.isLeader(newID)
			g.answerJoin(cur, func(v int16) *kmsg.JoinGroupResponse {
				// KIP-814: a static leader that comes back keeps the
				// current assignment and must not compute a new one.
				return g.joinResult(v, cur, leader)
			})
		})
	case CompletingRebalance:
		// The new id must get the assignment of a fresh generation.
		g.prepareRebalance(now)
	case PreparingRebalance:
		// It stays parked until the join phase ends.
	}
}

// renameMember gives m a new member id, keeping its place in the join
// order, its leadership and its instance mapping.
func (g *Group) renameMember(m *member, newID string) {
	oldID := m.id
	delete(g.members, oldID)
	m.id = newID
	g.members[newID] = m
	for i, id := range g.order {
		if id == oldID {
			g.order[i] = newID
		}
	}
	if g.leader == oldID {
		g.leader = newID
	}
	if g.pendingSync[oldID] {
		delete(g.pendingSync, oldID)
		g.pendingSync[newID] = true
	}
	if m.instanceID != "" {
		g.staticMembers[m.instanceID] = newID
	}
}
