package sharegroup

import (
	"time"

	"github.com/samsa-io/samsa/actors/partition"
)

// A ShareFetch that acquired nothing waits, up to its max wait, for
// something to acquire. It wakes when:
//   - records are appended to a session partition: it parks on the
//     partition's view as an ordinary Fetch does (partition.View.Park),
//     and the partition actor reports the raised high watermark;
//   - an acknowledgement or a member leaving changes a share partition of
//     its group (a release makes records available, an accept moves the
//     start and so the in-flight bound): wakeGroup;
//   - the earliest acquisition lock of its partitions expires: a timer.
// Each wake-up starts a new round; the round number makes the waiters
// and timers of earlier rounds stale.

// shareWaiter is a parked ShareFetch as the partition sees it (a
// partition.FetchOp).
type shareWaiter struct{ op *fetchOp }

// Progress (on the partition actor's goroutine) sends the fetch back to
// the coordinator to read again; the waiter is then done.
func (w shareWaiter) Progress(round int32, _ int, _ int64) bool {
	w.op.wake(round)
	return false
}

// Stale is safe from any goroutine: the fetch moved on from round.
func (w shareWaiter) Stale(round int32) bool { return w.op.round.Load() != round }

// Complete is never called: a share fetch's reads go through
// shards.ReadChunk, not fetch slots.
func (shareWaiter) Complete(*partition.FetchSlot) {}

func (shareWaiter) MinBytes() int64 { return 1 }

// wake asks the coordinator to run a new round of op, if op is still in
// round.
func (op *fetchOp) wake(round int32) {
	if op.round.Load() == round {
		op.root.Send(op.self, &retryFetch{op: op, round: round})
	}
}

// park leaves op waiting after a round that acquired nothing: on the
// views of its partitions at the high watermark its round saw, in its
// group's list, and on a timer at its max wait or the earliest lock
// expiry of its partitions.
func (a *coordinatorActor) park(op *fetchOp, now time.Time) {
	round, wakeAt := op.round.Load(), op.deadline
	for i, tp := range op.parts {
		rd := op.reads[i]
		if rd.view == nil {
			continue
		}
		if !rd.view.Park(rd.hw, partition.Waiter{Op: shareWaiter{op}, Round: round}) {
			// The high watermark moved since the round looked.
			op.wake(round)
			return
		}
		if p := a.parts[partKey{op.group, tp}]; p != nil {
			if at, ok := p.NextLockExpiry(); ok && at.Before(wakeAt) {
				wakeAt = at
			}
		}
	}
	if a.parked == nil {
		a.parked = map[string]map[*fetchOp]bool{}
	}
	if a.parked[op.group] == nil {
		a.parked[op.group] = map[*fetchOp]bool{}
	}
	a.parked[op.group][op] = true
	time.AfterFunc(max(wakeAt.Sub(now), time.Millisecond), func() { op.wake(round) })
}

// unpark takes op out of its group's waiting fetches and makes its
// parked waiters and timer stale.
func (a *coordinatorActor) unpark(op *fetchOp) {
	op.round.Add(1)
	if g := a.parked[op.group]; g != nil {
		delete(g, op)
		if len(g) == 0 {
			delete(a.parked, op.group)
		}
	}
}

// wakeGroup wakes the fetches waiting on group: its share partitions
// changed, and records may be available again.
func (a *coordinatorActor) wakeGroup(group string) {
	for op := range a.parked[group] {
		op.wake(op.round.Load())
	}
}
