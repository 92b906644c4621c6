package netloop

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/binary"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/netloop/tlsconf"
	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
	"github.com/samsa-io/samsa/wire"
)

// tlsFixture is a CA, a server certificate and what a test needs to make
// a TLS listener and its clients.
type tlsFixture struct {
	ca     *tlstest.CA
	server *tlstest.Cert
	rules  tlsconf.Rules // ssl.principal.mapping.rules
}

func newTLSFixture(t testing.TB) *tlsFixture {
	t.Helper()
	ca := tlstest.NewCA(t)
	return &tlsFixture{ca: ca, server: ca.Server(t), rules: tlsconf.DefaultRules}
}

// listener is a TLS listener with auth as its client authentication and
// principals mapped by the fixture's rules, as the broker makes them.
func (f *tlsFixture) listener(auth tls.ClientAuthType) *TLSListener {
	return &TLSListener{
		Config:    &tls.Config{Certificates: []tls.Certificate{f.server.TLS()}, ClientAuth: auth, ClientCAs: f.ca.Pool},
		Principal: tlsconf.PrincipalOf(f.rules),
	}
}

// tlsConfig is cfg with its one listener made a TLS one.
func (f *tlsFixture) tlsConfig(cfg Config, auth tls.ClientAuthType) Config {
	cfg.TLS = []*TLSListener{f.listener(auth)}
	return cfg
}

// dial connects a TLS client presenting cert (nil: none).
func (f *tlsFixture) dial(t testing.TB, addr net.Addr, cert *tlstest.Cert) *client {
	t.Helper()
	raw := dial(t, addr)
	tc := tls.Client(raw.Conn, tlstest.ClientConfig(f.ca, cert))
	return &client{t: t, Conn: tc, r: bufio.NewReader(tc)}
}

// Responses on a TLS connection leave in request order whatever order
// the handler answers in, and every request carries the connection's
// session: its listener and the principal mapped from the client's
// certificate (ssl.principal.mapping.rules over its RFC 2253 subject),
// set before the first request was handed on.
func TestTLSResponsesInOrderWithThePrincipal(t *testing.T) {
	f := newTLSFixture(t)
	rules, err := tlsconf.ParseRules("RULE:^CN=(.*?),OU=ServiceUsers,.*$/svc-$1/L,DEFAULT")
	if err != nil {
		t.Fatal(err)
	}
	f.rules = rules
	h := newHoldHandler()
	cfg := f.tlsConfig(Config{ListenerNames: []string{"SSL"}}, tls.RequireAndVerifyClientCert)
	s, _ := startServer(t, cfg, h)
	svc := f.dial(t, s.Addrs()[0], f.ca.Client(t, pkix.Name{CommonName: "Mirror", OrganizationalUnit: []string{"ServiceUsers"}, Organization: []string{"acme"}}))
	svc.send(metadataFrame(9))
	if r := h.next(t); r.Session.Principal() != "User:svc-mirror" {
		t.Fatalf("principal %q, want User:svc-mirror", r.Session.Principal())
	}
	alice := f.ca.Client(t, pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"acme"}})
	c := f.dial(t, s.Addrs()[0], alice)
	c.send(metadataFrame(1), metadataFrame(2), metadataFrame(3))
	reqs := []*wire.Request{h.next(t), h.next(t), h.next(t)}
	for _, r := range reqs {
		if r.Session.Listener != "SSL" || r.Session.Principal() != "User:CN=alice,OU=eng,O=acme" {
			t.Fatalf("session %q %q, want SSL and User:CN=alice,OU=eng,O=acme", r.Session.Listener, r.Session.Principal())
		}
	}
	for i := len(reqs) - 1; i >= 0; i-- {
		reqs[i].Reply(corrOnly(reqs[i].Header.CorrelationID))
	}
	for want := int32(1); want <= 3; want++ {
		if got, _ := c.recv(); got != want {
			t.Fatalf("correlation id %d, want %d", got, want)
		}
	}
}

