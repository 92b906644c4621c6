package partition

import (
	"errors"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire/kerr"
)

// FetchOp is the fetch a FetchSlot belongs to (the fetch package's
// operation). The partition calls it from its own goroutine.
type FetchOp interface {
	// Complete is called once the slot's outputs are filled.
	Complete(s *FetchSlot)
	// Progress reports that about bytes arrived past the read of slot in
	// round; false means the waiter is no longer wanted.
	Progress(round int32, slot int, bytes int64) bool
	// Stale reports whether waiters of round are no longer wanted. Safe
	// from any goroutine.
	Stale(round int32) bool
	// MinBytes is the fetch's min_bytes.
	MinBytes() int64
}

// FetchSlot is one partition's part of a fetch: the message the fetch
// sends to the partition actor, and the slot the actor writes its answer
// into before calling Op.Complete. The fetch owns it between rounds; the
// actor only between receiving it and completing it.
type FetchSlot struct {
	Op    FetchOp
	PID   *actor.PID // the partition actor
	View  *View      // what it publishes (nil: always ask the actor)
	Slot  int
	Round int32

	// Inputs.
	Offset      int64
	MaxBytes    int64 // min(partition_max_bytes, max_bytes)
	LeaderEpoch int32 // the client's current leader epoch; -1 skips the check
	Wait        bool  // register a waiter if this read is short of min_bytes
	// Follower is set when a follower fetches (nil: a consumer).
	Follower *FollowerFetch
	// ClientMetadata is set for a consumer's Fetch v11+ (KIP-392): it
	// may be served by a follower, up to the follower's high watermark,
	// and ClientRack (its client.rack, "" for none) may get it pointed at
	// a replica in its rack.
	ClientMetadata bool
	ClientRack     string
	// ReadCommitted: isolation level read_committed, so the read stops at
	// the last stable offset and Aborted lists the aborted transactions
	// it overlaps.
	ReadCommitted bool

	// Outputs.
	Code              kerr.Code
	HW, LSO, LogStart int64
	Res               *segment.ReadResult  // nil when empty or on error
	Aborted           []segment.AbortedTxn // read_committed: aborted transactions the read overlaps
	Diverging         *EpochEnd            // a follower's log diverged: truncate to here
	// DurableHonoured: the follower's durable end was counted as its
	// position (the answer says so, wire.FetchDurableHonouredTag).
	DurableHonoured bool
	// Redirect is set when the leader points the consumer at replica
	// ReadReplica instead of reading (KIP-392's PreferredReadReplica):
	// the answer has no records and is not worth waiting for.
	Redirect    bool
	ReadReplica int32
	Done        bool // set by the fetch when complete, under its lock

	Avail int64 // the fetch's, under its lock: bytes estimated to have arrived past this round's read
}

// Bytes is the record data this read returned.
func (f *FetchSlot) Bytes() int64 {
	if f.Res == nil {
		return 0
	}
	return f.Res.Bytes
}

// Release gives back the read's file references.
func (f *FetchSlot) Release() {
	if f.Res != nil {
		f.Res.Release()
		f.Res = nil
	}
}

// serveFetch reads the partition for f and answers it; a short read of a
// fetch that may wait leaves a waiter in the partition's view, woken by
// onHighWatermark. The read
// itself is index lookups and header preads: record data stays in the
// file and leaves by sendfile from netloop's writer.
func (p *partitionActor) serveFetch(f *FetchSlot) {
	if f.Follower != nil {
		p.serveReplicaFetch(f)
		return
	}
	var err error
	f.Redirect, f.ReadReplica, f.Aborted = false, -1, nil
	switch {
	case p.plog == nil || p.spec.Follower && !p.servesConsumers(f):
		f.Code, f.HW, f.LSO, f.LogStart, f.Res = p.servable(-1), -1, -1, -1, nil
	case p.redirect(f):
	default:
		// A leader's or, for a v11+ consumer, a follower's (KIP-392):
		// each reads up to its own high watermark, a follower's being
		// what its leader last told it.
		err = readPartition(p.plog, p.highWatermark(), p.lastStableOffset(), p.spec.LeaderEpoch, f)
		p.countFetched(f.Bytes())
	}
	if err != nil {
		p.log.Error("fetch read failed", append(p.attrs(), "offset", f.Offset, "err", err)...)
	}
	if f.Wait && f.Code == 0 && !f.Redirect && f.Bytes() < f.Op.MinBytes() {
		next := f.Offset
		if f.Res != nil {
			next = f.Res.NextOffset
		}
		if p.view == nil {
			p.view = NewView() // an actor built by hand (tests)
		}
		p.view.addWaiter(Waiter{Op: f.Op, Slot: f.Slot, Round: f.Round, offset: next, sizeAt: p.plog.Size()})
	}
	f.Op.Complete(f)
}

// servesConsumers reports whether this follower serves consumer fetch f:
// Kafka's followers serve every consumer fetch that carries client
// metadata (v11+, whether or not a selector sent it there), not older
// ones, which only ever go to the leader.
func (p *partitionActor) servesConsumers(f *FetchSlot) bool {
	return f.ClientMetadata && p.repl != nil && p.core != nil
}

