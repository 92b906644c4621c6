package fetch

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// fetchOp is one Fetch request in flight: it reads every partition in
// parallel (each partition actor fills its slot), and when the last slot
// is in it either answers or, when the data is short of min_bytes, parks
// until a partition reports progress or max_wait_ms passes, then reads
// again. Nothing blocks and nothing polls:
//
//	read round ──all slots in──▶ enough, error, final or no wait? ──▶ answer
//	    ▲                               │ no
//	    │                               ▼
//	    ├──── progress ≥ min_bytes ── parked (waiters on the partitions)
//	    └──── max wait timer (final round) ──┘
//
// A round is numbered; waiters left by an older round are stale and
// partitions drop them.
//
// When the parked round found no data at all (always so with min_bytes
// 1, what clients send by default), a wake-up re-reads only the
// partitions that reported progress (a partial round): the others answer
// with what their last read found, no data and the high watermark then,
// which has not moved since (it would have woken them). With six
// partitions and one appended to, that is one actor message per wake
// instead of six. A partial round that comes back short of min_bytes
// reads every partition at once instead of parking, so every partition
// leaves a fresh waiter. A parked round that found some data (short of a
// larger min_bytes) released it, so its wake-up reads every partition.
//
// A full round answers a partition whose fetch offset is its high
// watermark from the partition's published view, without a message
// (partition.View): at the tail, most partitions of a fetch are such.
// A slot that may wait parks its waiter in the view as it is answered, so
// the round can park without having asked any actor; the actor reports
// progress to the view's waiters when it raises the high watermark. A
// slot that may not wait (a final round, a fetch without max wait) is in
// a round that answers whatever it finds.
//
// The timer is armed once, at max_wait_ms from the request's arrival; if
// a round is still out when it fires (a partition actor died and its
// message went to dead letters), it re-arms for the gather timeout and
// then answers without the missing partitions (NOT_LEADER_OR_FOLLOWER),
// releasing late reads as they come in.
//
// Region references: a slot's read holds file references until released.
// A round that is not answered releases its reads before parking; the
// answer keeps the reads it sends and releases them in Response.Done
// (netloop calls it after the last byte, or when the connection is gone);
// reads trimmed off by max_bytes are released when the answer is built.
type fetchOp struct {
	slots    []partition.FetchSlot
	minBytes int64
	maxBytes int64
	canWait  bool
	guard    time.Duration // extra wait for a round still out at max wait

	// The request; answer builds the response from it (answerFetch).
	svc  *Service
	req  *wire.Request
	kreq *kmsg.FetchRequest
	fc   fetchContext

	// Test seams: nil in production, where slots go to the partition actors and the
	// answer is answerFetch.
	send   func(*partition.FetchSlot)
	answer func(o *fetchOp, abandoned bool)
	parked *parkedFetches // lists a waiting op for Drain; nil for none

	mu          sync.Mutex
	round       atomic.Int32 // written under mu
	answered    atomic.Bool  // written under mu
	outstanding int
	final       bool
	partial     bool  // the round re-reads only partitions that reported progress
	guarded     bool  // the timer runs the guard: its next firing abandons the round
	had         int64 // bytes the parked round read (released since)
	timer       *time.Timer
	// parkedAt is when the op last parked (zero while a round is out);
	// parkedFor sums its parks: the request's remote time (req.Remote).
	parkedAt  time.Time
	parkedFor time.Duration

	// Filled at answer time.
	outs    []fetchOutcome
	include []bool
}

// Stale reports whether a waiter of round r is no longer wanted. Safe
// from any goroutine.
func (o *fetchOp) Stale(r int32) bool { return o.answered.Load() || o.round.Load() != r }

// MinBytes is the fetch's min_bytes.
func (o *fetchOp) MinBytes() int64 { return o.minBytes }

// start arms the timer (max_wait_ms, or only the gather guard for a fetch
// that does not wait) and sends the first round.
func (o *fetchOp) start(maxWait time.Duration) {
	if o.canWait && o.parked != nil && !o.parked.add(o) {
		o.canWait = false // the broker is draining: answer at once
	}
	o.mu.Lock()
	wait := maxWait
	if !o.canWait {
		wait, o.guarded = o.guard, true
	}
	if wait > 0 {
		o.timer = time.AfterFunc(wait, o.expire)
	}
	send, answer := o.startRound(!o.canWait, false)
	o.mu.Unlock()
	o.after(send, answer, false)
}

// roundSends names the slots a round asks: every slot with a partition
// (those at their high watermark answered from the partition's view), or
// only those listed (a partial round). The list is made under mu, so
// after can send outside it while the round's answers already come in.
type roundSends struct {
	all  bool
	only []int
}

