package partition

import (
	"sync"
	"sync/atomic"

	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire/kerr"
)

// View is what a partition actor publishes for the fetch path to
// read without sending it a message: its high watermark, its leader epoch
// and its open log (for the log start offset, which segment publishes).
//
// Why: a consumer that keeps up asks every partition of its fetch, and
// most have nothing past its offset. Counted end to end at 20,000
// records/s over 6 partitions, 87% of the partition reads found nothing,
// each an actor message and often a goroutine wake-up. A read at exactly
// the high watermark needs no actor: it answers no records, the high
// watermark and the log start offset. So the fetch answers such a
// partition from the view (the fetch package) and asks the actor only for the
// others. The view also keeps the partition's parked fetches: a fetch
// that may wait parks there as it is answered (park), without a message,
// and a short read by the actor leaves its waiter there too (addWaiter).
// The actor takes out the waiters it passes whenever it raises the high
// watermark (setHW) and reports progress to them after letting go of the
// view's lock (onHighWatermark), since progress may start a round that
// locks other views.
//
// The view is shared by the actor's incarnations, like its spec: a
// restart turns it off (close) and on again (startProduce). hw, epoch and
// log are written by the actor's goroutine only; mu orders a change of hw
// against a fetch parking at the old one, so no wake-up is lost.
type View struct {
	hw    atomic.Int64 // the high watermark; -1 while the log is not serving
	epoch atomic.Int32 // the partition's leader epoch
	log   atomic.Pointer[segment.Log]
	gone  atomic.Int32 // a kerr.Code once the partition answers no more (Gone)
	stats Stats        // for the broker's metrics (stats.go)

	mu      sync.Mutex
	waiters waiters // the partition's parked fetches
}

func NewView() *View {
	v := &View{}
	v.hw.Store(-1)
	return v
}

// EmptyAt reports whether a read of the partition from offset, by a
// client at leaderEpoch (-1: unchecked), would find nothing past the high
// watermark and no error, and if so the high watermark and log start
// offset it would answer. It is what readPartition answers for such a
// read, as of a moment ago.
func (v *View) EmptyAt(offset int64, leaderEpoch int32) (hw, logStart int64, ok bool) {
	if v == nil {
		return 0, 0, false
	}
	l := v.log.Load()
	hw = v.hw.Load()
	if l == nil || hw < 0 || offset != hw {
		return 0, 0, false
	}
	if leaderEpoch >= 0 && leaderEpoch != v.epoch.Load() {
		return 0, 0, false // fenced or unknown: the actor says which
	}
	logStart = l.LogStartOffset()
	if offset < logStart {
		return 0, 0, false // out of range: the actor answers it
	}
	return hw, logStart, true
}

// Bounds reports the high watermark and log start offset as of a moment
// ago; ok is false while the log is not serving. Share partitions
// (actors/sharegroup) read it to start at share.auto.offset.reset's
// offset and to know whether there is anything to acquire.
func (v *View) Bounds() (hw, logStart int64, ok bool) {
	if v == nil {
		return 0, 0, false
	}
	l := v.log.Load()
	hw = v.hw.Load()
	if l == nil || hw < 0 {
		return 0, 0, false
	}
	return hw, l.LogStartOffset(), true
}

// Park leaves w (a fetch's slot, read empty at offset) among the view's
// waiters, if the high watermark is still offset; false when it moved
// (the caller then asks the actor, which reads what arrived).
func (v *View) Park(offset int64, w Waiter) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	l := v.log.Load()
	if l == nil || v.hw.Load() != offset {
		return false
	}
	w.offset, w.sizeAt = offset, l.Size()
	v.waiters.add(w)
	return true
}

// addWaiter parks w, left by a short read on the actor's goroutine (which
// alone moves hw, so no check is needed).
func (v *View) addWaiter(w Waiter) {
	v.mu.Lock()
	v.waiters.add(w)
	v.mu.Unlock()
}

// keepWaiting parks again the waiters setHW took out whose fetches are
// still short of their min_bytes.
func (v *View) keepWaiting(ws []Waiter) {
	if len(ws) == 0 {
		return
	}
	v.mu.Lock()
	v.waiters = append(v.waiters, ws...)
	v.mu.Unlock()
}

// setHW publishes a new high watermark and takes out the waiters it
// passed, for the actor to report progress to once the lock is released.
func (v *View) setHW(hw int64) []Waiter {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.hw.Store(hw)
	if len(v.waiters) == 0 {
		return nil
	}
	var due []Waiter
	kept := v.waiters[:0]
	for _, w := range v.waiters {
		switch {
		case w.Op.Stale(w.Round):
		case hw > w.offset:
			due = append(due, w)
		default:
			kept = append(kept, w)
		}
	}
	clear(v.waiters[len(kept):])
	v.waiters = kept
	return due
}

// publishView turns the partition's view on with its current state; the
// produce side calls it once the log is open and the high watermark set.
func (p *partitionActor) publishView() {
	if p.view == nil || p.plog == nil || p.spec.Follower {
		return // a follower's reads go to the actor, which refuses them
	}
	p.view.epoch.Store(p.spec.LeaderEpoch)
	p.view.log.Store(p.plog)
	p.view.setHW(p.highWatermark()) // no waiters: a hidden view takes none
}

// hideView turns the view off before the log closes or goes away, and
// wakes its parked fetches so they read again now instead of at their max
// wait: a deleted partition's read is then answered from the view (Gone),
// a restarting one's waits in the mailbox for the new incarnation. Woken
// after the lock is released, as progress may start a round.
func (p *partitionActor) hideView() {
	if p.view == nil {
		return
	}
	p.view.mu.Lock()
	p.view.hw.Store(-1)
	p.view.log.Store(nil)
	woken := p.view.waiters
	p.view.waiters = nil
	p.view.mu.Unlock()
	for _, w := range woken {
		w.Op.Progress(w.Round, w.Slot, 1)
	}
}

// Gone is the code every request for the partition gets once its actor
// will answer no more (its topic deleted: UNKNOWN_TOPIC_OR_PARTITION; it
// stopped for good: NOT_LEADER_OR_FOLLOWER), or NONE while it serves. A
// sender that keeps a partition's actor across time (a fetch's later
// rounds) checks it before sending, since a message that reaches an
// actor after it stopped is dropped without a word.
func (v *View) Gone() kerr.Code {
	if v == nil {
		return kerr.None
	}
	return kerr.Code(v.gone.Load())
}

// markGone records that the partition answers no more, with code.
func (v *View) markGone(code kerr.Code) {
	if v != nil {
		v.gone.Store(int32(code))
	}
}

// Parked is how many fetches wait on the partition (entries of fetches
// that moved on included until pruned).
func (v *View) Parked() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.waiters)
}

// Waiting is how many fetches still wait on the partition: Parked less
// the entries of fetches that moved on, which it drops.
func (v *View) Waiting() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.waiters.prune()
	return len(v.waiters)
}
