package netloop

import (
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// assembleMin is the smallest frame read in pieces into its own buffer as
// it arrives. Smaller frames wait in gnet's inbound buffer until whole and
// are copied out once: they fit in one or two reads anyway. Larger ones
// (produce requests of hundreds of KiB to MiBs) would otherwise make
// gnet's ring grow to the frame's size, be copied again on each growth,
// and keep that memory for the connection's life.
//
// A frame's buffer starts at assembleMin bytes (or the frame's size, if
// smaller) whatever size it announces, and grows only as its bytes
// arrive: a client that announces 16 MiB and sends a trickle holds what
// it sent, not 16 MiB (which is what it got before, times 1.25, as soon
// as the 4-byte size was in).
const assembleMin = 64 << 10

// assembles reports whether a frame of size bytes is read in pieces.
func assembles(size int32) bool { return size >= assembleMin }

// assembly is a frame whose size and sequence number are known and whose
// bytes are still arriving. It belongs to the connection's loop.
type assembly struct {
	seq      uint64
	size     int    // the frame's length
	frame    []byte // what is allocated so far: len(frame) <= size
	filled   int
	reserved bool // size is counted in the server's queued-bytes budget
}

// newAssembly starts a frame of size bytes whose first buffer is frame.
func newAssembly(seq uint64, size int, frame []byte) *assembly {
	return &assembly{seq: seq, size: size, frame: frame}
}

// fillResult is what fill made of the bytes at hand.
type fillResult int

const (
	fillMore    fillResult = iota // incomplete; wait for the socket
	fillDone                      // the frame is complete
	fillBlocked                   // the buffer is full and the budget cannot grow it
)

// fill moves what gnet has buffered for the connection into the frame,
// then reads what the socket holds of the rest straight into it (no copy
// through gnet's read buffer), growing the buffer as bytes arrive. err is
// the socket's end or failure: the connection must close.
func (s *Server) fill(gc gnet.Conn, a *assembly) (fillResult, error) {
	for {
		if n := min(gc.InboundBuffered(), len(a.frame)-a.filled); n > 0 {
			m, _ := gc.Read(a.frame[a.filled : a.filled+n])
			a.filled += m
		}
		if a.filled == a.size {
			return fillDone, nil
		}
		if a.filled == len(a.frame) {
			// The buffer is full and the frame is not, and more bytes
			// are here: the sender is past its first 64 KiB, so the frame
			// gets its whole declared size at once, within the budget
			// reserved for it. (Growing step by step as bytes arrive cost
			// a large allocation and a copy per step: produce requests of
			// a few MiB took 70% more broker CPU.)
			avail := gc.InboundBuffered() + pendingBytes(gc.Fd())
			if avail == 0 {
				return fillMore, nil
			}
			if !a.reserved {
				if !s.queued.reserve(int64(a.size)) {
					return fillBlocked, nil
				}
				a.reserved = true
			}
			s.grow(a, a.size)
			continue
		}
		if gc.InboundBuffered() > 0 {
			continue
		}
		// Only once gnet holds nothing more, so the bytes stay in order.
		// Never past the frame: what follows is read by gnet as usual.
		n, err := readDirect(gc.Fd(), a.frame[a.filled:])
		a.filled += n
		if err != nil {
			return fillMore, err
		}
		if a.filled < len(a.frame) {
			return fillMore, nil // the socket is empty for now
		}
	}
}

// grow moves the assembling frame into a buffer of n bytes.
func (s *Server) grow(a *assembly, n int) {
	b := s.frames.get(n)
	copy(b, a.frame[:a.filled])
	s.frames.put(a.frame)
	a.frame = b
}

// release gives back what the assembly holds of the budget (its frame's
// buffer is the caller's to keep or put back).
func (s *Server) release(a *assembly) {
	if a.reserved {
		a.reserved = false
		s.queued.release(int64(a.size))
	}
}

// queuedBytes is queued.max.request.bytes: a budget, over all
// connections, for the bytes of large frames being received. A frame
// takes its declared size from it when it outgrows its first buffer and
// gives it back once complete (or its connection closes); a frame that
// does not fit waits, its connection not read (its client pushed back by
// TCP), until another gives some back. One frame always fits when
// nothing else holds the budget, so a budget below socket.request.max.bytes
// slows the largest requests but never refuses them. Taking the declared
// size at once (and not as bytes arrive) means the frames that hold the
// budget can always finish: none waits for budget the others hold.
type queuedBytes struct {
	limit int64 // <= 0: unbounded
	used  atomic.Int64
	peak  atomic.Int64 // highest used since the budget was last empty

	mu      sync.Mutex
	waiters map[budgetWaiter]struct{} // mu: connections waiting for budget
	freed   time.Time                 // mu: last time memory was handed back to the OS
	later   bool                      // mu: a hand-back is scheduled for when freeEvery allows
}

// reserve takes n bytes of the budget if they fit, or if nothing holds it.
func (q *queuedBytes) reserve(n int64) bool {
	for {
		used := q.used.Load()
		if q.limit > 0 && used > 0 && used+n > q.limit {
			return false
		}
		if q.used.CompareAndSwap(used, used+n) {
			if p := q.peak.Load(); used+n > p {
				q.peak.CompareAndSwap(p, used+n)
			}
			return true
		}
	}
}

// freeAfterBurst is how high the budget's use must have gone, since it
// was last empty, for its emptying to hand memory back to the OS; and
// freeEvery is how often that may happen at most.
const (
	freeAfterBurst = 32 << 20
	freeEvery      = 5 * time.Second
)

// handBackMemory returns the memory the runtime holds but does not use to
// the OS; a variable so tests can count the hand-backs.
var handBackMemory = debug.FreeOSMemory

// release gives n bytes back and wakes the connections waiting for them.
// When the budget empties after a burst, the memory the burst's frames
// took is handed back to the OS: the runtime would otherwise keep it
// mapped and resident for minutes (100 slow senders left 785 MB resident
// after they had gone). A burst that ends sooner than freeEvery after the
// last hand-back is handed back once freeEvery has passed, not skipped:
// skipping it left a second burst's memory resident for good.
func (q *queuedBytes) release(n int64) {
	left := q.used.Add(-n)
	q.mu.Lock()
	waiters := q.waiters
	if len(waiters) > 0 {
		q.waiters = nil
	}
	free := false
	if left == 0 && q.peak.Load() >= freeAfterBurst {
		q.peak.Store(0)
		if wait := freeEvery - time.Since(q.freed); wait <= 0 {
			q.freed = time.Now()
			free = true
		} else if !q.later {
			q.later = true
			time.AfterFunc(wait, q.freeLater)
		}
	}
	q.mu.Unlock()
	for c := range waiters {
		c.wake()
	}
	if free {
		go handBackMemory()
	}
}

// freeLater is the scheduled hand-back of a burst that ended too soon
// after the previous one.
func (q *queuedBytes) freeLater() {
	q.mu.Lock()
	q.later = false
	q.freed = time.Now()
	q.mu.Unlock()
	handBackMemory()
}

// budgetWaiter is a connection waiting for budget: a gnet connection
// (its loop is woken) or a TLS connection (its reader goroutine is).
type budgetWaiter interface{ wake() }

// wait registers c to be woken when budget is given back. Called by c's
// reader (its loop, or its TLS goroutine) after reserve failed; a release
// in between has already happened, so it checks again and reports whether
// c must still wait.
func (q *queuedBytes) wait(c budgetWaiter, n int64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	used := q.used.Load()
	if used == 0 || used+n <= q.limit {
		return false
	}
	if q.waiters == nil {
		q.waiters = make(map[budgetWaiter]struct{})
	}
	q.waiters[c] = struct{}{}
	return true
}

// forget drops a closed connection from the waiters.
func (q *queuedBytes) forget(c budgetWaiter) {
	q.mu.Lock()
	delete(q.waiters, c)
	q.mu.Unlock()
}