// startRound prepares a new read round; called with mu held. It returns
// the slots to send (after unlocking) or, when no slot has a partition to
// ask, reports that the op is to be answered at once. A partial round
// asks only the slots that reported progress; the others keep their last
// outcome.
func (o *fetchOp) startRound(final, partial bool) (send roundSends, answer bool) {
	if !o.parkedAt.IsZero() {
		o.parkedFor += time.Since(o.parkedAt)
		o.parkedAt = time.Time{}
	}
	r := o.round.Add(1)
	o.final, o.partial = final, partial
	o.outstanding = 0
	send.all = !partial
	for i := range o.slots {
		s := &o.slots[i]
		if s.Op == nil {
			s.Avail = 0
			continue // answered in the plan (unknown topic, ...)
		}
		if partial && s.Avail == 0 {
			s.Round, s.Done = r, true // nothing arrived: its last answer stands
			continue
		}
		s.Avail = 0
		s.Round, s.Wait, s.Done = r, o.canWait && !final && !partial, false
		s.Code, s.Res = 0, nil
		o.outstanding++
		if partial {
			send.only = append(send.only, i)
		}
	}
	if o.outstanding == 0 {
		o.answered.Store(true)
		return roundSends{}, true
	}
	return send, false
}

// after runs what a locked section decided, outside the lock.
func (o *fetchOp) after(send roundSends, answer, abandoned bool) {
	if answer {
		if o.timer != nil {
			o.timer.Stop()
		}
		if o.canWait && o.parked != nil {
			o.parked.remove(o)
		}
		if o.req != nil {
			o.req.Remote = o.parkedFor // no writes since answered was set under mu
		}
		if o.answer != nil {
			o.answer(o, abandoned)
		} else {
			answerFetch(o.svc, o.req, o.kreq, &o.fc, o, abandoned)
		}
		return
	}
	if send.all {
		// A slot answered here may end the round (and start the next
		// one) inside complete; that can only be the last slot of the
		// loop, since the round waits for every slot.
		for i := range o.slots {
			s := &o.slots[i]
			if s.Op == nil {
				continue
			}
			if hw, logStart, ok := s.View.EmptyAt(s.Offset, s.LeaderEpoch); ok &&
				(!s.Wait || s.View.Park(hw, partition.Waiter{Op: o, Slot: s.Slot, Round: s.Round})) {
				s.Code, s.HW, s.LSO, s.LogStart, s.Res = 0, hw, hw, logStart, nil
				o.Complete(s)
				continue
			}
			o.sendSlot(s)
		}
	}
	for _, i := range send.only {
		o.sendSlot(&o.slots[i])
	}
}

func (o *fetchOp) sendSlot(s *partition.FetchSlot) {
	if code := s.View.Gone(); code != kerr.None {
		// Its actor answers no more (topic deleted): a message would be
		// dropped, so answer the slot here.
		s.Code, s.HW, s.LSO, s.LogStart, s.Res = code, -1, -1, -1, nil
		o.Complete(s)
		return
	}
	if o.send != nil {
		o.send(s)
		return
	}
	o.svc.env.Send(s.PID, s)
}

// Complete is called by a partition actor when slot s is filled.
func (o *fetchOp) Complete(s *partition.FetchSlot) {
	o.mu.Lock()
	if o.answered.Load() || s.Round != o.round.Load() {
		// Abandoned after the gather timeout: nobody will send this read.
		o.mu.Unlock()
		s.Release()
		return
	}
	s.Done = true
	o.outstanding--
	if o.outstanding > 0 {
		o.mu.Unlock()
		return
	}
	send, answer := o.evaluate()
	o.mu.Unlock()
	o.after(send, answer, false)
}

// evaluate decides, with every slot of the round in, whether to answer,
// read again or park. Called with mu held.
func (o *fetchOp) evaluate() (send roundSends, answer bool) {
	var total int64
	failed := false
	for i := range o.slots {
		s := &o.slots[i]
		total += s.Bytes()
		if s.Code != 0 || s.Redirect {
			failed = true // answered at once, as Kafka answers errors and preferred read replicas
		}
	}
	if o.final || !o.canWait || failed || total >= o.minBytes {
		o.answered.Store(true)
		return roundSends{}, true
	}
	// Short: give the reads back and wait for more data.
	o.had = total
	for i := range o.slots {
		o.slots[i].Release()
	}
	if o.partial {
		// The partitions that moved were not enough on their own: read
		// them all, which leaves every partition a waiter of this round.
		return o.startRound(false, false)
	}
	if total+o.availSum() >= o.minBytes {
		return o.startRound(false, total == 0) // data arrived while the round was out
	}
	o.parkedAt = time.Now()
	return roundSends{}, false
}

// Progress is called by a partition actor (onHighWatermark) for a waiter
// of round r in slot: about bytes have arrived past the slot's read. It
// returns false when the waiter is no longer wanted.
func (o *fetchOp) Progress(r int32, slot int, bytes int64) bool {
	o.mu.Lock()
	if o.answered.Load() || o.round.Load() != r {
		o.mu.Unlock()
		return false
	}
	o.slots[slot].Avail = bytes
	if o.outstanding > 0 {
		o.mu.Unlock() // the round's evaluate will see avail
		return true
	}
	if o.had+o.availSum() < o.minBytes {
		o.mu.Unlock()
		return true
	}
	send, answer := o.startRound(false, o.had == 0)
	o.mu.Unlock()
	o.after(send, answer, false)
	return false
}

