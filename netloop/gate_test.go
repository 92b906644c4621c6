package netloop

import (
	"net/netip"
	"sync"
	"testing"
	"time"
)

// scriptedGate answers each accepted connection by its address: refused
// ones get closeAfter, all get wait; it records what it heard.
type scriptedGate struct {
	mu         sync.Mutex
	refuse     netip.Addr
	wait       time.Duration
	closeAfter time.Duration
	heard      []string
}

func (g *scriptedGate) Accepted(listener string, ip netip.Addr, _ time.Time) (time.Duration, time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.heard = append(g.heard, listener+" "+ip.String())
	if ip == g.refuse {
		return g.wait, g.closeAfter
	}
	return g.wait, 0
}

// A connection the gate refuses is never served and is closed after the
// gate's delay; others are served, after the listener's wait. The gate
// hears the listener's name and the client's address.
func TestConnectionGate(t *testing.T) {
	g := &scriptedGate{refuse: netip.MustParseAddr("127.0.0.2"), wait: 20 * time.Millisecond, closeAfter: 50 * time.Millisecond}
	s, _ := startServer(t, Config{ListenerNames: []string{"EXTERNAL"}, ConnectionGate: g}, answerHandler{})
	addr := s.Addrs()[0]
	refused := dialFrom(t, addr, "127.0.0.2")
	refused.send(apiVersionsFrame(1))
	if _, _, err := refused.tryRecv(); err == nil {
		t.Fatal("a refused connection was answered")
	}
	dialFrom(t, addr, "127.0.0.1").roundTrip(2)
	st := s.Stats()
	if st.ConnectionsThrottled != 1 || st.AcceptThrottles != 2 || st.ConnectionsAccepted != 1 {
		t.Fatalf("stats %+v", st)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.heard) != 2 || g.heard[0] != "EXTERNAL 127.0.0.2" || g.heard[1] != "EXTERNAL 127.0.0.1" {
		t.Fatalf("the gate heard %q", g.heard)
	}
}

// max.connections.per.ip.overrides replaces max.connections.per.ip for
// its addresses, in either direction.
func TestConnectionsPerIPOverrides(t *testing.T) {
	s, logs := startServer(t, Config{MaxConnectionsPerIP: 1, MaxConnectionsPerIPOverrides: map[string]int{"127.0.0.2": 2, "127.0.0.3": 0}}, answerHandler{})
	addr := s.Addrs()[0]
	dialFrom(t, addr, "127.0.0.1").roundTrip(1)
	dialFrom(t, addr, "127.0.0.1").expectClosed()
	dialFrom(t, addr, "127.0.0.2").roundTrip(2)
	dialFrom(t, addr, "127.0.0.2").roundTrip(3)
	dialFrom(t, addr, "127.0.0.2").expectClosed()
	dialFrom(t, addr, "127.0.0.3").expectClosed()
	if l := logs.lines("connection refused", "max.connections.per.ip.overrides (2)", "127.0.0.2"); len(l) != 1 {
		t.Fatalf("log lines %q", l)
	}
	if l := logs.lines("connection refused", "max.connections.per.ip.overrides (0)", "127.0.0.3"); len(l) != 1 {
		t.Fatalf("log lines %q", l)
	}
}