// redirect answers a consumer's fetch with a preferred read replica
// instead of records when the leader's selector picks another replica
// (KIP-392), as Kafka does: code 0, the leader's offsets, no records.
func (p *partitionActor) redirect(f *FetchSlot) bool {
	if p.repl == nil || !p.repl.RackAware || p.repl.RackOf == nil || !f.ClientMetadata || f.ClientRack == "" ||
		p.core == nil || !p.core.Leading() || p.spec.Follower {
		return false
	}
	if code := CheckLeaderEpoch(f.LeaderEpoch, p.spec.LeaderEpoch); code != 0 {
		return false // the read answers the epoch error
	}
	id := p.core.PreferredReadReplica(f.ClientRack, f.Offset, p.nowMs(), p.repl.RackOf)
	if id < 0 {
		return false
	}
	hw := p.highWatermark()
	f.Code, f.HW, f.LSO, f.LogStart, f.Res = 0, hw, p.lastStableOffset(), p.plog.LogStartOffset(), nil
	f.Redirect, f.ReadReplica = true, id
	return true
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
	var again []Waiter
	for _, w := range due {
		if w.Op.Progress(w.Round, w.Slot, max(size-w.sizeAt, 1)) {
			again = append(again, w)
		}
	}
	p.view.keepWaiting(again)
}

// readPartition fills f's outputs from l: the batches from f.Offset up to
// the high watermark hw (read_committed: the last stable offset lso, with
// the aborted transactions the read overlaps), within f.MaxBytes but
// always the first batch. The returned error is an unexpected storage
// error worth a log line (the client sees a code); expected outcomes (out
// of range, fenced) are only codes.
func readPartition(l *segment.Log, hw, lso int64, leaderEpoch int32, f *FetchSlot) error {
	f.Res, f.Aborted = nil, nil
	f.Code, f.HW, f.LSO, f.LogStart = 0, -1, -1, -1
	switch {
	case f.LeaderEpoch < 0 || f.LeaderEpoch == leaderEpoch:
	case f.LeaderEpoch < leaderEpoch:
		f.Code = kerr.FencedLeaderEpoch
		return nil
	default:
		f.Code = kerr.UnknownLeaderEpoch
		return nil
	}
	logStart := l.LogStartOffset()
	if f.Offset < logStart || f.Offset > l.LogEndOffset() {
		f.Code = kerr.OffsetOutOfRange
		return nil
	}
	lso = min(lso, hw)
	f.HW, f.LSO, f.LogStart = hw, lso, logStart
	upTo := hw
	if f.ReadCommitted {
		upTo = lso
	}
	if f.Offset >= upTo {
		return nil // nothing committed (or stable) past the fetch offset yet
	}
	res, err := l.Read(segment.ReadRequest{Offset: f.Offset, MaxBytes: f.MaxBytes, MaxOffset: upTo, MinOneBatch: true})
	switch {
	case err == nil:
		if res.Bytes == 0 {
			res.Release()
			return nil
		}
		f.Res = res
		if f.ReadCommitted {
			aborted, err := l.AbortedTxns(f.Offset, res.NextOffset)
			if err != nil {
				res.Release()
				f.Res, f.Code, f.HW, f.LSO, f.LogStart = nil, kerr.KafkaStorageError, -1, -1, -1
				return err
			}
			f.Aborted = aborted
		}
		return nil
	case errors.Is(err, segment.ErrOffsetOutOfRange):
		// Retention moved the start between the check and the read.
		f.Code, f.HW, f.LSO, f.LogStart = kerr.OffsetOutOfRange, -1, -1, -1
		return nil
	case errors.Is(err, segment.ErrClosed):
		f.Code, f.HW, f.LSO, f.LogStart = kerr.NotLeaderOrFollower, -1, -1, -1
		return nil
	default:
		f.Code, f.HW, f.LSO, f.LogStart = kerr.KafkaStorageError, -1, -1, -1
		return err
	}
}

// Waiter is a fetch parked on a partition until the high watermark
// passes offset. sizeAt, the log's size when it parked, turns later sizes
// into an estimate of the bytes that arrived (an overestimate at worst,
// which only makes the fetch read again early).
type Waiter struct {
	Op     FetchOp
	Slot   int
	Round  int32
	offset int64
	sizeAt int64
}

// waiters is a partition's parked fetches (kept by its view, under the
// view's lock). Entries of fetches that moved on (answered, or reading
// again) are dropped lazily, on the next add or high watermark, so the
// list stays as long as the number of fetches really waiting plus those
// that left since.
type waiters []Waiter

func (ws *waiters) add(w Waiter) {
	ws.prune()
	*ws = append(*ws, w)
}

func (ws *waiters) prune() {
	kept := (*ws)[:0]
	for _, w := range *ws {
		if !w.Op.Stale(w.Round) {
			kept = append(kept, w)
		}
	}
	clear((*ws)[len(kept):])
	*ws = kept
}
