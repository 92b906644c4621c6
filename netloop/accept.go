package netloop

import (
	"errors"
	"net"
	"os"
	"syscall"
	"time"
)

// netloop accepts connections itself and enrolls them with gnet's event
// loops (gnet.Client.EnrollContext), rather than letting a gnet server
// engine accept: gnet's acceptor treats any accept(2) failure but a few
// transient ones as fatal and stops the whole engine. At the descriptor
// limit (EMFILE, ENFILE) that closed every connection and left a live
// process refusing new ones. Here an accept failure costs only the
// connection being accepted: it is logged, accepting backs off, and the
// loops keep serving the connections they have.
//
// One goroutine per listener blocks in Accept (Go's netpoller, one
// registered descriptor per listener). Enrolling dups the accepted
// socket for gnet and closes Go's copy, so a connection holds two
// descriptors only for that moment.

// Accept back-off bounds: after a failed accept, wait acceptBackoffMin,
// doubling per consecutive failure up to acceptBackoffMax. The first
// success resets it.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = 500 * time.Millisecond
	// acceptLogEvery rate-limits the log line of a persisting accept
	// failure (a broker at its descriptor limit fails every few ms).
	acceptLogEvery = 10 * time.Second
	// enrollStuck is how long a connection may wait for an event loop to
	// take it before the loops count as stopped (see watchdog).
	enrollStuck = 10 * time.Second
)

// acceptLoop accepts connections on ln until it is closed.
// Each connection is enrolled with its listener's name (enrollment), which
// OnOpen puts in the connection's wire.Session.
// A TLS listener's connections are handed to startTLS instead.
func (s *Server) acceptLoop(ln *net.TCPListener, name string, tlsLis *TLSListener) {
	defer s.acceptors.Done()
	backoff := time.Duration(0)
	var lastLog time.Time
	var failures uint64
	for {
		tc, err := ln.AcceptTCP()
		if g := s.cfg.ConnectionGate; err == nil && g != nil && !s.gateConn(g, tc, name) {
			continue
		}
		if err == nil && !s.waitForSlot(tc, name) {
			return // Shutdown
		}
		if err == nil && tlsLis != nil {
			err = s.startTLS(tc, name, tlsLis)
		} else if err == nil {
			err = s.enroll(tc, name)
		} else if errors.Is(err, net.ErrClosed) {
			return // Shutdown closed the listener
		} else if isDescriptorLimit(err) {
			s.shedOne(ln)
		}
		if err == nil {
			backoff = 0
			continue
		}
		failures++
		s.stats.acceptErrors.Add(1)
		if now := time.Now(); now.Sub(lastLog) >= acceptLogEvery {
			lastLog = now
			msg := "netloop: accepting a connection failed; backing off and serving the open ones"
			if isDescriptorLimit(err) {
				msg = "netloop: out of file descriptors: new connections are closed at once until some close; " +
					"raise the limit (ulimit -n, LimitNOFILE=) or lower max.connections"
			}
			s.log.Error(msg, "listener", ln.Addr().String(), "err", err, "failures", failures,
				"open_connections", s.stats.connectionsOpen.Load(), "refused", s.stats.connectionsRefused.Load())
		}
		backoff = min(max(2*backoff, acceptBackoffMin), acceptBackoffMax)
		select {
		case <-time.After(backoff):
		case <-s.acceptStop:
			return
		}
	}
}

// enroll hands an accepted connection to an event loop, which runs OnOpen
// on it. gnet dups the socket and this copy is closed either way; a
// connection gnet could not take (no descriptor for the dup, typically)
// is closed and the error returned.
func (s *Server) enroll(tc *net.TCPConn, listener string) error {
	s.enrolling.Store(time.Now().UnixNano())
	_, err := s.cli.EnrollContext(tc, enrollment{listener: listener})
	s.enrolling.Store(0)
	if err != nil {
		_ = tc.Close()
		s.stats.connectionsRefused.Add(1)
	}
	return err
}

// enrollment is the context a connection is enrolled with: what OnOpen
// needs to know of the listener that accepted it.
type enrollment struct{ listener string }

// shedOne is the answer to EMFILE: the pending connection cannot be
// accepted, and left in the backlog its client would wait for nothing.
// So the spare descriptor held for this moment is closed, one connection
// is accepted and reset at once, and the spare is taken again.
func (s *Server) shedOne(ln *net.TCPListener) {
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	if s.spare == nil {
		s.spare, _ = os.Open(os.DevNull)
		return
	}
	_ = s.spare.Close()
	s.spare = nil
	// Accept only what is already pending: never block here.
	_ = ln.SetDeadline(time.Now())
	tc, err := ln.AcceptTCP()
	_ = ln.SetDeadline(time.Time{})
	if err == nil {
		s.stats.connectionsRefused.Add(1)
		_ = tc.SetLinger(0) // a reset: the client learns at once, and no TIME_WAIT is kept
		_ = tc.Close()
	}
	s.spare, _ = os.Open(os.DevNull)
}

// isDescriptorLimit reports whether err is the process's or the system's
// descriptor limit.
func isDescriptorLimit(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// watchdog reports, through Failed, event loops that stopped taking
// connections: an enrollment that has waited for a loop longer than
// enrollStuck (a loop that died would leave it waiting forever), on two
// ticks in a row, so that a process stopped and resumed (SIGSTOP, a
// frozen VM) is not taken for one whose loops died. It is called from the
// sweeper's ticks only.
func (s *Server) watchdog(now time.Time) {
	since := s.enrolling.Load()
	if since == 0 || now.UnixNano()-since <= int64(s.enrollStuck) {
		s.stuckSince = 0
		return
	}
	if s.stuckSince != since {
		s.stuckSince = since // seen once; again on the next tick fails
		return
	}
	s.fail(errors.New("netloop: an event loop has not taken a new connection for " + s.enrollStuck.String() +
		"; the event loops have stopped"))
}

// fail records that the server can no longer serve, once: Failed is
// closed, and the process that owns the server is expected to exit.
func (s *Server) fail(err error) {
	s.failOnce.Do(func() {
		s.failErr = err
		s.log.Error("netloop: the server stopped serving", "err", err, "listeners", s.cfg.Listeners)
		close(s.failed)
	})
}

// Failed is closed when the server stops serving on its own (its event
// loops stopped); Err then says why. A broker process should exit
// non-zero then, rather than linger with its port dead. Shutdown does not
// close it.
func (s *Server) Failed() <-chan struct{} { return s.failed }

// Err is the reason the server failed, once Failed is closed; else nil.
func (s *Server) Err() error {
	select {
	case <-s.failed:
		return s.failErr
	default:
		return nil
	}
}
