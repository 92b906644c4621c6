package netloop

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/samsa-io/samsa/wire"
)

// events is the gnet.EventHandler; it is kept apart from Server so that
// gnet's callbacks are not part of Server's API. Every method runs on a
// gnet loop (OnBoot on the goroutine that called gnet.Rotate).
type events struct {
	gnet.BuiltinEventEngine
	s *Server
}

// OnOpen applies the connection limits and attaches netloop's state. The
// connection gets no goroutine and no other descriptor: its writer starts
// when a write needs one (writer.go).
func (e *events) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	s := e.s
	remote := gc.RemoteAddr()
	ip := hostOf(remote)
	en, _ := gc.Context().(enrollment) // set by enroll
	if reason := s.admitConn(ip, en.listener); reason != "" {
		s.stats.connectionsRefused.Add(1)
		s.log.Warn("netloop: connection refused", "client", remote.String(), "reason", reason)
		return nil, gnet.Close
	}
	c := newConn(s, gc, ip)
	c.session.Listener = en.listener
	gc.SetContext(c)
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	s.stats.connectionsAccepted.Add(1)
	s.stats.connectionsOpen.Add(1)
	return nil, gnet.None
}

func (e *events) OnClose(gc gnet.Conn, _ error) gnet.Action {
	c, _ := gc.Context().(*conn)
	if c == nil {
		return gnet.None // refused in OnOpen
	}
	s := e.s
	c.markClosed()
	if a := c.assembly; a != nil {
		// The frame never completed: give back its in-flight slot and
		// what it held of the budget.
		c.assembly = nil
		c.deliver(a.seq, nil)
		s.release(a)
		s.frames.put(a.frame)
	}
	if c.memWait {
		s.queued.forget(c)
	}
	s.mu.Lock()
	delete(s.conns, c)
	s.busyClosed += c.busy.Load() // busy.go
	s.mu.Unlock()
	s.forgetConn(c.ip, c.session.Listener)
	s.stats.connectionsOpen.Add(-1)
	if h := s.hooks.afterClose; h != nil {
		h()
	}
	return gnet.None
}

// OnTraffic runs when bytes arrived, or when the writer woke the loop
// after draining a muted connection.
func (e *events) OnTraffic(gc gnet.Conn) gnet.Action {
	c, _ := gc.Context().(*conn)
	if c == nil {
		return gnet.Close
	}
	if h := e.s.hooks.trafficAction; h != nil {
		if act, ok := h(); ok {
			return act
		}
	}
	start := time.Now()
	act := e.s.serve(gc, c)
	c.addBusy(start)
	if h := e.s.hooks.afterTraffic; h != nil {
		h(gc.InboundBuffered())
	}
	return act
}

// serve decodes every complete frame buffered for the connection, within
// its backpressure bounds. gnet calls OnTraffic once per read, so it must
// consume all complete frames now; a partial frame stays in gnet's
// inbound buffer until more bytes arrive.
func (s *Server) serve(gc gnet.Conn, c *conn) gnet.Action {
	c.touch()
	c.holdWrites()
	defer c.flushHeld()
	if s.draining.Load() && c.assembly == nil {
		c.frameEnded()
		s.pauseReading(gc, c)
		return gnet.None
	}
	if c.assembly != nil {
		// A frame already admitted: finish it even while draining, since
		// its in-flight slot is held until it is answered.
		if act, done := s.assemble(gc, c); !done || act != gnet.None {
			return act
		}
		if s.draining.Load() {
			c.frameEnded()
			s.pauseReading(gc, c)
			return gnet.None
		}
	}
	if c.paused {
		if c.isMuted() {
			c.frameEnded() // held back by us, not by the client
			return gnet.None
		}
		s.resumeReading(gc, c)
	} else if c.epfdKnown && c.epfd < 0 && c.isMuted() && gc.InboundBuffered() > s.inboundCap() {
		// Fallback when reads cannot be paused: a client that keeps
		// sending while muted is cut off rather than buffered without end.
		s.log.Warn("netloop: closing connection: client keeps sending while its responses are not read",
			"client", c.remote, "client_id", c.clientID, "buffered", gc.InboundBuffered())
		return gnet.Close
	}
	for {
		hdr, err := gc.Peek(4)
		if err != nil {
			// Fewer than 4 bytes so far: a frame has begun if any.
			if gc.InboundBuffered() > 0 {
				c.frameStarted()
			} else {
				c.frameEnded()
			}
			return gnet.None
		}
		size := int32(binary.BigEndian.Uint32(hdr))
		if size < 0 || size > s.cfg.MaxRequestBytes {
			// Checked before a byte of the body is buffered or allocated.
			s.stats.framesRejected.Add(1)
			s.log.Warn("netloop: closing connection: request size out of range",
				"client", c.remote, "client_id", c.clientID, "size", size, "max", s.cfg.MaxRequestBytes)
			return gnet.Close
		}
		complete := gc.InboundBuffered() >= 4+int(size)
		if !complete && !assembles(size) {
			c.frameStarted()
			return gnet.None // wait for the rest of the frame
		}
		if !s.begin() {
			c.frameEnded()
			s.pauseReading(gc, c)
			return gnet.None
		}
		seq, ok := c.admit()
		if !ok {
			s.finish(1)
			s.stats.mutes.Add(1)
			c.frameEnded()
			s.pauseReading(gc, c)
			return gnet.None
		}
		_, _ = gc.Discard(4)
		if !complete {
			// Read the rest as it arrives straight into the frame's own
			// buffer, instead of letting gnet's inbound ring grow to hold
			// it and copying it out at the end. The buffer starts small
			// and grows with what arrives (assembly.go).
			c.frameStarted()
			c.assembly = newAssembly(seq, int(size), s.frames.get(min(int(size), assembleMin)))
			if act, done := s.assemble(gc, c); !done || act != gnet.None {
				return act
			}
			continue
		}
		// Copy the frame out of gnet's reused buffers into one the request
		// owns: kmsg keeps record bytes as sub-slices of it.
		var frame []byte
		if assembles(size) {
			frame = s.frames.get(int(size))
		} else {
			frame = make([]byte, size)
		}
		if n, _ := gc.Read(frame); n != len(frame) {
			c.deliver(seq, nil)
			s.log.Error("netloop: closing connection: short read of a buffered frame", "client", c.remote,
				"want", len(frame), "got", n)
			return gnet.Close
		}
		c.frameEnded()
		if act := s.dispatch(c, seq, frame); act != gnet.None {
			return act
		}
	}
}

