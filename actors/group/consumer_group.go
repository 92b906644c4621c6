package group

import (
	"cmp"
	"maps"
	"regexp"
	"slices"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
)

// invalidRegularExpression is INVALID_REGULAR_EXPRESSION (128), answered
// to a ConsumerGroupHeartbeat v1 whose subscribed regex does not compile.
const invalidRegularExpression kerr.Code = 128

// TopicMeta is what the consumer group protocol needs of one topic.
type TopicMeta struct {
	ID         [16]byte
	Partitions int32
}

// Topics is the cluster's topics as the shell sees them when it hands a
// ConsumerGroupHeartbeat to the core: the target assignment and regex
// subscriptions are computed from it. It must be an immutable snapshot
// (the core may keep it for the call only).
type Topics interface {
	Topic(name string) (TopicMeta, bool)
	// Names lists every topic, for regex subscriptions.
	Names() []string
}

// TopicMap is a Topics over a plain map (tests, and shells that build one).
type TopicMap map[string]TopicMeta

// Topic is Topics'.
func (m TopicMap) Topic(name string) (TopicMeta, bool) {
	t, ok := m[name]
	return t, ok
}

// Names is Topics'.
func (m TopicMap) Names() []string { return slices.Sorted(maps.Keys(m)) }

// memberState is a KIP-848 member's reconciliation state, with Kafka's
// numbers (MemberState, stored in ConsumerGroupCurrentMemberAssignment).
type memberState int8

const (
	// memberStable: the member owns its whole assignment at its epoch.
	memberStable memberState = 0
	// memberUnrevoked: the member must give up partitionsPendingRevocation
	// before it moves on; its epoch stays.
	memberUnrevoked memberState = 1
	// memberUnreleased: the member is at the target epoch but some of its
	// target partitions are still owned by others.
	memberUnreleased memberState = 2
)

// Epochs a ConsumerGroupHeartbeat uses to leave.
const (
	leaveEpoch       = -1 // the member leaves for good
	staticLeaveEpoch = -2 // a static member leaves, keeping its assignment for a while
)

// partitions is an assignment: topic id to sorted partition numbers.
type partitions map[[16]byte][]int32

func (p partitions) clone() partitions {
	out := make(partitions, len(p))
	for t, ps := range p {
		out[t] = slices.Clone(ps)
	}
	return out
}

func (p partitions) has(t [16]byte, n int32) bool {
	_, ok := slices.BinarySearch(p[t], n)
	return ok
}

func (p partitions) add(t [16]byte, n int32) {
	ps := p[t]
	if i, ok := slices.BinarySearch(ps, n); !ok {
		p[t] = slices.Insert(ps, i, n)
	}
}

func (p partitions) count() int {
	n := 0
	for _, ps := range p {
		n += len(ps)
	}
	return n
}

func (p partitions) equal(o partitions) bool {
	if p.count() != o.count() {
		return false
	}
	for t, ps := range p {
		if !slices.Equal(ps, o[t]) {
			return false
		}
	}
	return true
}

// sortedTopics is p's topic ids in byte order: deterministic iteration.
func (p partitions) sortedTopics() [][16]byte {
	ids := slices.Collect(maps.Keys(p))
	slices.SortFunc(ids, func(a, b [16]byte) int { return compareIDs(a, b) })
	return ids
}

func compareIDs(a, b [16]byte) int {
	for i := range a {
		if c := cmp.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// optional is s, or nil when empty (an instance id that is not set).
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// cmember is one KIP-848 consumer group member.
type cmember struct {
	id         string
	instanceID string // "" for a dynamic member
	rackID     *string
	clientID   string
	clientHost string

	rebalanceTimeout time.Duration
	topicNames       []string
	regex            *string
	re               *regexp.Regexp // regex compiled (compiledRegex)
	assignor         *string

	epoch     int32 // the epoch the member must heartbeat with
	prevEpoch int32 // the epoch before the last bump (a lost response)
	state     memberState
	assigned  partitions // owned (current assignment)
	revoking  partitions // partitions pending revocation

	// classic is set for a member that speaks the classic protocol
	// (consumer_classic.go).
	classic *classicInfo
}

// consumerGroup is the KIP-848 ("consumer" type) state of a group: the
// group epoch, the members, their target assignment and what each owns.
// A Group whose cg is set is a consumer group; its offsets stay on the
// Group.
type consumerGroup struct {
	epoch           int32
	assignmentEpoch int32
	members         map[string]*cmember
	static          map[string]string // instance id -> member id
	target          map[string]partitions
	// topics is the metadata of the subscribed topics the target was
	// last computed from, by name; a change in it bumps the group epoch.
	topics map[string]TopicMeta
	// owner is who holds each partition now (assigned or being revoked).
	owner map[tpID]string
	// regexes caches what the members' regexes matched
	// (consumer_subscriptions.go).
	regexes regexCache
	// created is the group's creation time (ms).
	created int64
}

// tpID names one partition by topic id.
type tpID struct {
	topic     [16]byte
	partition int32
}

func newConsumerGroup(now time.Time) *consumerGroup {
	return &consumerGroup{
		members: map[string]*cmember{},
		static:  map[string]string{},
		target:  map[string]partitions{},
		topics:  map[string]TopicMeta{},
		owner:   map[tpID]string{},
		created: now.UnixMilli(),
	}
}

// sortedMembers lists member ids in order: deterministic iteration.
func (cg *consumerGroup) sortedMembers() []string {
	return slices.Sorted(maps.Keys(cg.members))
}

// release forgets m's ownership of everything it holds.
func (cg *consumerGroup) release(m *cmember) {
	for _, p := range []partitions{m.assigned, m.revoking} {
		for t, ps := range p {
			for _, n := range ps {
				if cg.owner[tpID{t, n}] == m.id {
					delete(cg.owner, tpID{t, n})
				}
			}
		}
	}
}

// own records m's ownership of its assigned and revoking partitions.
func (cg *consumerGroup) own(m *cmember) {
	for _, p := range []partitions{m.assigned, m.revoking} {
		for t, ps := range p {
			for _, n := range ps {
				cg.owner[tpID{t, n}] = m.id
			}
		}
	}
}

// stateName is the group's state as ConsumerGroupDescribe and ListGroups
// name it (Kafka's ConsumerGroupState).
func (cg *consumerGroup) stateName() string {
	switch {
	case len(cg.members) == 0:
		return "Empty"
	case cg.epoch != cg.assignmentEpoch:
		return "Assigning"
	}
	for _, m := range cg.members {
		if m.epoch != cg.assignmentEpoch || m.state != memberStable {
			return "Reconciling"
		}
	}
	return "Stable"
}

// idToName maps topic ids of the subscribed topics back to names.
func (cg *consumerGroup) idToName() map[[16]byte]string {
	out := make(map[[16]byte]string, len(cg.topics))
	for name, t := range cg.topics {
		out[t.ID] = name
	}
	return out
}

// subscribedNames is the union of the members' subscribed topics (names
// and regex matches) as last resolved: what OffsetDelete and offset
// expiry treat as in use.
func (cg *consumerGroup) subscribedNames() map[string]bool {
	out := make(map[string]bool, len(cg.topics))
	for name := range cg.topics {
		out[name] = true
	}
	for _, m := range cg.members {
		for _, n := range m.topicNames {
			out[n] = true
		}
	}
	return out
}
