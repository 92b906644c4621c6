package netloop

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// max.connections.per.ip refuses extra connections with a log line; at
// max.connections the listener stops accepting until a connection
// closes, as Kafka's acceptor waits for a slot: the waiting connection
// is served then. The others keep working.
func TestConnectionLimits(t *testing.T) {
	closed := make(chan struct{}, 16)
	s, logs := newServer(t, Config{MaxConnections: 3, MaxConnectionsPerIP: 2}, answerHandler{})
	s.hooks.afterClose = func() { closed <- struct{}{} }
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, s)
	addr := s.Addrs()[0]
	a1 := dialFrom(t, addr, "127.0.0.1")
	a1.roundTrip(1)
	a2 := dialFrom(t, addr, "127.0.0.1")
	a2.roundTrip(2)

	a3 := dialFrom(t, addr, "127.0.0.1")
	a3.expectClosed()
	if l := logs.lines("connection refused", "max.connections.per.ip (2)", "127.0.0.1"); len(l) != 1 {
		t.Fatalf("log lines %q", l)
	}

	b1 := dialFrom(t, addr, "127.0.0.2")
	b1.roundTrip(3)
	c1 := dialFrom(t, addr, "127.0.0.3")
	c1.send(apiVersionsFrame(4))
	if !pollUntil(func() bool { return s.Stats().SlotWaits == 1 }) {
		t.Fatalf("the listener did not wait for a slot: %+v", s.Stats())
	}
	if st := s.Stats(); st.ConnectionsRefused != 1 || st.ConnectionsOpen != 3 || st.ConnectionsAccepted != 3 {
		t.Fatalf("stats %+v", st)
	}
	// A closed connection frees its place: the waiting one is served.
	a1.Close()
	waitSignal(t, closed, "the close")
	if corr, _ := c1.recv(); corr != 4 {
		t.Fatalf("the waiting connection's answer has correlation id %d", corr)
	}
}

// The protected (inter-broker) listener is spared max.connections.
func TestProtectedListenerSparedMaxConnections(t *testing.T) {
	s, _ := startServer(t, Config{Listeners: []string{"127.0.0.1:0", "127.0.0.2:0"}, ListenerNames: []string{"EXTERNAL", "INTERNAL"},
		ProtectedListener: "INTERNAL", MaxConnections: 1}, answerHandler{})
	external, internal := s.Addrs()[0], s.Addrs()[1]
	dial(t, external).roundTrip(1)
	dial(t, internal).roundTrip(2)
	dial(t, internal).roundTrip(3)
	if st := s.Stats(); st.ConnectionsOpen != 3 || st.SlotWaits != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// connections.max.idle.ms closes a connection with no traffic, but not
// one with a request in flight.
func TestIdleConnectionsClosed(t *testing.T) {
	h := newHoldHandler()
	s, _ := startServer(t, Config{ConnectionsMaxIdle: 150 * time.Millisecond}, h)
	idle := dial(t, s.Addrs()[0])
	busy := dial(t, s.Addrs()[0])
	busy.send(metadataFrame(1))
	req := h.next(t)
	idle.expectClosed() // takes about 150 ms
	// busy had its request in flight all along; it is still open.
	req.Reply(corrOnly(1))
	if got, _ := busy.recv(); got != 1 {
		t.Fatalf("correlation id %d", got)
	}
	if st := s.Stats(); st.ConnectionsIdleClosed != 1 {
		t.Fatalf("stats %+v", st)
	}
	busy.expectClosed() // idle in turn once answered
}

// Shutdown stops accepting, lets requests in flight be answered and
// written, then closes the connections.
func TestShutdownFinishesRequestsInFlight(t *testing.T) {
	h := newHoldHandler()
	draining := make(chan struct{})
	s, _ := newServer(t, Config{}, h)
	s.hooks.draining = func() { close(draining) }
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	c := dial(t, s.Addrs()[0])
	c.send(metadataFrame(1), metadataFrame(2))
	r1, r2 := h.next(t), h.next(t)

	var returned atomic.Bool
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		err := s.Shutdown(ctx)
		returned.Store(true)
		done <- err
	}()
	// New connections are refused from now on: the listener is closed.
	waitSignal(t, draining, "Shutdown to begin")
	if late, err := net.DialTimeout("tcp", s.Addrs()[0].String(), testTimeout); err == nil {
		late.Close()
		t.Fatal("a connection was accepted while shutting down")
	}

	r2.Reply(corrOnly(2))
	if returned.Load() {
		t.Fatal("Shutdown returned with a request unanswered")
	}
	r1.Reply(corrOnly(1))
	for want := int32(1); want <= 2; want++ {
		if got, _ := c.recv(); got != want {
			t.Fatalf("correlation id %d, want %d", got, want)
		}
	}
	if err := waitSignal(t, done, "Shutdown"); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	c.expectClosed()
	if st := s.Stats(); st.Requests != 2 || st.ConnectionsOpen != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// Shutdown is bounded by its context even when a request is never
// answered; the late answer is then dropped and released.
func TestShutdownBoundedByContext(t *testing.T) {
	h := newHoldHandler()
	s, _ := startServer(t, Config{}, h)
	c := dial(t, s.Addrs()[0])
	c.send(metadataFrame(1))
	req := h.next(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := s.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v, want deadline exceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Shutdown took %v", d)
	}
	c.expectClosed()
	var released atomic.Int32
	req.Reply(withDone(corrOnly(1), &released))
	s.writers.Wait() // the connection's writer has exited
	if released.Load() != 1 {
		t.Fatalf("Done called %d times, want 1", released.Load())
	}
}
