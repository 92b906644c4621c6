package netloop

import (
	"sync"
	"sync/atomic"
)

// framePool recycles the buffers of large request frames (produce
// requests, typically hundreds of KiB to MiBs each). Allocating each one
// afresh cost the broker the zeroing of every byte and a garbage
// collection every few requests; a handler that knows when a frame is no
// longer referenced gives it back (wire.Request.ReleaseFrame) and a later
// frame that fits reuses it.
//
// Buffers are allocated with their capacity rounded up (roundFrame), so
// frames of similar sizes (one producer's requests) fit each other's
// buffers without power-of-two waste. get takes the smallest idle buffer
// that holds the frame, however much larger: a client's requests vary in
// size tenfold from one to the next (whatever accumulated while the
// previous one was out), and a large idle buffer serving a small frame
// costs nothing that allocating a new one would not (only written pages
// become resident). At most framePoolBudget bytes wait idle: a buffer
// given back beyond that makes room by dropping the smallest idle ones
// (to the garbage collector). A buffer is handed out with length = the
// frame's size, and every byte of it is overwritten by the frame before
// anyone reads it.
type framePool struct {
	mu     sync.Mutex
	free   [][]byte // mu: idle buffers, length 0
	idle   int      // mu: sum of their capacities
	reused atomic.Uint64
}

const (
	frameRound      = 64 << 10
	framePoolBudget = 8 << 20
)

func newFramePool() *framePool { return &framePool{} }

// get returns a buffer of length size, reused when one fits.
func (p *framePool) get(size int) []byte {
	p.mu.Lock()
	best := -1
	for i, b := range p.free {
		// At most twice the size's own rounding: a frame's first 64 KiB
		// must not take the buffer a whole large frame is about to need.
		if c := cap(b); c >= size && c <= 2*roundFrame(size) && (best < 0 || c < cap(p.free[best])) {
			best = i
		}
	}
	if best >= 0 {
		b := p.free[best]
		last := len(p.free) - 1
		p.free[best], p.free[last] = p.free[last], nil
		p.free = p.free[:last]
		p.idle -= cap(b)
		p.mu.Unlock()
		p.reused.Add(1)
		return b[:size]
	}
	p.mu.Unlock()
	return make([]byte, size, roundFrame(size))
}

// roundFrame is the capacity allocated for a frame of size bytes: size
// plus a quarter, rounded up to a multiple of a power-of-two step between
// size/16 and size/8 (at least frameRound). A producer's requests vary in
// size by some percent from one to the next; the headroom lets a later,
// larger one reuse the buffer (pages of it never written are never made
// resident). From 1 MiB up the capacity is at most 3/8 above the size;
// smaller frames round to 64 KiB steps.
func roundFrame(size int) int {
	step := frameRound
	for step*16 < size {
		step *= 2
	}
	want := size + size/4
	return (want + step - 1) / step * step
}

// put takes back a buffer that get returned. Over the budget, the
// smallest idle buffers make room for it: the newest sizes are the likely
// next ones, and a buffer too small for them would only hold the budget.
func (p *framePool) put(b []byte) {
	c := cap(b)
	if c < assembleMin || c%frameRound != 0 || c > framePoolBudget {
		return // not one of ours, or larger than the whole budget
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.idle+c > framePoolBudget && len(p.free) > 0 {
		smallest := 0
		for i := range p.free {
			if cap(p.free[i]) < cap(p.free[smallest]) {
				smallest = i
			}
		}
		p.idle -= cap(p.free[smallest])
		last := len(p.free) - 1
		p.free[smallest], p.free[last] = p.free[last], nil
		p.free = p.free[:last]
	}
	p.free = append(p.free, b[:0])
	p.idle += c
}