// A client without a certificate on a listener that does not ask for one
// stays anonymous.
func TestTLSWithoutClientCertificateIsAnonymous(t *testing.T) {
	f := newTLSFixture(t)
	h := newHoldHandler()
	s, _ := startServer(t, f.tlsConfig(Config{}, tls.VerifyClientCertIfGiven), h)
	c := f.dial(t, s.Addrs()[0], nil)
	c.send(metadataFrame(1))
	r := h.next(t)
	if p := r.Session.Principal(); p != wire.AnonymousPrincipal {
		t.Fatalf("principal %q", p)
	}
	r.Reply(corrOnly(1))
	c.recv()
}

// A plaintext client on a TLS port is refused: its connection is closed
// with one log line, nothing reaches the handler, and the listener keeps
// serving TLS clients.
func TestTLSRefusesPlaintextClient(t *testing.T) {
	f := newTLSFixture(t)
	s, logs := startServer(t, f.tlsConfig(Config{}, tls.NoClientCert), answerHandler{})
	good := f.dial(t, s.Addrs()[0], nil)
	good.roundTrip(1)

	plain := dial(t, s.Addrs()[0])
	plain.send(apiVersionsFrame(7))
	plain.expectClosed()
	if len(logs.lines("TLS handshake failed")) != 1 {
		t.Fatalf("want one handshake failure line; log:\n%s", logs.buf.String())
	}
	good.roundTrip(2)
	f.dial(t, s.Addrs()[0], nil).roundTrip(3)
	if st := stopped(t, s); st.TLSHandshakeFailures != 1 || st.Requests != 3 {
		t.Fatalf("handshake failures %d, requests %d; want 1 and 3", st.TLSHandshakeFailures, st.Requests)
	}
}

// ssl.client.auth=required: a client without a certificate, or with one
// from another CA, gets no answer and its connection is closed.
func TestTLSClientAuthRequired(t *testing.T) {
	f := newTLSFixture(t)
	s, _ := startServer(t, f.tlsConfig(Config{}, tls.RequireAndVerifyClientCert), answerHandler{})
	stranger := tlstest.NewCA(t).Client(t, pkix.Name{CommonName: "mallory"})
	for _, cert := range []*tlstest.Cert{nil, stranger} {
		c := f.dial(t, s.Addrs()[0], cert)
		_ = c.SetDeadline(time.Now().Add(testTimeout))
		if _, err := c.Write(apiVersionsFrame(1)); err == nil {
			if _, _, err := c.tryRecv(); err == nil {
				t.Fatal("a client without a trusted certificate was answered")
			}
		}
	}
	f.dial(t, s.Addrs()[0], f.ca.Client(t, pkix.Name{CommonName: "alice"})).roundTrip(2)
	if st := stopped(t, s); st.TLSHandshakeFailures != 2 || st.Requests != 1 {
		t.Fatalf("handshake failures %d, requests %d; want 2 and 1", st.TLSHandshakeFailures, st.Requests)
	}
}

// MaxInFlightPerConn bounds a TLS connection too: past it the reader
// stops, and resumes when a response is written.
func TestTLSBackpressureInFlight(t *testing.T) {
	f := newTLSFixture(t)
	h := newHoldHandler()
	s, _ := startServer(t, f.tlsConfig(Config{MaxInFlightPerConn: 2}, tls.NoClientCert), h)
	c := f.dial(t, s.Addrs()[0], nil)
	c.send(metadataFrame(1), metadataFrame(2), metadataFrame(3))
	r1, r2 := h.next(t), h.next(t)
	if !pollUntil(func() bool { return s.Stats().Mutes == 1 }) {
		t.Fatal("the connection was not held at its in-flight bound")
	}
	if len(h.reqs) != 0 {
		t.Fatal("a third request was handed on past the bound")
	}
	r1.Reply(corrOnly(1))
	r3 := h.next(t)
	r2.Reply(corrOnly(2))
	r3.Reply(corrOnly(3))
	for want := int32(1); want <= 3; want++ {
		if got, _ := c.recv(); got != want {
			t.Fatalf("correlation id %d, want %d", got, want)
		}
	}
}

