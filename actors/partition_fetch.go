package actors

import (
	"errors"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire/kerr"
)

// partitionFetch is one partition's part of a fetch: the message the
// fetch sends to the partition actor, and the slot the actor writes its
// answer into before calling op.complete. The fetch owns it between
// rounds; the actor only between receiving it and completing it.
type partitionFetch struct {
	op    *fetchOp
	pid   *actor.PID     // the partition actor
	view  *partitionView // what it publishes (nil: always ask the actor)
	slot  int
	round int32

	// Inputs.
	offset      int64
	maxBytes    int64 // min(partition_max_bytes, max_bytes)
	leaderEpoch int32 // the client's current leader epoch; -1 skips the check
	wait        bool  // register a waiter if this read is short of min_bytes

	// Outputs.
	code              kerr.Code
	hw, lso, logStart int64
	res               *segment.ReadResult // nil when empty or on error
	done              bool                // set by op.complete under op.mu

	avail int64 // under op.mu: bytes estimated to have arrived past this round's read
}

// bytes is the record data this read returned.
func (f *partitionFetch) bytes() int64 {
	if f.res == nil {
		return 0
	}
	return f.res.Bytes
}

// release gives back the read's file references.
func (f *partitionFetch) release() {
	if f.res != nil {
		f.res.Release()
		f.res = nil
	}
}

// serveFetch reads the partition for f and answers it; a short read of a
// fetch that may wait leaves a waiter in the partition's view, woken by
// onHighWatermark. The read
// itself is index lookups and header preads: record data stays in the
// file and leaves by sendfile from netloop's writer.
func (p *partitionActor) serveFetch(f *partitionFetch) {
	var err error
	if p.plog == nil {
		f.code, f.hw, f.lso, f.logStart, f.res = kerr.NotLeaderOrFollower, -1, -1, -1, nil
	} else {
		err = readPartition(p.plog, p.highWatermark(), p.spec.LeaderEpoch, f)
	}
	if err != nil {
		p.log.Error("fetch read failed", append(p.attrs(), "offset", f.offset, "err", err)...)
	}
	if f.wait && f.code == 0 && f.bytes() < f.op.minBytes {
		next := f.offset
		if f.res != nil {
			next = f.res.NextOffset
		}
		if p.view == nil {
			p.view = newPartitionView() // an actor built by hand (tests)
		}
		p.view.addWaiter(fetchWaiter{op: f.op, slot: f.slot, round: f.round, offset: next, sizeAt: p.plog.Size()})
	}
	f.op.complete(f)
}

// onHighWatermark publishes the raised high watermark in the view and
// tells the fetches waiting on this partition how much arrived (the
// produce path calls it whenever p.hw advances). Progress is reported
// after the view's lock is released: it may start a round that locks
// other views. Fetches still short of their min_bytes stay parked.
func (p *partitionActor) onHighWatermark() {
	if p.view == nil {
		return
	}
	due := p.view.setHW(p.highWatermark())
	if len(due) == 0 || p.plog == nil {
		return
	}
	size := p.plog.Size()
	var again []fetchWaiter
	for _, w := range due {
		if w.op.progress(w.round, w.slot, max(size-w.sizeAt, 1)) {
			again = append(again, w)
		}
	}
	p.view.keepWaiting(again)
}

// readPartition fills f's outputs from l: the batches from f.offset up to
// the high watermark hw (the last stable offset too: there are no
// transactions yet), within f.maxBytes but always the first batch. The
// returned error is an unexpected storage error worth a log line (the
// client sees a code); expected outcomes (out of range, fenced) are only
// codes.
func readPartition(l *segment.Log, hw int64, leaderEpoch int32, f *partitionFetch) error {
	f.res = nil
	f.code, f.hw, f.lso, f.logStart = 0, -1, -1, -1
	switch {
	case f.leaderEpoch < 0 || f.leaderEpoch == leaderEpoch:
	case f.leaderEpoch < leaderEpoch:
		f.code = kerr.FencedLeaderEpoch
		return nil
	default:
		f.code = kerr.UnknownLeaderEpoch
		return nil
	}
	logStart := l.LogStartOffset()
	if f.offset < logStart || f.offset > l.LogEndOffset() {
		f.code = kerr.OffsetOutOfRange
		return nil
	}
	f.hw, f.lso, f.logStart = hw, hw, logStart
	if f.offset >= hw {
		return nil // nothing committed past the fetch offset yet
	}
	res, err := l.Read(segment.ReadRequest{Offset: f.offset, MaxBytes: f.maxBytes, MaxOffset: hw, MinOneBatch: true})
	switch {
	case err == nil:
		if res.Bytes > 0 {
			f.res = res
		} else {
			res.Release()
		}
		return nil
	case errors.Is(err, segment.ErrOffsetOutOfRange):
		// Retention moved the start between the check and the read.
		f.code, f.hw, f.lso, f.logStart = kerr.OffsetOutOfRange, -1, -1, -1
		return nil
	case errors.Is(err, segment.ErrClosed):
		f.code, f.hw, f.lso, f.logStart = kerr.NotLeaderOrFollower, -1, -1, -1
		return nil
	default:
		f.code, f.hw, f.lso, f.logStart = kerr.KafkaStorageError, -1, -1, -1
		return err
	}
}

// fetchWaiter is a fetch parked on a partition until the high watermark
// passes offset. sizeAt, the log's size when it parked, turns later sizes
// into an estimate of the bytes that arrived (an overestimate at worst,
// which only makes the fetch read again early).
type fetchWaiter struct {
	op     *fetchOp
	slot   int
	round  int32
	offset int64
	sizeAt int64
}

// fetchWaiters is a partition's parked fetches (kept by its view, under
// the view's lock). Entries of fetches that moved on (answered, or
// reading again) are dropped lazily, on the next add or high watermark,
// so the list stays as long as the number of fetches really waiting plus
// those that left since.
type fetchWaiters []fetchWaiter

func (ws *fetchWaiters) add(w fetchWaiter) {
	ws.prune()
	*ws = append(*ws, w)
}

func (ws *fetchWaiters) prune() {
	kept := (*ws)[:0]
	for _, w := range *ws {
		if !w.op.stale(w.round) {
			kept = append(kept, w)
		}
	}
	clear((*ws)[len(kept):])
	*ws = kept
}
