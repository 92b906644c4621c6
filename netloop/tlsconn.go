package netloop

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/samsa-io/samsa/wire"
)

// tlsConn is one connection of a TLS listener. Unlike a gnet connection
// it has two goroutines for its whole life: the reader (run: handshake,
// framing, decoding, Handle) and the writer (writeLoop in tlswrite.go:
// responses in order). Both block; the bounds that a gnet connection
// enforces by muting its socket are enforced here by the reader not
// reading while the connection is at them, so TCP pushes back on the
// client just the same.
//
// Fields marked "mu" are guarded by mu; cond (on mu) wakes the reader
// when the writer has made room and the writer when a response is filed
// or the connection closes.
type tlsConn struct {
	srv     *Server
	raw     *net.TCPConn
	tc      *tls.Conn
	lis     *TLSListener
	remote  string
	ip      string
	session wire.Session

	lastActive     atomic.Int64 // unix nanoseconds of the last read or write
	sharedClientID atomic.Pointer[string]
	budget         chan struct{} // a token when queued.max.request.bytes was given back
	done           chan struct{} // closed with the connection

	mu       sync.Mutex
	cond     sync.Cond
	slots    []slot   // mu: reorder ring, indexed by sequence % len(slots)
	nextSeq  uint64   // reader only
	writeSeq uint64   // mu
	inFlight int      // mu: admitted, not yet written (or dropped)
	outbound int      // mu: response bytes in memory, filed and not yet written
	muted    bool     // mu: the reader waits for room (counted once per wait)
	throttle throttle // mu: the reader waits until a quota's throttle time ends
	closed   bool     // mu: no more reads or writes; replies are dropped
}

// errTLSIdle and errTLSRequestTimeout end a connection the reader closes
// for connections.max.idle.ms or for a request that took too long.
var (
	errTLSIdle           = errors.New("idle")
	errTLSRequestTimeout = errors.New("request read timeout")
)

// startTLS admits an accepted connection of a TLS listener and starts its
// reader goroutine, which makes the handshake: a slow or silent client
// holds only its own goroutine, never the acceptor.
func (s *Server) startTLS(tc *net.TCPConn, listener string, lis *TLSListener) error {
	remote := tc.RemoteAddr()
	ip := hostOf(remote)
	if reason := s.admitConn(ip, listener); reason != "" {
		s.stats.connectionsRefused.Add(1)
		s.log.Warn("netloop: connection refused", "client", remote.String(), "reason", reason)
		_ = tc.Close()
		return nil
	}
	c := &tlsConn{
		srv: s, raw: tc, lis: lis, remote: remote.String(), ip: ip,
		tc:     tls.Server(tc, lis.Config),
		budget: make(chan struct{}, 1),
		done:   make(chan struct{}),
		slots:  make([]slot, s.cfg.MaxInFlightPerConn),
	}
	c.session.Listener = listener
	c.cond.L = &c.mu
	c.touch()
	s.mu.Lock()
	s.tlsConns[c] = struct{}{}
	s.mu.Unlock()
	s.stats.connectionsAccepted.Add(1)
	s.stats.connectionsOpen.Add(1)
	s.writers.Add(1)
	go c.run()
	return nil
}

func (c *tlsConn) touch() { c.lastActive.Store(time.Now().UnixNano()) }

// wake is the budget's call: it wakes a reader waiting for
// queued.max.request.bytes. Any goroutine.
func (c *tlsConn) wake() {
	select {
	case c.budget <- struct{}{}:
	default:
	}
}

// run is the reader goroutine: handshake, principal, then frames until
// the connection ends. It owns the connection's teardown.
func (c *tlsConn) run() {
	s := c.srv
	defer s.writers.Done()
	defer c.teardown()
	if err := c.handshake(); err != nil {
		s.stats.tlsHandshakeFailures.Add(1)
		s.log.Info("netloop: closing connection: TLS handshake failed", "client", c.remote, "listener", c.session.Listener, "err", err)
		return
	}
	s.writers.Add(1)
	go c.writeLoop()
	err := c.readFrames(bufio.NewReaderSize(c.tc, 16<<10))
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
	case errors.Is(err, errTLSIdle):
		s.stats.connectionsIdleClosed.Add(1)
		s.log.Debug("netloop: closing idle connection", "client", c.remote, "client_id", c.clientID(), "idle", s.cfg.ConnectionsMaxIdle)
	case errors.Is(err, errTLSRequestTimeout):
		s.stats.requestTimeouts.Add(1)
		s.log.Warn("netloop: closing connection: a request did not arrive in full in time",
			"client", c.remote, "client_id", c.clientID(), "timeout", s.cfg.RequestReadTimeout)
	default:
		s.log.Debug("netloop: TLS connection ended", "client", c.remote, "client_id", c.clientID(), "err", err)
	}
}