// A large request arrives whole through TLS records, takes its size from
// queued.max.request.bytes while it is read and gives it back.
func TestTLSLargeFrame(t *testing.T) {
	f := newTLSFixture(t)
	h := newHoldHandler()
	s, _ := startServer(t, f.tlsConfig(Config{}, tls.NoClientCert), h)
	c := f.dial(t, s.Addrs()[0], nil)
	records := bytes.Repeat([]byte("0123456789abcdef"), (3<<20)/16)
	c.send(produceFrame(1, records))
	r := h.next(t)
	got := r.Body.(*kmsg.ProduceRequest).Topics[0].Partitions[0].Records
	if !bytes.Equal(got, records) {
		t.Fatalf("records differ: %d bytes, want %d", len(got), len(records))
	}
	if q := s.Stats().QueuedBytes; q != 0 {
		t.Fatalf("%d bytes of queued.max.request.bytes still held", q)
	}
	r.ReleaseFrame()
	r.Reply(corrOnly(1))
	c.recv()
}

// A frame size out of range closes a TLS connection before any body is
// read, as on plaintext.
func TestTLSFrameSizeOutOfRange(t *testing.T) {
	f := newTLSFixture(t)
	s, _ := startServer(t, f.tlsConfig(Config{MaxRequestBytes: 1 << 20}, tls.NoClientCert), answerHandler{})
	c := f.dial(t, s.Addrs()[0], nil)
	c.send([]byte{0x7f, 0xff, 0xff, 0xff})
	c.expectClosed()
	if st := stopped(t, s); st.FramesRejected != 1 {
		t.Fatalf("frames rejected %d", st.FramesRejected)
	}
}

// Record data leaves a TLS listener by copy (sendfile cannot encrypt):
// every byte of the file regions is copied, none sent by sendfile, and
// concurrent connections reading one file get their own bytes.
func TestTLSFileRegionsByCopy(t *testing.T) {
	fx := newTLSFixture(t)
	file, data := writeTempFile(t, 4<<20)
	h := &regionHandler{file: osRegion{file}, size: int64(len(data))}
	s, _ := startServer(t, fx.tlsConfig(Config{}, tls.NoClientCert), h)
	want := runRegionClientsWith(t, func() *client { return fx.dial(t, s.Addrs()[0], nil) }, data, 3, 4)
	st := stopped(t, s)
	if st.BytesCopied != want || st.BytesSendfile != 0 {
		t.Fatalf("copied %d, sendfile %d; want %d copied", st.BytesCopied, st.BytesSendfile, want)
	}
	if h.dones.Load() != 3*4 {
		t.Fatalf("Done called %d times", h.dones.Load())
	}
}

// Shutdown waits for a TLS connection's requests in flight, writes their
// answers, then closes it.
func TestTLSShutdownFinishesRequestsInFlight(t *testing.T) {
	f := newTLSFixture(t)
	h := newHoldHandler()
	s, _ := newServer(t, f.tlsConfig(Config{}, tls.NoClientCert), h)
	draining := make(chan struct{})
	s.hooks.draining = func() { close(draining) }
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	c := f.dial(t, s.Addrs()[0], nil)
	c.send(metadataFrame(1))
	r := h.next(t)
	var returned atomic.Bool
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		err := s.Shutdown(ctx)
		returned.Store(true)
		done <- err
	}()
	waitSignal(t, draining, "Shutdown to begin")
	if returned.Load() {
		t.Fatal("Shutdown returned with a request unanswered")
	}
	r.Reply(corrOnly(1))
	if got, _ := c.recv(); got != 1 {
		t.Fatalf("correlation id %d", got)
	}
	if err := waitSignal(t, done, "Shutdown"); err != nil {
		t.Fatal(err)
	}
	c.expectClosed()
	if st := s.Stats(); st.ConnectionsOpen != 0 || st.Responses != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// connections.max.idle.ms and the request read timeout apply to TLS
// connections: an idle one is closed, and so is one whose request stops
// half way.
func TestTLSIdleAndSlowRequestsClosed(t *testing.T) {
	f := newTLSFixture(t)
	cfg := f.tlsConfig(Config{ConnectionsMaxIdle: 50 * time.Millisecond, RequestReadTimeout: 200 * time.Millisecond}, tls.NoClientCert)
	s, _ := startServer(t, cfg, answerHandler{})
	idle := f.dial(t, s.Addrs()[0], nil)
	idle.roundTrip(1)
	idle.expectClosed()
	slow := f.dial(t, s.Addrs()[0], nil)
	slow.send(metadataFrame(2)[:2])
	slow.expectClosed()
	if st := stopped(t, s); st.ConnectionsIdleClosed != 1 || st.RequestTimeouts != 1 {
		t.Fatalf("idle closed %d, request timeouts %d; want 1 and 1", st.ConnectionsIdleClosed, st.RequestTimeouts)
	}
}