// assemble moves what has arrived into the connection's assembling frame
// and, once it is complete, dispatches it. done reports completion; act
// is dispatch's verdict. A frame that cannot grow for want of budget
// (queued.max.request.bytes) stops its connection being read until budget
// is given back and the connection woken.
func (s *Server) assemble(gc gnet.Conn, c *conn) (act gnet.Action, done bool) {
	a := c.assembly
	for {
		res, err := s.fill(gc, a)
		if res == fillBlocked {
			if s.queued.wait(c, int64(a.size)) {
				if !c.memWait {
					c.memWait = true
					s.stats.budgetWaits.Add(1)
				}
				s.pauseReading(gc, c)
				return gnet.None, false
			}
			continue // budget was given back meanwhile
		}
		if c.memWait {
			c.memWait = false
			if c.paused {
				s.resumeReading(gc, c)
			}
		}
		if res == fillMore {
			if err != nil {
				s.log.Debug("netloop: connection ended in the middle of a frame", "client", c.remote, "err", err)
				return gnet.Close, false
			}
			return gnet.None, false
		}
		c.assembly = nil
		s.release(a)
		c.frameEnded()
		return s.dispatch(c, a.seq, a.frame), true
	}
}

// dispatch decodes one frame and hands it to the Handler. A frame that
// does not decode closes the connection with one log line.
func (s *Server) dispatch(c *conn, seq uint64, frame []byte) gnet.Action {
	req, err := wire.DecodeRequest(frame)
	if err != nil {
		s.undecodable(frame, c.remote, c.clientID, err)
		c.deliver(seq, nil) // keeps the in-flight accounting whole
		return gnet.Close
	}
	c.setClientID(req.Header.ClientID)
	req.ClientAddr = c.remote
	req.Session = &c.session
	req.Decoded = time.Now() // the start of its RequestQueueTime (actors/metrics)
	r := &reply{c: c, seq: seq, apiKey: req.Header.APIKey, corr: req.Header.CorrelationID}
	req.Reply = r.send
	if assembles(int32(len(frame))) {
		req.FrameRelease = func() { s.frames.put(frame) }
	}
	s.stats.requests.Add(1)
	return s.handle(req, r)
}

// undecodable counts and logs a frame that did not decode, whose
// connection is about to close, and gives its buffer back.
func (s *Server) undecodable(frame []byte, remote, clientID string, err error) {
	s.frames.put(frame) // nothing refers to it
	s.stats.decodeErrors.Add(1)
	var de *wire.DecodeError
	if errors.As(err, &de) && de.Header.ClientID != "" {
		clientID = de.Header.ClientID
	}
	s.log.Warn("netloop: closing connection after a request it cannot serve",
		"client", remote, "client_id", clientID, "err", err)
}

// handle calls the Handler. A panic there is a broker bug, but must not
// take down the loop and every connection on it: it is logged, the
// request is finished without a response and its connection closed.
func (s *Server) handle(req *wire.Request, r abandoner) (act gnet.Action) {
	defer func() {
		if p := recover(); p != nil {
			s.stats.handlerPanics.Add(1)
			s.log.Error("netloop: handler panicked; closing the connection", "client", req.ClientAddr,
				"client_id", req.Header.ClientID, "api", wire.APIName(req.Header.APIKey), "panic", p)
			r.abandon()
			act = gnet.Close
		}
	}()
	s.h.Handle(req)
	return gnet.None
}

// inboundCap is the fallback bound on a muted connection's buffered input.
func (s *Server) inboundCap() int {
	return int(s.cfg.MaxRequestBytes) + 4 + readBufferCap
}

// pauseReading stops the loop reading c's socket (see pause_linux.go).
func (s *Server) pauseReading(gc gnet.Conn, c *conn) {
	if c.paused {
		return
	}
	if !c.epfdKnown {
		c.epfdKnown = true
		fd, ok := epollFD(gc)
		if !ok {
			fd = -1
		}
		c.epfd = fd
	}
	if c.epfd >= 0 {
		err := setReading(c.epfd, gc.Fd(), false)
		if err == nil {
			c.paused = true
			return
		}
		c.epfd = -1
		if s.pauseWarned.CompareAndSwap(false, true) {
			s.log.Warn("netloop: cannot pause reading a socket; muted connections are capped instead", "err", err)
		}
		return
	}
	if s.pauseWarned.CompareAndSwap(false, true) {
		s.log.Warn("netloop: cannot find gnet's epoll descriptor; muted connections are capped instead")
	}
}

// resumeReading undoes pauseReading.
func (s *Server) resumeReading(gc gnet.Conn, c *conn) {
	if err := setReading(c.epfd, gc.Fd(), true); err != nil {
		s.log.Error("netloop: cannot resume reading a socket", "client", c.remote, "err", err)
	}
	c.paused = false
}
