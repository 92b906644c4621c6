package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Ticket identifies one client request to the shell. The core never looks
// inside it: it hands it back in the Reply that answers the request, maybe
// much later (a parked JoinGroup or SyncGroup). The shell may use the
// *wire.Request itself, a sequence number, anything.
type Ticket any

// Reply is a response to send for the request identified by To. Response
// has its version set to the request's, ready to encode.
type Reply struct {
	To       Ticket
	Response kmsg.Response
}

// TimerKind names what a timer guards.
type TimerKind uint8

const (
	// TimerSession expires a member that stopped heartbeating (its
	// session timeout), or a new member whose first JoinGroup has waited
	// for NewMemberJoinTimeout.
	TimerSession TimerKind = iota + 1
	// TimerPendingMember expires a KIP-394 pending member id handed out
	// with MEMBER_ID_REQUIRED and never used to rejoin.
	TimerPendingMember
	// TimerJoin ends the join phase of a rebalance: the initial rebalance
	// delay of an empty group, or the rebalance timeout.
	TimerJoin
	// TimerSync removes members that got their JoinGroup answer but sent
	// no SyncGroup within the rebalance timeout.
	TimerSync
	// TimerConsumerSession fences a KIP-848 member that stopped
	// heartbeating (group.consumer.session.timeout.ms).
	TimerConsumerSession
	// TimerConsumerRevocation fences a KIP-848 member that did not give
	// up its partitions pending revocation within its rebalance timeout.
	TimerConsumerRevocation
)

func (k TimerKind) String() string {
	switch k {
	case TimerSession:
		return "session"
	case TimerPendingMember:
		return "pending-member"
	case TimerJoin:
		return "join"
	case TimerSync:
		return "sync"
	case TimerConsumerSession:
		return "consumer-session"
	case TimerConsumerRevocation:
		return "consumer-revocation"
	}
	return "unknown"
}

// TimerKey identifies a timer. At most one timer per key is armed: arming
// a key again replaces its deadline. Member is empty for group-wide timers.
type TimerKey struct {
	Group  string
	Kind   TimerKind
	Member string
}

// Timer asks the shell to call OnTimer(Key, now) once now >= At.
type Timer struct {
	Key TimerKey
	At  time.Time
}

// Append asks the shell to append Records, in order, to the group's
// __consumer_offsets partition (PartitionFor(Group, ...)) and, once the
// append is durable or has failed, to call OnAppended(Token, code, now)
// with the partition's error code (kerr.None on success). Replies that
// depend on the records (the SyncGroup answers of a completed rebalance,
// OffsetCommit and delete answers) come out of OnAppended, so no client
// is told something the log does not hold yet.
type Append struct {
	Group   string
	Token   uint64
	Records []Record
	// Txn, when set, makes the records a transactional batch of this
	// producer (TxnOffsetCommit).
	Txn *TxnProducer
}

// Effects is everything one call into the core asks the shell to do.
// Replies can be sent at once, in order. Appends must be performed in order
// and each completed with OnAppended. Timers are armed (replacing any timer
// with the same key) and Cancel'ed keys disarmed; a stale or early timer is
// harmless (the core checks its own deadline), so cancelling is only an
// optimisation.
type Effects struct {
	Replies []Reply
	Appends []Append
	Timers  []Timer
	Cancel  []TimerKey
}

// Empty reports whether there is nothing to do.
func (e *Effects) Empty() bool {
	return len(e.Replies) == 0 && len(e.Appends) == 0 && len(e.Timers) == 0 && len(e.Cancel) == 0
}

// merge appends o's effects to e.
func (e *Effects) merge(o Effects) {
	e.Replies = append(e.Replies, o.Replies...)
	e.Appends = append(e.Appends, o.Appends...)
	e.Timers = append(e.Timers, o.Timers...)
	e.Cancel = append(e.Cancel, o.Cancel...)
}