// max.connections.per.ip counts TLS connections.
func TestTLSConnectionLimit(t *testing.T) {
	f := newTLSFixture(t)
	s, _ := startServer(t, f.tlsConfig(Config{MaxConnectionsPerIP: 1}, tls.NoClientCert), answerHandler{})
	first := f.dial(t, s.Addrs()[0], nil)
	first.roundTrip(1)
	second := dial(t, s.Addrs()[0])
	second.expectClosed()
	first.roundTrip(2)
	if st := s.Stats(); st.ConnectionsRefused != 1 {
		t.Fatalf("refused %d", st.ConnectionsRefused)
	}
}

// A request that does not decode closes its TLS connection with one log
// line; a panicking handler costs only its connection.
func TestTLSBadRequestAndPanic(t *testing.T) {
	f := newTLSFixture(t)
	h := handlerFunc(func(req *wire.Request) {
		if req.Header.CorrelationID == 66 {
			panic("boom")
		}
		req.Reply(answer(req))
	})
	s, _ := startServer(t, f.tlsConfig(Config{}, tls.NoClientCert), h)
	bad := f.dial(t, s.Addrs()[0], nil)
	bad.send(rawFrame(9999, 0, 3, "x"))
	bad.expectClosed()
	panicky := f.dial(t, s.Addrs()[0], nil)
	panicky.send(apiVersionsFrame(66))
	panicky.expectClosed()
	f.dial(t, s.Addrs()[0], nil).roundTrip(1)
	if st := stopped(t, s); st.DecodeErrors != 1 || st.HandlerPanics != 1 {
		t.Fatalf("decode errors %d, panics %d", st.DecodeErrors, st.HandlerPanics)
	}
}

// queued.max.request.bytes is shared with TLS connections: a large
// request that does not fit waits, unread, until one being received
// completes.
func TestTLSLargeFrameWaitsForBudget(t *testing.T) {
	f := newTLSFixture(t)
	h := newHoldHandler()
	s, _ := startServer(t, f.tlsConfig(Config{QueuedMaxRequestBytes: 3 << 20}, tls.NoClientCert), h)
	first := produceFrame(1, make([]byte, 2<<20))
	a := f.dial(t, s.Addrs()[0], nil)
	a.send(first[:256<<10]) // past its first 64 KiB: it holds its size
	if !pollUntil(func() bool { return s.Stats().QueuedBytes > 0 }) {
		t.Fatal("the first request took no budget")
	}
	b := f.dial(t, s.Addrs()[0], nil)
	b.send(produceFrame(2, make([]byte, 2<<20)))
	if !pollUntil(func() bool { return s.Stats().BudgetWaits == 1 }) {
		t.Fatal("the second request did not wait for budget")
	}
	a.send(first[256<<10:])
	r1, r2 := h.next(t), h.next(t)
	if r1.Header.CorrelationID != 1 || r2.Header.CorrelationID != 2 {
		t.Fatalf("requests %d then %d, want 1 then 2", r1.Header.CorrelationID, r2.Header.CorrelationID)
	}
	r1.Reply(corrOnly(1))
	r2.Reply(corrOnly(2))
	a.recv()
	b.recv()
	if q := s.Stats().QueuedBytes; q != 0 {
		t.Fatalf("%d bytes of budget still held", q)
	}
}

// A certificate that no mapping rule applies to is refused: the
// connection closes before any request is handed on.
func TestTLSNoMappingRuleApplies(t *testing.T) {
	f := newTLSFixture(t)
	rules, err := tlsconf.ParseRules("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/")
	if err != nil {
		t.Fatal(err)
	}
	f.rules = rules
	s, logs := startServer(t, f.tlsConfig(Config{}, tls.RequireAndVerifyClientCert), answerHandler{})
	c := f.dial(t, s.Addrs()[0], f.ca.Client(t, pkix.Name{CommonName: "alice"}))
	c.expectClosed() // the client's first read makes the handshake
	if st := stopped(t, s); st.Requests != 0 || len(logs.lines("no rule of ssl.principal.mapping.rules")) != 1 {
		t.Fatalf("requests %d; log:\n%s", st.Requests, logs.buf.String())
	}
}

