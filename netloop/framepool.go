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
// that holds the frame and is at most twice its size (a small frame does
// not pin a large buffer). At most framePoolBudget bytes wait idle; a
// buffer given back beyond that is left to the garbage collector. A
// buffer is handed out with length = the frame's size, and every byte of
// it is overwritten by the frame before anyone reads it.
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
		if c := cap(b); c >= size && c <= 2*size && (best < 0 || c < cap(p.free[best])) {
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
// rounded up to a multiple of a power-of-two step between size/16 and
// size/8 (at least frameRound), so a producer's requests, which vary in
// size by a few percent, fit each other's buffers at a waste of 12.5% at
// most.
func roundFrame(size int) int {
	step := frameRound
	for step*16 < size {
		step *= 2
	}
	return (size + step - 1) / step * step
}

// put takes back a buffer that get returned.
func (p *framePool) put(b []byte) {
	c := cap(b)
	if c < assembleMin || c%frameRound != 0 {
		return // not one of ours
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.idle+c > framePoolBudget {
		return
	}
	p.free = append(p.free, b[:0])
	p.idle += c
}
