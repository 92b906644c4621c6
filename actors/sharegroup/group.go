package sharegroup

import (
	"slices"
	"sort"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
)

// TopicInfo is what assignment needs of a topic: its id and partition
// count, from the broker's routing table.
type TopicInfo struct {
	ID         [16]byte
	Partitions int32
}

// Assignment maps a topic id to the partitions a member is given.
type Assignment map[[16]byte][]int32

// Member is one consumer of a share group.
type Member struct {
	ID, ClientID, ClientHost string
	RackID                   *string
	Epoch                    int32
	Subscribed               []string
	Assigned                 Assignment // what the member was last sent
	target                   Assignment // what the assignor gives it now
	lastSeen                 time.Time
}

// Group is the pure core of one share group's membership: members join,
// heartbeat and leave, and the server assigns with Kafka's simple
// assignor (assign.go: partitions spread over the members, shared when
// members outnumber them; share partitions, not members, keep records
// from going to two consumers). A member is sent its target on its next
// heartbeat; share groups have no revocation step.
type Group struct {
	ID      string
	Epoch   int32
	Members map[string]*Member
}

// NewGroup is an empty share group.
func NewGroup(id string) *Group { return &Group{ID: id, Members: map[string]*Member{}} }

// State is the group's state as ShareGroupDescribe names it.
func (g *Group) State() string {
	if len(g.Members) == 0 {
		return "Empty"
	}
	return "Stable"
}

// Heartbeat is one ShareGroupHeartbeat's input.
type Heartbeat struct {
	MemberID, ClientID, ClientHost string
	RackID                         *string
	MemberEpoch                    int32
	Subscribed                     []string // nil: unchanged
}

// HeartbeatResult is the answer: the member's epoch, and its assignment
// when it changed (nil: unchanged).
type HeartbeatResult struct {
	Code     kerr.Code
	Epoch    int32
	Assigned Assignment
	Left     bool
}

// Heartbeat applies one heartbeat at now against the topics that exist.
func (g *Group) Heartbeat(h Heartbeat, topics map[string]TopicInfo, now time.Time) HeartbeatResult {
	m := g.Members[h.MemberID]
	switch {
	case h.MemberID == "":
		return HeartbeatResult{Code: kerr.InvalidRequest}
	case h.MemberEpoch == -1:
		if m == nil {
			return HeartbeatResult{Code: kerr.UnknownMemberID}
		}
		delete(g.Members, h.MemberID)
		g.Epoch++
		return HeartbeatResult{Epoch: -1, Left: true}
	case h.MemberEpoch == 0:
		if h.Subscribed == nil {
			return HeartbeatResult{Code: kerr.InvalidRequest}
		}
		if m == nil {
			m = &Member{ID: h.MemberID}
			g.Members[h.MemberID] = m
			g.Epoch++
		}
		// A rejoin starts over: the assignment is sent again.
		m.Assigned = nil
	case m == nil:
		return HeartbeatResult{Code: kerr.UnknownMemberID}
	case h.MemberEpoch != m.Epoch:
		return HeartbeatResult{Code: kerr.FencedMemberEpoch}
	}
	m.ClientID, m.ClientHost, m.RackID, m.lastSeen = h.ClientID, h.ClientHost, h.RackID, now
	if h.Subscribed != nil && !slices.Equal(sorted(h.Subscribed), m.Subscribed) {
		m.Subscribed = sorted(h.Subscribed)
		g.Epoch++
	}
	g.assign(topics)
	want := m.target
	if m.Assigned == nil || !sameAssignment(want, m.Assigned) {
		m.Assigned = want
		if g.Epoch <= m.Epoch {
			g.Epoch = m.Epoch + 1
		}
		m.Epoch = g.Epoch
		return HeartbeatResult{Epoch: m.Epoch, Assigned: want}
	}
	return HeartbeatResult{Epoch: m.Epoch}
}

// Expire removes the members not heard from within timeout and returns
// their ids (their acquisition locks are then released).
func (g *Group) Expire(now time.Time, timeout time.Duration) []string {
	var gone []string
	for id, m := range g.Members {
		if now.Sub(m.lastSeen) > timeout {
			delete(g.Members, id)
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		g.Epoch++
		sort.Strings(gone)
	}
	return gone
}

// assign recomputes every member's target from the previous targets: the
// assignor is sticky and a function of its input, so with nothing changed
// the targets stay as they are.
func (g *Group) assign(topics map[string]TopicInfo) {
	subscribed := make(map[string][]string, len(g.Members))
	previous := make(map[string]Assignment, len(g.Members))
	for id, m := range g.Members {
		subscribed[id], previous[id] = m.Subscribed, m.target
	}
	for id, a := range AssignShares(subscribed, previous, topics) {
		g.Members[id].target = a
	}
}

func sameAssignment(a, b Assignment) bool {
	if len(a) != len(b) {
		return false
	}
	for id, ps := range a {
		if !slices.Equal(ps, b[id]) {
			return false
		}
	}
	return true
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}