// The sweep's check for requests nobody answers covers TLS connections.
func TestTLSUnansweredRequestsAreReported(t *testing.T) {
	f := newTLSFixture(t)
	h := newHoldHandler()
	s, logs := startServer(t, f.tlsConfig(Config{UnansweredAfter: 200 * time.Millisecond}, tls.NoClientCert), h)
	c := f.dial(t, s.Addrs()[0], nil)
	c.send(apiVersionsFrame(1))
	forgotten := h.next(t)
	if !pollUntil(func() bool { return s.Stats().Unanswered == 1 }) {
		t.Fatalf("a TLS request left without an answer was never reported: %+v", s.Stats())
	}
	if lines := logs.lines("no answer for too long", "requests=1"); len(lines) != 1 {
		t.Fatalf("log lines: %q", lines)
	}
	forgotten.Reply(answer(forgotten))
	c.recv()
}

// MaxOutboundBytes bounds a TLS connection too: a client that pipelines
// requests for large answers and does not read holds the reader at the
// bound (the writer is stuck on the full socket), and once it reads, every
// answer arrives, in order.
func TestTLSBackpressureOutbound(t *testing.T) {
	const respSize = 1 << 20
	payload := make([]byte, respSize)
	f := newTLSFixture(t)
	h := handlerFunc(func(req *wire.Request) {
		hdr := corrOnly(req.Header.CorrelationID).Chunks[0].Bytes
		binary.BigEndian.PutUint32(hdr, 4+respSize)
		req.Reply(&wire.Response{Chunks: []wire.Chunk{{Bytes: hdr}, {Bytes: payload}}})
	})
	s, _ := startServer(t, f.tlsConfig(Config{MaxOutboundBytes: 256 << 10}, tls.NoClientCert), h)
	c := f.dial(t, s.Addrs()[0], nil)
	var frames [][]byte
	for i := range int32(16) {
		frames = append(frames, metadataFrame(i))
	}
	c.send(frames...)
	if !pollUntil(func() bool { return s.Stats().Mutes >= 1 }) {
		t.Fatal("the connection was never held at its outbound bound")
	}
	for want := range int32(16) {
		if got, body := c.recv(); got != want || len(body) != respSize {
			t.Fatalf("response %d: correlation id %d, %d bytes", want, got, len(body))
		}
	}
}

// A request held longer than connections.max.idle.ms keeps its TLS
// connection open (it is not idle while a request is in flight), and
// the connection is closed once it has been idle after the answer.
func TestTLSRequestInFlightIsNotIdle(t *testing.T) {
	f := newTLSFixture(t)
	h := newHoldHandler()
	s, _ := newServer(t, f.tlsConfig(Config{ConnectionsMaxIdle: 20 * time.Millisecond}, tls.NoClientCert), h)
	var checks atomic.Int64
	s.hooks.tlsIdleCheck = func() { checks.Add(1) }
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, s)
	c := f.dial(t, s.Addrs()[0], nil)
	c.send(metadataFrame(1))
	r := h.next(t)
	// Wait through several idle periods with the request held: the
	// reader's idle checks must find it in flight and leave the
	// connection open.
	deadline := time.After(200 * time.Millisecond)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case <-deadline:
			break wait
		case <-tick.C:
			if s.Stats().ConnectionsIdleClosed != 0 {
				t.Fatal("a connection with a request in flight was closed as idle")
			}
		}
	}
	// One check per idle period, not a spin: 200 ms is 10 periods.
	if n := checks.Load(); n > 100 {
		t.Fatalf("%d idle checks in 200 ms with a 20 ms idle timeout: the reader spins", n)
	}
	r.Reply(corrOnly(1))
	if got, _ := c.recv(); got != 1 {
		t.Fatalf("correlation id %d", got)
	}
	c.expectClosed()
	if st := s.Stats(); st.ConnectionsIdleClosed != 1 {
		t.Fatalf("idle closed %d", st.ConnectionsIdleClosed)
	}
}
