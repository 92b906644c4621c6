package group

import (
	"bytes"
	"time"
)

// protocol is one (assignor name, metadata) pair a member supports, in the
// member's order of preference.
type protocol struct {
	name     string
	metadata []byte
}

// parked is a request the core holds until it can answer it.
type parked struct {
	ticket  Ticket
	version int16
}

// member is one classic-protocol group member.
type member struct {
	id               string
	instanceID       string // "" for a dynamic member
	clientID         string
	clientHost       string
	rebalanceTimeout time.Duration
	sessionTimeout   time.Duration
	protocolType     string
	protocols        []protocol
	assignment       []byte

	// join and sync are the member's parked JoinGroup and SyncGroup, nil
	// when none is waiting.
	join *parked
	sync *parked

	// isNew is set from the member's first JoinGroup until that join is
	// answered: such a member cannot heartbeat yet, so its session timer
	// is NewMemberJoinTimeout instead of the session timeout.
	isNew bool
}

func (m *member) static() bool { return m.instanceID != "" }

// metadataFor is the member's metadata for the named protocol.
func (m *member) metadataFor(name string) []byte {
	for _, p := range m.protocols {
		if p.name == name {
			return p.metadata
		}
	}
	return nil
}

// sameProtocols reports whether the member would join with exactly the
// same protocols (names, order and metadata) as it has.
func (m *member) sameProtocols(ps []protocol) bool {
	if len(ps) != len(m.protocols) {
		return false
	}
	for i := range ps {
		if ps[i].name != m.protocols[i].name || !bytes.Equal(ps[i].metadata, m.protocols[i].metadata) {
			return false
		}
	}
	return true
}

// vote is the member's most preferred protocol among candidates.
func (m *member) vote(candidates map[string]bool) string {
	for _, p := range m.protocols {
		if candidates[p.name] {
			return p.name
		}
	}
	return ""
}