// handshakeTimeout bounds a TLS handshake: RequestReadTimeout, or its
// default when that is disabled (a client that never finishes its
// handshake must not hold a connection for ever).
func (s *Server) handshakeTimeout() time.Duration {
	if d := s.cfg.RequestReadTimeout; d > 0 {
		return d
	}
	return DefaultRequestReadTimeout
}

// handshake makes the TLS handshake and sets the principal from a
// verified client certificate, before any request is read.
func (c *tlsConn) handshake() error {
	_ = c.raw.SetDeadline(time.Now().Add(c.srv.handshakeTimeout()))
	if err := c.tc.Handshake(); err != nil {
		return err
	}
	_ = c.raw.SetDeadline(time.Time{})
	c.touch()
	st := c.tc.ConnectionState()
	if len(st.VerifiedChains) == 0 || len(st.PeerCertificates) == 0 || c.lis.Principal == nil {
		return nil
	}
	p, err := c.lis.Principal(st.PeerCertificates[0])
	if err != nil {
		return err
	}
	c.session.SetPrincipal(p)
	c.srv.log.Debug("netloop: TLS client authenticated", "client", c.remote, "listener", c.session.Listener, "principal", p)
	return nil
}

// readFrames reads, checks, admits and dispatches frames until the
// connection ends or must close; the error says why.
func (c *tlsConn) readFrames(r *bufio.Reader) error {
	s := c.srv
	var hdr [4]byte
	for {
		if err := c.readHeader(r, hdr[:]); err != nil {
			return err
		}
		size := int32(binary.BigEndian.Uint32(hdr[:]))
		if size < 0 || size > s.cfg.MaxRequestBytes {
			s.stats.framesRejected.Add(1)
			s.log.Warn("netloop: closing connection: request size out of range",
				"client", c.remote, "client_id", c.clientID(), "size", size, "max", s.cfg.MaxRequestBytes)
			return nil
		}
		if !s.begin() {
			<-c.done // draining: read no more; Shutdown closes the connection
			return nil
		}
		seq, ok := c.admit()
		if !ok {
			s.finish(1)
			return net.ErrClosed
		}
		frame, err := c.readBody(r, int(size))
		if err != nil {
			c.deliver(seq, nil) // gives the in-flight slot back
			return err
		}
		if !c.dispatch(seq, frame) {
			return nil
		}
	}
}

