package sharegroup

import (
	"github.com/samsa-io/samsa/wire/kerr"
)

// TopicPartition names a partition by topic id, as the share APIs do.
type TopicPartition struct {
	Topic     [16]byte
	Partition int32
}

// Session is one member's share session (KIP-932's counterpart of
// KIP-227's fetch sessions): the partitions it fetches and the epoch the
// next ShareFetch must carry. Epoch 0 opens (or reopens) it, -1 closes it.
type Session struct {
	Next       int32
	Partitions []TopicPartition // in the order they were added
}

// SessionFinal is the epoch that closes a share session.
const SessionFinal = -1

// Sessions are a broker's share sessions, by group and member.
type Sessions map[[2]string]*Session

// Use applies a ShareFetch's session epoch and partition changes: it
// returns the session (nil after the final epoch) or the error code.
// ShareAcknowledge passes add and forget empty.
func (s Sessions) Use(group, member string, epoch int32, add, forget []TopicPartition, fetch bool) (*Session, kerr.Code) {
	key := [2]string{group, member}
	cur := s[key]
	switch {
	case epoch == 0:
		if !fetch {
			return nil, kerr.InvalidShareSessionEpoch
		}
		cur = &Session{Next: 1}
		s[key] = cur
	case epoch == SessionFinal:
		if cur == nil {
			return nil, kerr.ShareSessionNotFound
		}
		delete(s, key)
		return nil, kerr.None
	case cur == nil:
		return nil, kerr.ShareSessionNotFound
	case epoch != cur.Next:
		return nil, kerr.InvalidShareSessionEpoch
	default:
		cur.Next++
		if cur.Next == SessionFinal || cur.Next <= 0 {
			cur.Next = 1
		}
	}
	for _, f := range forget {
		for i, tp := range cur.Partitions {
			if tp == f {
				cur.Partitions = append(cur.Partitions[:i], cur.Partitions[i+1:]...)
				break
			}
		}
	}
	for _, a := range add {
		found := false
		for _, tp := range cur.Partitions {
			found = found || tp == a
		}
		if !found {
			cur.Partitions = append(cur.Partitions, a)
		}
	}
	return cur, kerr.None
}

// Drop forgets a member's session (it left the group or expired).
func (s Sessions) Drop(group, member string) { delete(s, [2]string{group, member}) }
