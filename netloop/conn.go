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
//   - the connection's writer goroutine, started only when a write must
//     wait or is large (writer.go): it writes responses in sequence order
//     to its own dup of the socket and exits when it has nothing more to
//     write, so an idle connection has no goroutine and one descriptor.
//
// Only the holder of the write token (writing) writes to the socket: the
// fast path on fd itself (rawWriting), the writer goroutine on its dup.
//
// Fields marked "mu" are guarded by mu. gc's concurrency-safe methods
// (Wake, Close) are called only under mu and only while !closed: once
// OnClose has run, the loop (and later its poller) may be gone.
type conn struct {
	srv    *Server
	gc     gnet.Conn
	fd     int    // gnet's descriptor: open and this connection's until OnClose has run
	remote string // "ip:port", for logs and Request.ClientAddr
	ip     string // for max.connections.per.ip
	// session is handed with every request; its Listener is set in
	// OnOpen, its principal by the broker.
	session wire.Session

	lastActive     atomic.Int64           // unix nanoseconds of the last read or write
	frameSince     atomic.Int64           // unix nanoseconds since the frame being received began, or 0
	sharedClientID atomic.Pointer[string] // last client id, for logs off the loop
	busy           atomic.Int64           // nanoseconds its loop spent on its traffic (busy.go); written by the loop only

	// loop
	nextSeq   uint64 // sequence number of the next decoded request
	clientID  string // from the last decoded header, for log lines
	paused    bool   // reading is switched off in epoll
	epfd      int    // the loop's epoll descriptor, valid if epfdKnown and >= 0
	epfdKnown bool
	assembly  *assembly // a large frame being read in pieces, or nil
	memWait   bool      // the assembly waits for budget (queued.max.request.bytes), reading paused

	mu       sync.Mutex
	cond     sync.Cond // OnClose waits on it for a fast-path write on fd to end
	slots    []slot    // mu: reorder ring, indexed by sequence % len(slots)
	writeSeq uint64    // mu: sequence number the writer writes next
	inFlight int       // mu: decoded, not yet written (or dropped)
	outbound int       // mu: response bytes in memory, filed and not yet written
	muted    bool      // mu: decoding stopped for backpressure; the writer wakes the loop
	throttle throttle  // mu: decoding stopped until a quota's throttle time ends
	closed   bool      // mu: OnClose ran; no more gc calls, replies are dropped
	closing  bool      // mu: the idle sweep asked gnet to close it
	broken   bool      // mu: a write failed; the rest is discarded until close
	writing  bool      // mu: the write token: someone is writing to the socket
	handoff  *handoff  // mu: a batch the fast path wrote in part, for the writer
	holding  bool      // mu: the loop is decoding a read; it flushes replies when done

	rawWriting bool    // mu: the token holder is in a system call on fd (fast path)
	writerOn   bool    // mu: a writer goroutine is running
	sock       *socket // mu: the running writer's dup of the socket, or nil
}

// slot holds one response in the reorder ring. ready with a nil resp is a
// request without a response (acks=0 produce): it only advances the order.
type slot struct {
	resp  *wire.Response
	ready bool
	// admitted is when the request was admitted (unix nanoseconds), for
	// the check for requests nobody answers; reported, once it was found.
	admitted int64
	reported bool
}

func newConn(s *Server, gc gnet.Conn, ip string) *conn {
	c := &conn{
		srv:    s,
		gc:     gc,
		fd:     gc.Fd(),
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
	if c.inFlight >= len(c.slots) || c.outbound >= c.srv.cfg.MaxOutboundBytes || c.throttle.activeLocked(c.endThrottle) {
		c.muted = true
		return 0, false
	}
	c.inFlight++
	seq = c.nextSeq
	c.nextSeq++
	s := &c.slots[seq%uint64(len(c.slots))]
	s.admitted, s.reported = time.Now().UnixNano(), false
	return seq, true
}

// unanswered returns how many requests in flight on the connection were
// admitted before cutoff and still have no answer, counting each only
// the first time it is found, and the age of the oldest of them.
func (c *conn) unanswered(cutoff, now int64) (n int, oldest time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return unansweredSlots(c.slots, c.writeSeq, c.inFlight, cutoff, now)
}

// unansweredSlots is unanswered over a reorder ring (under its
// connection's mutex): the inFlight slots from writeSeq on.
func unansweredSlots(slots []slot, writeSeq uint64, inFlight int, cutoff, now int64) (n int, oldest time.Duration) {
	for i := range uint64(inFlight) {
		s := &slots[(writeSeq+i)%uint64(len(slots))]
		if s.ready || s.reported || s.admitted == 0 || s.admitted >= cutoff {
			continue
		}
		s.reported = true
		n++
		oldest = max(oldest, time.Duration(now-s.admitted))
	}
	return n, oldest
}

// frameStarted notes that a frame has begun to arrive and not finished,
// unless one had already: the request read deadline counts from its
// first bytes. frameEnded notes that none is being received (or that
// netloop, not the client, holds it back). Loop only.
func (c *conn) frameStarted() {
	if c.frameSince.Load() == 0 {
		c.frameSince.Store(time.Now().UnixNano())
	}
}

func (c *conn) frameEnded() {
	if c.frameSince.Load() != 0 {
		c.frameSince.Store(0)
	}
}

// wake has the loop run OnTraffic for c, which retries what waited (a
// frame waiting for budget). Any goroutine.
func (c *conn) wake() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		_ = c.gc.Wake(nil)
	}
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
		c.srv.dropLate(resp)
		return
	}
	s := &c.slots[seq%uint64(len(c.slots))]
	s.resp, s.ready = resp, true
	c.outbound += memBytes(resp)
	c.throttle.filedLocked(resp)
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
// are dropped, and what is filed is discarded. gnet closes fd once OnClose
// returns, so a fast-path write in progress on it is waited for (one
// non-blocking system call): after that, nothing writes to fd, and its
// number may be reused. A running writer goroutine writes on its own dup,
// which keeps the socket open until it exits: it discards what is filed
// itself, and a write of it waiting for room on a client that does not
// read is broken off.
func (c *conn) markClosed() {
	c.mu.Lock()
	c.closed = true
	for c.rawWriting {
		c.cond.Wait()
	}
	var dropped []*wire.Response
	var sock *socket
	if c.writerOn {
		sock = c.sock
	} else {
		dropped = c.takeAllLocked()
	}
	c.mu.Unlock()
	c.drop(dropped)
	if sock != nil {
		sock.shutdownWaits()
	}
}

// wakeWriterLocked makes sure a writer goroutine looks at the ring: it
// starts one unless one is running (a running writer looks again before
// it exits). Under mu, while !closed.
func (c *conn) wakeWriterLocked() {
	if c.writerOn {
		return
	}
	c.writerOn = true
	c.srv.writers.Add(1)
	go c.writeLoop()
}

// closeFromOutside asks the loop to close the connection, unless it is
// closed or already asked to. It reports whether it asked, after counting
// it in count: first, so that whoever sees the close sees the count.
// Any goroutine.
func (c *conn) closeFromOutside(count *atomic.Uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.closing {
		return false
	}
	c.closing = true
	count.Add(1)
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

// dropLate releases a reply that came after its connection closed and
// finishes its request.
func (s *Server) dropLate(resp *wire.Response) {
	s.stats.repliesDropped.Add(1)
	release(resp)
	s.finish(1)
}

// release calls resp.Done, if any.
func release(resp *wire.Response) {
	if resp != nil && resp.Done != nil {
		resp.Done()
	}
}
