package netloop

import (
	"net"
	"net/netip"
	"time"
)

// ConnectionGate hears of every accepted connection before it is served:
// the broker's connection creation quotas (Kafka's ConnectionQuotas,
// KIP-612). It is called from the listener's accept goroutine, never an
// event loop, and must not block.
type ConnectionGate interface {
	// Accepted records a connection from ip on listener at now. wait is
	// how long the listener stops accepting first (over the broker's or
	// the listener's rate: the next connections wait in the backlog, as
	// with Kafka's acceptor); closeAfter, when positive, refuses the
	// connection: it is held unread and closed after that long (over
	// its address's rate, as Kafka delays the close of a throttled
	// connection).
	Accepted(listener string, ip netip.Addr, now time.Time) (wait, closeAfter time.Duration)
}

// gateConn asks the gate about tc, accepted on listener, and waits as it
// says. serve is false when tc is refused (its close is scheduled) or
// the server stopped during the wait (tc is closed).
func (s *Server) gateConn(g ConnectionGate, tc *net.TCPConn, listener string) (serve bool) {
	var ip netip.Addr
	if ta, ok := tc.RemoteAddr().(*net.TCPAddr); ok {
		ip = ta.AddrPort().Addr()
	}
	wait, closeAfter := g.Accepted(listener, ip, time.Now())
	if closeAfter > 0 {
		s.stats.connectionsThrottled.Add(1)
		time.AfterFunc(closeAfter, func() { _ = tc.Close() })
	}
	if wait > 0 {
		s.stats.acceptThrottles.Add(1)
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-s.acceptStop:
			if closeAfter <= 0 {
				_ = tc.Close()
			}
			return false
		}
	}
	return closeAfter <= 0
}
