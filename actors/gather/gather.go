package gather

import (
	"sync/atomic"
	"time"
)

// Gather collects n answers that arrive on different actors' goroutines
// and calls done once with all of them, without blocking anyone: each
// answer lands in its own slot, an atomic counter finds the last one. If
// the answers are not all in by the deadline (an actor died, its message
// went to dead letters), done runs with what arrived and timedOut set, so
// the client is answered instead of left waiting; results is then nil.
type Gather struct {
	results   []int64
	remaining atomic.Int64
	fired     atomic.Bool
	timer     *time.Timer
	done      func(results []int64, timedOut bool)
}

// New starts a gather of n answers; n == 0 calls done at once.
func New(n int, deadline time.Duration, done func(results []int64, timedOut bool)) *Gather {
	g := &Gather{results: make([]int64, n), done: done}
	g.remaining.Store(int64(n))
	if n == 0 {
		g.finish(false)
		return g
	}
	if deadline > 0 {
		g.timer = time.AfterFunc(deadline, func() { g.finish(true) })
	}
	return g
}

// Put records answer i. Each slot is written once, by one actor.
func (g *Gather) Put(i int, v int64) {
	g.results[i] = v
	if g.remaining.Add(-1) == 0 {
		g.finish(false)
	}
}

func (g *Gather) finish(timedOut bool) {
	if !g.fired.CompareAndSwap(false, true) {
		return
	}
	// The timer's own callback must not read g.timer (it may run before
	// New has stored it); answers arrive after New returned.
	if !timedOut && g.timer != nil {
		g.timer.Stop()
	}
	if timedOut {
		// Late actors may still write their slots: hand out none of them.
		g.done(nil, true)
		return
	}
	g.done(g.results, false)
}

// Slot names one answer of a gather: the actor that answers puts its
// value there. The zero Slot (no gather) ignores Put, for callers that
// want no answer.
type Slot struct {
	G *Gather
	I int
}

// Put records the slot's answer.
func (s Slot) Put(v int64) {
	if s.G != nil {
		s.G.Put(s.I, v)
	}
}