// readHeader reads a frame's 4-byte size. While none has begun the
// connection may be idle: past connections.max.idle.ms with nothing in
// flight it is closed. Once the first byte is in, the rest must come
// within RequestReadTimeout.
func (c *tlsConn) readHeader(r *bufio.Reader, hdr []byte) error {
	s := c.srv
	idle := s.cfg.ConnectionsMaxIdle
	var busy time.Time // when requests in flight last kept it from being idle
	n := 0
	for n < len(hdr) {
		var deadline time.Time
		switch {
		case n > 0 && s.cfg.RequestReadTimeout > 0:
			deadline = time.Now().Add(s.cfg.RequestReadTimeout)
		case n == 0 && idle > 0:
			// From the last traffic, but not sooner than idle after the
			// last check that found requests in flight: a request held
			// longer than idle must not make this loop spin.
			deadline = time.Unix(0, c.lastActive.Load()).Add(idle)
			if d := busy.Add(idle); d.After(deadline) {
				deadline = d
			}
		}
		_ = c.raw.SetReadDeadline(deadline)
		m, err := r.Read(hdr[n:])
		n += m
		if m > 0 {
			c.touch()
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
		if n > 0 {
			return errTLSRequestTimeout
		}
		if h := s.hooks.tlsIdleCheck; h != nil {
			h()
		}
		if c.idleSince(time.Now().Add(-idle).UnixNano()) {
			return errTLSIdle
		}
		// Traffic the other way, or requests in flight: not idle yet.
		busy = time.Now()
	}
	return nil
}

// idleSince reports whether the connection has had no traffic since
// before cutoff and has nothing in flight.
func (c *tlsConn) idleSince(cutoff int64) bool {
	if c.lastActive.Load() >= cutoff {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inFlight == 0
}

// admit reserves a sequence number for the next frame, waiting while the
// connection is at its bounds (MaxInFlightPerConn, MaxOutboundBytes): the
// socket is not read meanwhile. It fails only when the connection closed.
func (c *tlsConn) admit() (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for !c.closed && (c.inFlight >= len(c.slots) || c.outbound >= c.srv.cfg.MaxOutboundBytes || c.throttle.activeLocked(c.endThrottle)) {
		if !c.muted {
			c.muted = true
			c.srv.stats.mutes.Add(1)
		}
		c.cond.Wait()
	}
	c.muted = false
	if c.closed {
		return 0, false
	}
	c.inFlight++
	seq := c.nextSeq
	c.nextSeq++
	s := &c.slots[seq%uint64(len(c.slots))]
	s.admitted, s.reported = time.Now().UnixNano(), false
	return seq, true
}

// readBody reads a frame of size bytes within RequestReadTimeout. A large
// frame (assembleMin and up) is read as on gnet connections: into a pooled
// buffer of at most assembleMin bytes first, and only once the client has
// sent past that does it take its declared size from
// queued.max.request.bytes (waiting, unread, while that is spent) and get
// a buffer of that size. A client that announces much and sends little
// holds little.
func (c *tlsConn) readBody(r *bufio.Reader, size int) ([]byte, error) {
	s := c.srv
	deadline := func() {
		if d := s.cfg.RequestReadTimeout; d > 0 {
			_ = c.raw.SetReadDeadline(time.Now().Add(d))
		} else {
			_ = c.raw.SetReadDeadline(time.Time{})
		}
	}
	deadline()
	if !assembles(int32(size)) {
		frame := make([]byte, size)
		_, err := io.ReadFull(r, frame)
		return frame, c.readErr(err)
	}
	frame := s.frames.get(min(size, assembleMin))
	if _, err := io.ReadFull(r, frame); err != nil {
		s.frames.put(frame)
		return nil, c.readErr(err)
	}
	if size == len(frame) {
		return frame, nil
	}
	if err := c.reserve(int64(size)); err != nil {
		s.frames.put(frame)
		return nil, err
	}
	defer s.queued.release(int64(size))
	whole := s.frames.get(size)
	copy(whole, frame)
	s.frames.put(frame)
	deadline() // time spent waiting for budget does not count
	if _, err := io.ReadFull(r, whole[assembleMin:]); err != nil {
		s.frames.put(whole)
		return nil, c.readErr(err)
	}
	return whole, nil
}

// reserve takes n bytes of queued.max.request.bytes, waiting (the socket
// unread) until they fit or the connection closes.
func (c *tlsConn) reserve(n int64) error {
	s := c.srv
	waited := false
	for !s.queued.reserve(n) {
		if !s.queued.wait(c, n) {
			continue // budget was given back meanwhile
		}
		if !waited {
			waited = true
			s.stats.budgetWaits.Add(1)
		}
		select {
		case <-c.budget:
		case <-c.done:
			s.queued.forget(c)
			return net.ErrClosed
		}
	}
	return nil
}

// readErr maps a read deadline to errTLSRequestTimeout.
func (c *tlsConn) readErr(err error) error {
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return errTLSRequestTimeout
	}
	if err == nil {
		c.touch()
	}
	return err
}

// dispatch decodes a frame and hands it to the Handler, as the gnet path
// does; it reports whether the connection stays open.
func (c *tlsConn) dispatch(seq uint64, frame []byte) bool {
	s := c.srv
	req, err := wire.DecodeRequest(frame)
	if err != nil {
		s.undecodable(frame, c.remote, c.clientID(), err)
		c.deliver(seq, nil)
		return false
	}
	c.setClientID(req.Header.ClientID)
	req.ClientAddr = c.remote
	req.Session = &c.session
	req.Decoded = time.Now()
	r := &tlsReply{c: c, seq: seq, apiKey: req.Header.APIKey, corr: req.Header.CorrelationID}
	req.Reply = r.send
	if assembles(int32(len(frame))) {
		req.FrameRelease = func() { s.frames.put(frame) }
	}
	s.stats.requests.Add(1)
	return s.handle(req, r) == gnet.None
}

func (c *tlsConn) setClientID(id string) {
	if p := c.sharedClientID.Load(); p == nil || *p != id {
		c.sharedClientID.Store(&id)
	}
}

func (c *tlsConn) clientID() string {
	if p := c.sharedClientID.Load(); p != nil {
		return *p
	}
	return ""
}

// close ends the connection from any goroutine: the socket is closed (a
// blocked read or write returns), waiters wake, replies from now on are
// dropped. What is filed is dropped by the writer (or teardown).
func (c *tlsConn) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	close(c.done)
	c.cond.Broadcast()
	c.mu.Unlock()
	_ = c.raw.Close()
}

// teardown is the reader's last act: close, and forget the connection.
func (c *tlsConn) teardown() {
	c.close()
	s := c.srv
	s.mu.Lock()
	delete(s.tlsConns, c)
	s.mu.Unlock()
	s.queued.forget(c)
	s.forgetConn(c.ip, c.session.Listener)
	s.stats.connectionsOpen.Add(-1)
	if h := s.hooks.afterClose; h != nil {
		h()
	}
}

// closeTLSConns closes every TLS connection (Shutdown, once requests are
// drained or the deadline passed).
func (s *Server) closeTLSConns() {
	s.mu.Lock()
	conns := make([]*tlsConn, 0, len(s.tlsConns))
	for c := range s.tlsConns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}
