package netloop

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/samsa-io/samsa/wire"
)

// conn is netloop's state for one client connection. Three parties touch
// it:
//
//   - the gnet loop that owns the connection (OnOpen, OnTraffic, OnClose):
//     it decodes frames, assigns sequence numbers, pauses and resumes
//     reading; fields marked "loop" are touched only there;
//   - Reply, from any goroutine: it files a response in the reorder ring
//     and, when the response is next in order and the write token is free,
//     may write it at once (fastpath.go);
//   - the connection's writer goroutine: it writes responses in sequence
//     order to sock, the connection's own dup of the socket.
//
// Only the holder of the write token (writing) writes to sock.
//
// Fields marked "mu" are guarded by mu. gc's concurrency-safe methods
// (Wake, Close) are called only under mu and only while !closed: once
// OnClose has run, the loop (and later its poller) may be gone.
type conn struct {
	srv    *Server
	gc     gnet.Conn
	sock   *socket // dup of the socket, written by the token holder
	remote string  // "ip:port", for logs and Request.ClientAddr
	ip     string  // for max.connections.per.ip

	lastActive     atomic.Int64           // unix nanoseconds of the last read or write
	sharedClientID atomic.Pointer[string] // last client id, for logs off the loop

	// loop
	nextSeq   uint64 // sequence number of the next decoded request
	clientID  string // from the last decoded header, for log lines
	paused    bool   // reading is switched off in epoll
	epfd      int    // the loop's epoll descriptor, valid if epfdKnown and >= 0
	epfdKnown bool
	assembly  *assembly // a large frame being read in pieces, or nil

	mu       sync.Mutex
	cond     sync.Cond // wakes the writer: head ready with the token free, a handoff, or close
	slots    []slot    // mu: reorder ring, indexed by sequence % len(slots)
	writeSeq uint64    // mu: sequence number the writer writes next
	inFlight int       // mu: decoded, not yet written (or dropped)
	outbound int       // mu: response bytes in memory, filed and not yet written
	muted    bool      // mu: decoding stopped for backpressure; the writer wakes the loop
	closed   bool      // mu: OnClose ran; no more gc calls, replies are dropped
	closing  bool      // mu: the idle sweep asked gnet to close it
	broken   bool      // mu: a write failed; the rest is discarded until close
	writing  bool      // mu: the write token: someone is writing to the socket
	handoff  *handoff  // mu: a batch the fast path wrote in part, for the writer
	holding  bool      // mu: the loop is decoding a read; it flushes replies when done
}

// slot holds one response in the reorder ring. ready with a nil resp is a
// request without a response (acks=0 produce): it only advances the order.
type slot struct {
	resp  *wire.Response
	ready bool
}

func newConn(s *Server, gc gnet.Conn, sock *socket, ip string) *conn {
	c := &conn{
		srv:    s,
		gc:     gc,
		sock:   sock,
		remote: gc.RemoteAddr().String(),
		ip:     ip,
		slots:  make([]slot, s.cfg.MaxInFlightPerConn),
	}
	c.cond.L = &c.mu
	c.touch()
	return c
}

func (c *conn) touch() { c.lastActive.Store(time.Now().UnixNano()) }

// admit reserves a sequence number for the next frame, or reports that
// the connection is at its backpressure bounds, in which case it is marked
// muted and the writer wakes the loop once it drains. Loop only.
func (c *conn) admit() (seq uint64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inFlight >= len(c.slots) || c.outbound >= c.srv.cfg.MaxOutboundBytes {
		c.muted = true
		return 0, false
	}
	c.inFlight++
	seq = c.nextSeq
	c.nextSeq++
	return seq, true
}

// isMuted reports whether the connection is waiting for its writer to
// drain. Loop only (the flag itself is shared).
func (c *conn) isMuted() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.muted
}

// deliver files resp under seq and, if it is next in order, writes it
// (fast path) or wakes the writer. A reply for a closed connection is
// released at once.
func (c *conn) deliver(seq uint64, resp *wire.Response) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.srv.stats.repliesDropped.Add(1)
		release(resp)
		c.srv.finish(1)
		return
	}
	s := &c.slots[seq%uint64(len(c.slots))]
	s.resp, s.ready = resp, true
	c.outbound += memBytes(resp)
	if seq != c.writeSeq || c.holding {
		c.mu.Unlock() // an earlier response is missing, or the loop flushes soon
		return
	}
	c.tryFastPathLocked() // unlocks
}

// holdWrites makes replies filed while the loop decodes a read wait for
// flushHeld, so that the answers to a pipelined burst leave in one writev
// instead of one write each. Loop only.
func (c *conn) holdWrites() {
	c.mu.Lock()
	c.holding = true
	c.mu.Unlock()
}

// flushHeld ends holdWrites and writes (or hands to the writer) what is
// ready. Loop only.
func (c *conn) flushHeld() {
	c.mu.Lock()
	c.holding = false
	if c.closed || !c.headReadyLocked() {
		c.mu.Unlock()
		return
	}
	c.tryFastPathLocked() // unlocks
}

// markClosed is OnClose's part: no more gnet calls, replies from now on
// are dropped, the writer discards what is filed, closes its descriptor
// (which finally closes the socket: gnet has closed only its own) and
// exits. A write waiting for room on a client that does not read is
// broken off.
func (c *conn) markClosed() {
	c.mu.Lock()
	c.closed = true
	c.cond.Broadcast()
	c.mu.Unlock()
	c.sock.shutdownWaits()
}

// closeFromOutside asks the loop to close the connection, unless it is
// closed or already asked to. It reports whether it asked. Any goroutine.
func (c *conn) closeFromOutside() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.closing {
		return false
	}
	c.closing = true
	_ = c.gc.Close()
	return true
}

// setClientID records the client id of the last decoded request. Loop
// only; the shared copy is for log lines written elsewhere.
func (c *conn) setClientID(id string) {
	if id != c.clientID {
		c.clientID = id
		c.sharedClientID.Store(&id)
	}
}

// loopClientID returns the last client id seen, from any goroutine.
func (c *conn) loopClientID() string {
	if p := c.sharedClientID.Load(); p != nil {
		return *p
	}
	return ""
}

// idleSince reports whether the connection has had no traffic since
// before cutoff and has nothing in flight.
func (c *conn) idleSince(cutoff int64) bool {
	if c.lastActive.Load() >= cutoff {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.closed && c.inFlight == 0
}

// memBytes is the memory a response holds until it is written: its byte
// chunks. File regions hold no memory.
func memBytes(r *wire.Response) int {
	if r == nil {
		return 0
	}
	n := 0
	for i := range r.Chunks {
		if r.Chunks[i].File == nil {
			n += len(r.Chunks[i].Bytes)
		}
	}
	return n
}

// release calls resp.Done, if any.
func release(resp *wire.Response) {
	if resp != nil && resp.Done != nil {
		resp.Done()
	}
}
