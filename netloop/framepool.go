package netloop

import (
	"math/bits"
	"sync/atomic"
)

// framePool recycles the buffers of large request frames (produce
// requests, typically hundreds of KiB to MiBs each). Allocating each one
// afresh cost the broker the zeroing of every byte and a garbage
// collection every few requests; a handler that knows when a frame is no
// longer referenced gives it back (wire.Request.ReleaseFrame) and the
// next frame of its size class reuses it.
//
// Buffers come in power-of-two classes from assembleMin to assembleMax.
// The pool holds at most framePoolBudget bytes of idle buffers in all; a
// buffer given back beyond that is left to the garbage collector. A
// buffer is handed out with length = the frame's size and every byte of
// it is overwritten by the frame before anyone reads it.
type framePool struct {
	classes [numFrameClasses]chan []byte
	idle    atomic.Int64 // bytes of buffers waiting in classes
	reused  atomic.Uint64
}

const (
	minFrameClass   = 16 // 64 KiB: assembleMin
	maxFrameClass   = 24 // 16 MiB: assembleMax
	numFrameClasses = maxFrameClass - minFrameClass + 1
	framePoolBudget = 16 << 20
)

func newFramePool() *framePool {
	p := &framePool{}
	for i := range p.classes {
		p.classes[i] = make(chan []byte, max(1, framePoolBudget>>(minFrameClass+i)))
	}
	return p
}

// classOf is the index of the smallest class holding size bytes, or -1.
func classOf(size int) int {
	if size <= 0 || size > 1<<maxFrameClass {
		return -1
	}
	c := bits.Len(uint(size - 1)) // smallest c with 1<<c >= size
	return max(c, minFrameClass) - minFrameClass
}

// get returns a buffer of length size, reused when one is idle.
func (p *framePool) get(size int) []byte {
	c := classOf(size)
	if c < 0 {
		return make([]byte, size)
	}
	select {
	case b := <-p.classes[c]:
		p.idle.Add(-int64(cap(b)))
		p.reused.Add(1)
		return b[:size]
	default:
		return make([]byte, size, 1<<(minFrameClass+c))
	}
}

// put takes back a buffer that get returned.
func (p *framePool) put(b []byte) {
	n := cap(b)
	c := classOf(n)
	if c < 0 || n != 1<<(minFrameClass+c) {
		return // not one of ours
	}
	if p.idle.Add(int64(n)) > framePoolBudget {
		p.idle.Add(-int64(n))
		return
	}
	select {
	case p.classes[c] <- b[:0]:
	default:
		p.idle.Add(-int64(n))
	}
}