// expire is the max wait timer.
func (o *fetchOp) expire() {
	o.mu.Lock()
	switch {
	case o.answered.Load():
		o.mu.Unlock()
	case o.outstanding == 0: // parked: read once more and answer whatever it gives
		send, answer := o.startRound(true, false)
		o.mu.Unlock()
		o.after(send, answer, false)
	case !o.guarded: // a round is out: give it the gather timeout
		o.final, o.guarded = true, true
		if o.guard > 0 {
			o.timer.Reset(o.guard)
		}
		o.mu.Unlock()
	default: // still out after the guard: answer without the missing partitions
		o.answered.Store(true)
		o.mu.Unlock()
		o.after(roundSends{}, true, true)
	}
}

// Hurry answers the op now, with what it has, if it is still in round r
// (partition.Hurrier: a follower's fetch parked without a partition that
// just grew).
func (o *fetchOp) Hurry(r int32) {
	if o.round.Load() == r {
		o.hurry()
	}
}

// hurry answers the op as soon as its current round is in (Drain).
func (o *fetchOp) hurry() {
	o.mu.Lock()
	switch {
	case o.answered.Load():
		o.mu.Unlock()
	case o.outstanding == 0:
		send, answer := o.startRound(true, false)
		o.mu.Unlock()
		o.after(send, answer, false)
	default:
		o.final = true // the round's end answers
		o.mu.Unlock()
	}
}

// parkedFetches lists the ops that may wait, so that Drain (at shutdown)
// can answer them at once instead of at their max wait.
type parkedFetches struct {
	mu       sync.Mutex
	ops      map[*fetchOp]struct{}
	draining bool
}

// add lists o; false when the broker is draining (o must not wait).
func (p *parkedFetches) add(o *fetchOp) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.draining {
		return false
	}
	if p.ops == nil {
		p.ops = make(map[*fetchOp]struct{})
	}
	p.ops[o] = struct{}{}
	return true
}

func (p *parkedFetches) remove(o *fetchOp) {
	p.mu.Lock()
	delete(p.ops, o)
	p.mu.Unlock()
}

// drain stops new fetches from waiting and hurries those that wait.
func (p *parkedFetches) drain() {
	p.mu.Lock()
	p.draining = true
	ops := make([]*fetchOp, 0, len(p.ops))
	for o := range p.ops {
		ops = append(ops, o)
	}
	p.mu.Unlock()
	for _, o := range ops {
		o.hurry()
	}
}

// availSum is the bytes estimated to have arrived since the round's reads.
func (o *fetchOp) availSum() int64 {
	var n int64
	for i := range o.slots {
		n += o.slots[i].Avail
	}
	return n
}

// outcomes fills o.outs from the slots once the op is answered, applying
// max_bytes across partitions in fetch order: the first partition with
// data keeps its read whole (its first batch may exceed every limit, so a
// consumer can always progress), each later one only if it fits in what
// is left; a read that does not fit is released and the partition is
// answered without records (its client asks again). Partitions were read
// in parallel, each capped at min(partition_max_bytes, max_bytes), so this
// trim is the only place the global budget applies. A slot missing from
// an abandoned round is NOT_LEADER_OR_FOLLOWER.
func (o *fetchOp) outcomes(abandoned bool) {
	o.outs = make([]fetchOutcome, len(o.slots))
	left := o.maxBytes
	first := true
	for i := range o.slots {
		s := &o.slots[i]
		out := &o.outs[i]
		if abandoned && s.Op != nil && !s.Done {
			*out = fetchOutcome{code: kerr.NotLeaderOrFollower, hw: -1, lso: -1, logStart: -1}
			continue
		}
		*out = fetchOutcome{code: s.Code, hw: s.HW, lso: s.LSO, logStart: s.LogStart}
		if s.Redirect && s.Code == 0 {
			out.redirect, out.readReplica = true, s.ReadReplica
		}
		n := s.Bytes()
		if n == 0 {
			continue
		}
		if !first && n > left {
			s.Release()
			continue
		}
		first = false
		left -= n
		out.bytes = n
	}
}

// releaseAll gives back every read still held (Response.Done). In an
// abandoned op it touches only slots that completed.
func (o *fetchOp) releaseAll() {
	for i := range o.slots {
		if s := &o.slots[i]; s.Op == nil || s.Done {
			s.Release()
		}
	}
}

// errorOutcome marks a slot answered in the plan, never sent.
func errorOutcome(s *partition.FetchSlot, code kerr.Code) {
	s.Op, s.Code, s.HW, s.LSO, s.LogStart = nil, code, -1, -1, -1
}
