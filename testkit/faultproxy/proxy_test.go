package faultproxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// echoServer echoes every line it receives and reports each connection's
// end (nil for a clean EOF) on ends.
type echoServer struct {
	ln   net.Listener
	ends chan error
	wg   sync.WaitGroup
}

func startEcho(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{ln: ln, ends: make(chan error, 64)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				_, err := io.Copy(c, c)
				s.ends <- err
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *echoServer) addr() string { return s.ln.Addr().String() }

func newProxy(t *testing.T, target string) *Proxy {
	t.Helper()
	p, err := New(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip sends a line and reads it back.
func roundTrip(c net.Conn, line string) (string, error) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSuffix(got, "\n"), err
}

// expectBroken reads from c and requires a reset or an end of stream, not
// data and not a timeout.
func expectBroken(t *testing.T, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(make([]byte, 16))
	if err == nil {
		t.Fatalf("read %d bytes from a connection that should be broken", n)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open (read timed out) where a cut was expected")
	}
}

// expectRefused connects to addr and requires the connection to be reset:
// either connect itself fails (the reset came before the kernel reported
// the connection established) or the first read does.
func expectRefused(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("dial %s: %v, want success or ECONNRESET", addr, err)
		}
		return
	}
	defer c.Close()
	expectBroken(t, c)
}

func waitStats(t *testing.T, p *Proxy, ok func(Stats) bool) Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := p.WaitStats(ctx, ok)
	if err != nil {
		t.Fatalf("proxy stats never reached the expected state: %+v", s)
	}
	return s
}

func TestForwardsBothWays(t *testing.T) {
	echo := startEcho(t)
	p := newProxy(t, echo.addr())
	if p.Target() != echo.addr() {
		t.Errorf("Target() = %q, want %q", p.Target(), echo.addr())
	}
	var conns []net.Conn
	for range 3 {
		conns = append(conns, dial(t, p.Addr()))
	}
	for i, c := range conns {
		big := strings.Repeat("x", 200<<10) + string(rune('a'+i))
		got, err := roundTrip(c, big)
		if err != nil || got != big {
			t.Fatalf("conn %d: echo of %d bytes came back as %d bytes, err %v", i, len(big), len(got), err)
		}
	}
	if s := p.Stats(); s.Accepted != 3 || s.Open != 3 || s.Cut != 0 || s.Refused != 0 {
		t.Errorf("stats %+v, want 3 accepted and open", s)
	}
}

func TestCutAllResetsBothSides(t *testing.T) {
	echo := startEcho(t)
	p := newProxy(t, echo.addr())
	a, b := dial(t, p.Addr()), dial(t, p.Addr())
	for _, c := range []net.Conn{a, b} {
		if _, err := roundTrip(c, "hello"); err != nil {
			t.Fatal(err)
		}
	}
	if n := p.CutAll(); n != 2 {
		t.Fatalf("CutAll cut %d connections, want 2", n)
	}
	// Client side: reset.
	for _, c := range []net.Conn{a, b} {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := c.Read(make([]byte, 1))
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("client read after cut: %v, want ECONNRESET", err)
		}
	}
	// Server side: both echo connections ended with an error (a reset).
	for range 2 {
		select {
		case err := <-echo.ends:
			if err == nil {
				t.Errorf("target saw a clean close, want a reset")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the target's connection survived CutAll")
		}
	}
	if s := waitStats(t, p, func(s Stats) bool { return s.Open == 0 }); s.Cut != 2 {
		t.Errorf("stats %+v, want 2 cut", s)
	}
	// The proxy still accepts new connections after a cut.
	c := dial(t, p.Addr())
	if got, err := roundTrip(c, "again"); err != nil || got != "again" {
		t.Fatalf("after cut: %q, %v", got, err)
	}
}

func TestSetDownRefusesNewButKeepsOpen(t *testing.T) {
	echo := startEcho(t)
	p := newProxy(t, echo.addr())
	open := dial(t, p.Addr())
	if _, err := roundTrip(open, "before"); err != nil {
		t.Fatal(err)
	}
	p.SetDown(true)
	expectRefused(t, p.Addr())
	waitStats(t, p, func(s Stats) bool { return s.Refused == 1 })
	if got, err := roundTrip(open, "during"); err != nil || got != "during" {
		t.Fatalf("open connection while down: %q, %v", got, err)
	}
	p.SetDown(false)
	c := dial(t, p.Addr())
	if got, err := roundTrip(c, "after"); err != nil || got != "after" {
		t.Fatalf("after SetDown(false): %q, %v", got, err)
	}
	if s := p.Stats(); s.Accepted != 2 || s.Refused != 1 {
		t.Errorf("stats %+v, want 2 accepted, 1 refused", s)
	}
}

func TestHalfCloseIsForwarded(t *testing.T) {
	echo := startEcho(t)
	p := newProxy(t, echo.addr())
	c := dial(t, p.Addr()).(*net.TCPConn)
	if _, err := io.WriteString(c, "tail"); err != nil {
		t.Fatal(err)
	}
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	// The echo server sees EOF, echoes what it had and closes; we read
	// the echo and then a clean EOF.
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "tail" {
		t.Fatalf("read %q, %v; want \"tail\" then EOF", got, err)
	}
	select {
	case err := <-echo.ends:
		if err != nil {
			t.Errorf("target saw %v, want a clean EOF", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("target never saw the half-close")
	}
	s := waitStats(t, p, func(s Stats) bool { return s.Open == 0 })
	if s.ClientClosed != 1 || s.TargetClosed != 1 || s.Cut != 0 {
		t.Errorf("stats %+v, want one clean close from each side", s)
	}
}

func TestUnreachableTargetResetsClient(t *testing.T) {
	// Port 1 (tcpmux) is privileged and unused: nothing listens there. A
	// port just released would not do: the proxy's own listener could be
	// given it and dial itself.
	p := newProxy(t, "127.0.0.1:1")
	expectRefused(t, p.Addr())
	waitStats(t, p, func(s Stats) bool { return s.Refused == 1 && s.Accepted == 0 })
}

func TestTargetMayStartLater(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := newProxy(t, addr) // the target is not up yet
	if p.Addr() == addr {
		t.Skip("the proxy was given the target's released port")
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s was taken meanwhile: %v", addr, err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	c := dial(t, p.Addr())
	if _, err := io.WriteString(c, "x"); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-accepted:
		s.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the proxy did not dial the target that came up after New")
	}
}

func TestCloseEndsEverything(t *testing.T) {
	echo := startEcho(t)
	p, err := New(echo.addr())
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, p.Addr())
	if _, err := roundTrip(c, "x"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	expectBroken(t, c)
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		t.Error("the proxy still accepts connections after Close")
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
