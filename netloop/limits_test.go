package netloop

import (
	"crypto/tls"
	"testing"
)

// listener.name.<l>.max.connections caps one listener: at its limit it
// waits for one of its own connections to close, as at max.connections,
// while the other listeners keep accepting. The protected listener is
// held to its own limit too.
func TestListenerMaxConnections(t *testing.T) {
	closed := make(chan struct{}, 16)
	s, logs := newServer(t, Config{Listeners: []string{"127.0.0.1:0", "127.0.0.2:0"}, ListenerNames: []string{"EXTERNAL", "INTERNAL"},
		ProtectedListener: "INTERNAL", ListenerMaxConnections: map[string]int{"EXTERNAL": 1, "INTERNAL": 2}}, answerHandler{})
	s.hooks.afterClose = func() { closed <- struct{}{} }
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, s)
	external, internal := s.Addrs()[0], s.Addrs()[1]
	e1 := dial(t, external)
	e1.roundTrip(1)
	e2 := dial(t, external)
	e2.send(apiVersionsFrame(2))
	if !pollUntil(func() bool { return s.Stats().SlotWaits == 1 }) {
		t.Fatalf("EXTERNAL did not wait for a slot: %+v", s.Stats())
	}
	dial(t, internal).roundTrip(3)
	dial(t, internal).roundTrip(4)
	i3 := dial(t, internal)
	i3.send(apiVersionsFrame(5))
	if !pollUntil(func() bool { return s.Stats().SlotWaits == 2 }) {
		t.Fatalf("INTERNAL did not wait for a slot: %+v", s.Stats())
	}
	if st := s.Stats(); st.ConnectionsOpen != 3 || st.ConnectionsRefused != 0 {
		t.Fatalf("stats %+v", st)
	}
	if l := logs.lines("listener.name.EXTERNAL.max.connections reached", "limit=1"); len(l) != 1 {
		t.Fatalf("log lines %q", l)
	}
	e1.Close()
	waitSignal(t, closed, "the close")
	if corr, _ := e2.recv(); corr != 2 {
		t.Fatalf("the waiting connection's answer has correlation id %d", corr)
	}
	// INTERNAL still waits: EXTERNAL's freed slot is not its own.
	if st := s.Stats(); st.ConnectionsOpen != 3 {
		t.Fatalf("stats %+v", st)
	}
}

// The limits change while the server runs: a raised max.connections
// lets a waiting listener accept at once, a lowered one keeps the open
// connections and holds the next ones, and max.connections.per.ip and
// its overrides apply to the next connection.
func TestConnectionLimitsChangeLive(t *testing.T) {
	s, logs := startServer(t, Config{MaxConnections: 1}, answerHandler{})
	addr := s.Addrs()[0]
	a1 := dialFrom(t, addr, "127.0.0.1")
	a1.roundTrip(1)
	a2 := dialFrom(t, addr, "127.0.0.1")
	a2.send(apiVersionsFrame(2))
	if !pollUntil(func() bool { return s.Stats().SlotWaits == 1 }) {
		t.Fatalf("the listener did not wait for a slot: %+v", s.Stats())
	}
	if err := s.SetConnectionLimits(ConnectionLimits{Max: 10, PerIP: 2}); err != nil {
		t.Fatal(err)
	}
	if corr, _ := a2.recv(); corr != 2 {
		t.Fatalf("the waiting connection's answer has correlation id %d", corr)
	}
	a3 := dialFrom(t, addr, "127.0.0.1")
	a3.expectClosed()
	if l := logs.lines("connection refused", "max.connections.per.ip (2)", "127.0.0.1"); len(l) != 1 {
		t.Fatalf("log lines %q", l)
	}
	if err := s.SetConnectionLimits(ConnectionLimits{Max: 10, PerIP: 2, PerIPOverrides: map[string]int{"127.0.0.1": 3}}); err != nil {
		t.Fatal(err)
	}
	dialFrom(t, addr, "127.0.0.1").roundTrip(4)

	// Lowered under the open count: the open ones stay, the next waits.
	if err := s.SetConnectionLimits(ConnectionLimits{Max: 1}); err != nil {
		t.Fatal(err)
	}
	a1.roundTrip(5)
	b := dialFrom(t, addr, "127.0.0.2")
	b.send(apiVersionsFrame(6))
	if !pollUntil(func() bool { return s.Stats().SlotWaits == 2 }) {
		t.Fatalf("the listener did not wait for a slot: %+v", s.Stats())
	}
	if got := s.ConnectionLimits(); got.Max != 1 || got.PerIP != 0 || len(got.PerIPOverrides) != 0 {
		t.Fatalf("limits %+v", got)
	}
	if err := s.SetConnectionLimits(ConnectionLimits{Max: -1}); err == nil {
		t.Fatal("a negative limit was taken")
	}
	if err := s.SetConnectionLimits(ConnectionLimits{}); err != nil {
		t.Fatal(err)
	}
	if corr, _ := b.recv(); corr != 6 {
		t.Fatalf("the waiting connection's answer has correlation id %d", corr)
	}
}

// A TLS listener at its own max.connections waits for a slot before the
// handshake, as a plaintext one does.
func TestTLSListenerMaxConnections(t *testing.T) {
	f := newTLSFixture(t)
	closed := make(chan struct{}, 16)
	cfg := f.tlsConfig(Config{ListenerNames: []string{"SSL"}, ListenerMaxConnections: map[string]int{"SSL": 1}}, tls.NoClientCert)
	s, _ := newServer(t, cfg, answerHandler{})
	s.hooks.afterClose = func() { closed <- struct{}{} }
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, s)
	first := f.dial(t, s.Addrs()[0], nil)
	first.roundTrip(1)
	second := f.dial(t, s.Addrs()[0], nil)
	handshake := make(chan error, 1)
	go func() { handshake <- second.Conn.(*tls.Conn).Handshake() }()
	if !pollUntil(func() bool { return s.Stats().SlotWaits == 1 }) {
		t.Fatalf("the TLS listener did not wait for a slot: %+v", s.Stats())
	}
	select {
	case err := <-handshake:
		t.Fatalf("the handshake ended while the listener waited: %v", err)
	default:
	}
	first.Close()
	waitSignal(t, closed, "the close")
	if err := waitSignal(t, handshake, "the handshake"); err != nil {
		t.Fatalf("handshake: %v", err)
	}
	second.roundTrip(2)
	if st := s.Stats(); st.ConnectionsRefused != 0 || st.ConnectionsAccepted != 2 {
		t.Fatalf("stats %+v", st)
	}
}
