package group

import (
	"slices"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// State is a classic group's state. The names are Kafka's, as
// DescribeGroups and ListGroups report them.
type State uint8

const (
	Empty State = iota
	PreparingRebalance
	CompletingRebalance
	Stable
	Dead
)

func (s State) String() string {
	switch s {
	case Empty:
		return "Empty"
	case PreparingRebalance:
		return "PreparingRebalance"
	case CompletingRebalance:
		return "CompletingRebalance"
	case Stable:
		return "Stable"
	case Dead:
		return "Dead"
	}
	return "Unknown"
}

// consumerProtocolType is the protocol type of Kafka consumers; only such
// groups have subscriptions the coordinator can read.
const consumerProtocolType = "consumer"

// topicPartition names one partition's committed offset.
type topicPartition struct {
	topic     string
	partition int32
}

// Group is one consumer group's coordinator state: members, generation,
// rebalance progress and committed offsets. Every method takes the
// current time and returns Effects; a Group does no I/O and reads no
// clock.
//
// Threading: owned by one actor; not safe for concurrent use.
type Group struct {
	id  string
	cfg Config

	state          State
	stateTimestamp int64 // ms of the last state change; -1 unknown
	generation     int32
	protocolType   string // "" until the first member joins
	protocol       string // the selected protocol; "" when none
	leader         string // member id; "" when no members

	members       map[string]*member
	order         []string          // member ids in join order: deterministic iteration
	staticMembers map[string]string // group instance id -> member id
	pending       map[string]bool   // KIP-394 member ids handed out, not yet joined
	pendingSync   map[string]bool   // members that must still SyncGroup this generation
	numAwaiting   int               // members with a parked JoinGroup

	// Join phase bookkeeping (PreparingRebalance only).
	initialDelay   bool          // the join timer is the initial rebalance delay
	delayRemaining time.Duration // rebalance timeout left after the current delay
	newMemberAdded bool          // a member joined during the current delay

	syncStoreInFlight bool // the leader's assignment is being appended

	// subscribed is the union of the members' subscribed topics (consumer
	// groups whose subscriptions decode); nil when unknown.
	subscribed map[string]bool

	// cg is set when the group is a KIP-848 consumer group (type
	// "consumer"); its members, epochs and assignments live there, its
	// offsets here (consumer_group.go).
	cg *consumerGroup
	// groupConfig is the group's own configs, as the last
	// ConsumerGroupHeartbeat brought them (zero until then: the
	// broker's values).
	groupConfig ConsumerGroupConfig

	offsets        map[topicPartition]OffsetValue
	pendingCommits map[topicPartition]int // appends in flight per partition
	// txnOffsets are transactions' offsets, by producer id, durable but
	// waiting for their marker (txn_offsets.go).
	txnOffsets map[int64]map[topicPartition]OffsetValue

	nextToken uint64
	appends   map[uint64]func(code kerr.Code, now time.Time)

	timers map[TimerKey]time.Time

	fx Effects // effects of the call in progress
}

// NewGroup returns the state of a group that does not exist yet: Empty,
// generation 0, no members and no offsets. A JoinGroup (or a simple
// consumer's OffsetCommit) brings it into existence; until then it answers
// like an unknown group.
func NewGroup(id string, cfg Config) *Group {
	return &Group{
		id:             id,
		cfg:            cfg.withDefaults(),
		stateTimestamp: -1,
		members:        map[string]*member{},
		staticMembers:  map[string]string{},
		pending:        map[string]bool{},
		pendingSync:    map[string]bool{},
		offsets:        map[topicPartition]OffsetValue{},
		pendingCommits: map[topicPartition]int{},
		txnOffsets:     map[int64]map[topicPartition]OffsetValue{},
		appends:        map[uint64]func(kerr.Code, time.Time){},
		timers:         map[TimerKey]time.Time{},
	}
}

// ID is the group id.
func (g *Group) ID() string { return g.id }

// State is the group's current state.
func (g *Group) State() State { return g.state }

// Generation is the current generation id.
func (g *Group) Generation() int32 { return g.generation }

// Leader is the leader's member id, "" when there are no members.
func (g *Group) Leader() string { return g.leader }

// Protocol is the selected protocol (assignor), "" when none.
func (g *Group) Protocol() string { return g.protocol }

// ProtocolType is the group's protocol type ("consumer", "connect", ...).
func (g *Group) ProtocolType() string { return g.protocolType }

// Members lists the member ids in join order.
func (g *Group) Members() []string { return slices.Clone(g.order) }

// exists reports whether Kafka would know this group: it has been joined,
// holds offsets or has a history, and has not been deleted.
func (g *Group) exists() bool {
	if g.state == Dead {
		return false
	}
	return g.cg != nil || g.state != Empty || g.generation != 0 || len(g.members) != 0 || len(g.pending) != 0 ||
		len(g.offsets) != 0 || g.protocolType != "" || len(g.appends) != 0
}

// Vacant reports whether the group holds nothing worth keeping: it is
// Dead, or it never came into existence, and no append or timer of its is
// outstanding. The shell may then drop it (stop its actor); a later
// request starts again from NewGroup.
func (g *Group) Vacant() bool {
	return (g.state == Dead || !g.exists()) && len(g.appends) == 0 && len(g.timers) == 0 && len(g.txnOffsets) == 0
}

// begin starts a call: effects accumulate in g.fx until end.
func (g *Group) begin() { g.fx = Effects{} }

func (g *Group) end() Effects {
	fx := g.fx
	g.fx = Effects{}
	return fx
}

func (g *Group) reply(t Ticket, r kmsg.Response) {
	g.fx.Replies = append(g.fx.Replies, Reply{To: t, Response: r})
}

func (g *Group) arm(kind TimerKind, memberID string, at time.Time) {
	k := TimerKey{Group: g.id, Kind: kind, Member: memberID}
	g.timers[k] = at
	g.fx.Timers = append(g.fx.Timers, Timer{Key: k, At: at})
}

func (g *Group) disarm(kind TimerKind, memberID string) {
	k := TimerKey{Group: g.id, Kind: kind, Member: memberID}
	if _, ok := g.timers[k]; ok {
		delete(g.timers, k)
		g.fx.Cancel = append(g.fx.Cancel, k)
	}
}

// appendRecords emits an Append; done runs from OnAppended with the
// partition's error code.
func (g *Group) appendRecords(recs []Record, done func(code kerr.Code, now time.Time)) {
	g.nextToken++
	g.appends[g.nextToken] = done
	g.fx.Appends = append(g.fx.Appends, Append{Group: g.id, Token: g.nextToken, Records: recs})
}

// OnAppended completes the Append with this token: code is the partition's
// append result (kerr.None when durable). Unknown tokens are ignored.
func (g *Group) OnAppended(token uint64, code kerr.Code, now time.Time) Effects {
	g.begin()
	if done, ok := g.appends[token]; ok {
		delete(g.appends, token)
		done(code, now)
	}
	return g.end()
}

func (g *Group) transition(s State, now time.Time) {
	g.state = s
	g.stateTimestamp = now.UnixMilli()
}

// member lookup and bookkeeping ------------------------------------------

func (g *Group) get(id string) *member { return g.members[id] }

func (g *Group) isLeader(id string) bool { return id != "" && g.leader == id }

// fenced reports whether instanceID maps to a member other than memberID
// (KIP-345): the request comes from a replaced static member.
func (g *Group) fenced(instanceID *string, memberID string) bool {
	if instanceID == nil {
		return false
	}
	cur, ok := g.staticMembers[*instanceID]
	return ok && cur != memberID
}

// add makes m a member; the first member of an empty group leads it and
// sets its protocol type.
func (g *Group) add(m *member) {
	if len(g.members) == 0 {
		g.protocolType = m.protocolType
	}
	g.members[m.id] = m
	g.order = append(g.order, m.id)
	if m.instanceID != "" {
		g.staticMembers[m.instanceID] = m.id
	}
	if g.leader == "" {
		g.leader = m.id
	}
	delete(g.pending, m.id)
	if m.join != nil {
		g.numAwaiting++
	}
}

// parkJoin parks a JoinGroup for m, answering a JoinGroup it replaces
// (a client that gave up on its first request) with REBALANCE_IN_PROGRESS
// so that nothing is left unanswered.
func (g *Group) parkJoin(m *member, p *parked) {
	if m.join != nil {
		g.reply(m.join.ticket, joinError(m.join.version, m.id, kerr.RebalanceInProgress))
	} else {
		g.numAwaiting++
	}
	m.join = p
}

func (g *Group) parkSync(m *member, p *parked) {
	if m.sync != nil {
		g.reply(m.sync.ticket, syncError(m.sync.version, kerr.RebalanceInProgress))
	}
	m.sync = p
}

// answerJoin answers m's parked JoinGroup, if any, with resp.
func (g *Group) answerJoin(m *member, resp func(version int16) *kmsg.JoinGroupResponse) {
	if m.join == nil {
		return
	}
	g.reply(m.join.ticket, resp(m.join.version))
	m.join = nil
	g.numAwaiting--
}

func (g *Group) answerSync(m *member, code kerr.Code) {
	if m.sync == nil {
		return
	}
	r := syncError(m.sync.version, code)
	if code == kerr.None {
		r.MemberAssignment = m.assignment
		if m.sync.version >= 5 {
			r.ProtocolType = strPtr(g.protocolType)
			r.Protocol = strPtr(g.protocol)
		}
	}
	g.reply(m.sync.ticket, r)
	m.sync = nil
}

// remove deletes m from the group. Its parked requests are answered with
// code (UNKNOWN_MEMBER_ID when it expired or left, FENCED_INSTANCE_ID when
// replaced) so that none dangles. The caller decides what the removal
// means for the group's state (removeAndUpdate).
func (g *Group) remove(m *member, code kerr.Code) {
	g.answerJoin(m, func(v int16) *kmsg.JoinGroupResponse { return joinError(v, m.id, code) })
	g.answerSync(m, code)
	delete(g.members, m.id)
	g.order = slices.DeleteFunc(g.order, func(id string) bool { return id == m.id })
	if m.instanceID != "" && g.staticMembers[m.instanceID] == m.id {
		delete(g.staticMembers, m.instanceID)
	}
	delete(g.pendingSync, m.id)
	g.disarm(TimerSession, m.id)
	if g.leader == m.id {
		g.leader = ""
		if len(g.order) > 0 {
			g.leader = g.order[0]
		}
	}
}

// removeAndUpdate removes m and moves the group on: a Stable or
// CompletingRebalance group rebalances, a rebalancing one may now be
// complete.
func (g *Group) removeAndUpdate(m *member, code kerr.Code, now time.Time) {
	g.remove(m, code)
	switch g.state {
	case Stable, CompletingRebalance:
		g.prepareRebalance(now)
	case PreparingRebalance:
		g.tryCompleteJoin(now)
	}
}

// rebalanceTimeout is the longest rebalance timeout of the members.
func (g *Group) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

// supportsProtocols reports whether a member joining with this protocol
// type and these protocols can join: an empty group takes anything
// non-empty; otherwise the type must match and one protocol must be
// supported by every current member.
func (g *Group) supportsProtocols(protocolType string, ps []protocol) bool {
	if len(g.members) == 0 {
		return protocolType != "" && len(ps) > 0
	}
	if protocolType != g.protocolType {
		return false
	}
	for _, p := range ps {
		if g.supportedByAll(p.name, nil) {
			return true
		}
	}
	return false
}

// supportedByAll reports whether every member (except skip) supports name.
func (g *Group) supportedByAll(name string, skip *member) bool {
	for _, m := range g.members {
		if m == skip {
			continue
		}
		if !hasProtocol(m, name) {
			return false
		}
	}
	return true
}

func hasProtocol(m *member, name string) bool {
	for _, p := range m.protocols {
		if p.name == name {
			return true
		}
	}
	return false
}

// selectProtocol picks the protocol for the next generation: among the
// protocols every member supports, each member votes for its most
// preferred one and the most voted wins; ties go to the leader's order of
// preference. "" when there is no common protocol.
func (g *Group) selectProtocol() string {
	if len(g.members) == 0 {
		return ""
	}
	first := g.members[g.order[0]]
	if l := g.get(g.leader); l != nil {
		first = l
	}
	candidates := map[string]bool{}
	for _, p := range first.protocols {
		if g.supportedByAll(p.name, nil) {
			candidates[p.name] = true
		}
	}
	votes := map[string]int{}
	for _, id := range g.order {
		if v := g.members[id].vote(candidates); v != "" {
			votes[v]++
		}
	}
	best, bestVotes := "", -1
	for _, p := range first.protocols {
		if candidates[p.name] && votes[p.name] > bestVotes {
			best, bestVotes = p.name, votes[p.name]
		}
	}
	return best
}

// computeSubscribed decodes every member's consumer subscription for the
// selected protocol; nil when the group is not a consumer group or one of
// them does not decode (then nothing can be said about its topics).
func (g *Group) computeSubscribed() map[string]bool {
	if g.protocolType != consumerProtocolType || g.protocol == "" {
		return nil
	}
	topics := map[string]bool{}
	for _, m := range g.members {
		var sub kmsg.ConsumerMemberMetadata
		if err := sub.ReadFrom(m.metadataFor(g.protocol)); err != nil {
			return nil
		}
		for _, t := range sub.Topics {
			topics[t] = true
		}
	}
	return topics
}

// OnTimer handles the timer with key k, armed by an earlier Effects. A
// timer that is no longer armed, or fires before its deadline, does
// nothing (an early one is re-armed).
func (g *Group) OnTimer(k TimerKey, now time.Time) Effects {
	g.begin()
	at, ok := g.timers[k]
	switch {
	case !ok:
	case now.Before(at):
		g.fx.Timers = append(g.fx.Timers, Timer{Key: k, At: at})
	default:
		delete(g.timers, k)
		switch k.Kind {
		case TimerSession:
			g.onSessionTimer(k.Member, now)
		case TimerPendingMember:
			g.onPendingMemberTimer(k.Member, now)
		case TimerJoin:
			g.onJoinTimer(now)
		case TimerSync:
			g.onSyncTimer(now)
		case TimerConsumerSession:
			g.onConsumerSessionTimer(k.Member, now)
		case TimerConsumerRevocation:
			g.onConsumerRevocationTimer(k.Member, now)
		}
	}
	return g.end()
}

// heartbeatFrom restarts m's session timer.
func (g *Group) heartbeatFrom(m *member, now time.Time) {
	g.arm(TimerSession, m.id, now.Add(m.sessionTimeout))
}

func (g *Group) onSessionTimer(id string, now time.Time) {
	m := g.get(id)
	if m == nil {
		return
	}
	if !m.isNew && (m.join != nil || m.sync != nil) {
		// A member waiting on the coordinator cannot heartbeat; the
		// rebalance and sync timeouts bound it instead.
		g.heartbeatFrom(m, now)
		return
	}
	g.removeAndUpdate(m, kerr.UnknownMemberID, now)
}

func (g *Group) onPendingMemberTimer(id string, now time.Time) {
	if !g.pending[id] {
		return
	}
	delete(g.pending, id)
	if g.state == PreparingRebalance {
		g.tryCompleteJoin(now)
	}
}

func (g *Group) onSyncTimer(now time.Time) {
	if (g.state != CompletingRebalance && g.state != Stable) || len(g.pendingSync) == 0 {
		return
	}
	for _, id := range slices.Clone(g.order) {
		if g.pendingSync[id] {
			g.remove(g.members[id], kerr.UnknownMemberID)
		}
	}
	g.prepareRebalance(now)
}
