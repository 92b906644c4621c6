package netloop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// testTimeout bounds every wait in these tests; they normally take
// milliseconds.
const testTimeout = 10 * time.Second

// logBuffer collects a server's log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// lines returns the log lines that contain every one of parts.
func (l *logBuffer) lines(parts ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
next:
	for _, line := range strings.Split(l.buf.String(), "\n") {
		for _, p := range parts {
			if !strings.Contains(line, p) {
				continue next
			}
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}

// answerHandler answers every request at once: ApiVersions through the
// wire package, anything else with a body-less response carrying the
// correlation id.
type answerHandler struct{}

func (answerHandler) Handle(req *wire.Request) { req.Reply(answer(req)) }

func answer(req *wire.Request) *wire.Response {
	if req.Header.APIKey == wire.KeyApiVersions {
		return wire.EncodeResponse(req, wire.HandleApiVersions(req))
	}
	return corrOnly(req.Header.CorrelationID)
}

// corrOnly is a response frame of just a correlation id.
func corrOnly(corr int32) *wire.Response {
	b := make([]byte, 8)
	binary.BigEndian.PutUint32(b, 4)
	binary.BigEndian.PutUint32(b[4:], uint32(corr))
	return &wire.Response{Chunks: []wire.Chunk{{Bytes: b}}}
}

// holdHandler hands every request to the test, which replies when it
// wants. Handle does not block (the channel is large).
type holdHandler struct{ reqs chan *wire.Request }

func newHoldHandler() *holdHandler { return &holdHandler{reqs: make(chan *wire.Request, 4096)} }

func (h *holdHandler) Handle(req *wire.Request) { h.reqs <- req }

func (h *holdHandler) next(t *testing.T) *wire.Request {
	t.Helper()
	select {
	case r := <-h.reqs:
		return r
	case <-time.After(testTimeout):
		t.Fatal("no request reached the handler")
		return nil
	}
}

// handlerFunc adapts a function to Handler.
type handlerFunc func(*wire.Request)

func (f handlerFunc) Handle(r *wire.Request) { f(r) }

// startServer starts a server on a free loopback port and shuts it down
// at the end of the test. Logs go to the returned buffer.
func startServer(t testing.TB, cfg Config, h Handler) (*Server, *logBuffer) {
	t.Helper()
	s, logs := newServer(t, cfg, h)
	if err := s.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	shutdownAtEnd(t, s)
	return s, logs
}

// shutdownAtEnd shuts s down when the test ends (t.Context is already
// cancelled by then, so it has its own deadline).
func shutdownAtEnd(t testing.TB, s *Server) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
}

func newServer(t testing.TB, cfg Config, h Handler) (*Server, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	if cfg.Listeners == nil {
		cfg.Listeners = []string{"127.0.0.1:0"}
	}
	if cfg.EventLoops == 0 {
		cfg.EventLoops = 2
	}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := New(cfg, h)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s, logs
}

// requestFrame encodes req as a size-prefixed request frame.
func requestFrame(req kmsg.Request, corr int32, clientID string) []byte {
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)).AppendRequest(nil, req, corr)
}

func apiVersionsFrame(corr int32) []byte {
	r := kmsg.NewPtrApiVersionsRequest()
	r.Version = 0
	return requestFrame(r, corr, "test-client")
}

func metadataFrame(corr int32) []byte {
	r := kmsg.NewPtrMetadataRequest()
	r.Version = 1
	return requestFrame(r, corr, "test-client")
}

// client is a raw Kafka-framing test client.
type client struct {
	t testing.TB
	net.Conn
	r *bufio.Reader
}

func dial(t testing.TB, addr net.Addr) *client {
	t.Helper()
	return dialFrom(t, addr, "")
}

// dialFrom dials from a given local IP (another loopback address), or
// the default when ip is "".
func dialFrom(t testing.TB, addr net.Addr, ip string) *client {
	t.Helper()
	d := net.Dialer{Timeout: testTimeout}
	if ip != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(ip)}
	}
	c, err := d.Dial("tcp", addr.String())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, Conn: c, r: bufio.NewReader(c)}
}

func (c *client) send(frames ...[]byte) {
	c.t.Helper()
	_ = c.SetWriteDeadline(time.Now().Add(testTimeout))
	if _, err := c.Write(bytes.Join(frames, nil)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// recv reads one response frame and returns its correlation id and the
// rest.
func (c *client) recv() (int32, []byte) {
	c.t.Helper()
	corr, rest, err := c.tryRecv()
	if err != nil {
		c.t.Fatalf("read response: %v", err)
	}
	return corr, rest
}

func (c *client) tryRecv() (int32, []byte, error) {
	_ = c.SetReadDeadline(time.Now().Add(testTimeout))
	var size [4]byte
	if _, err := io.ReadFull(c.r, size[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 64<<20 {
		return 0, nil, errors.New("bad response size")
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.r, b); err != nil {
		return 0, nil, err
	}
	return int32(binary.BigEndian.Uint32(b)), b[4:], nil
}

// expectClosed waits until the server closes the connection.
func (c *client) expectClosed() {
	c.t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(testTimeout))
	_, err := io.Copy(io.Discard, c.r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatal("the server did not close the connection")
	}
}

// roundTrip sends one ApiVersions request and checks its answer.
func (c *client) roundTrip(corr int32) {
	c.t.Helper()
	c.send(apiVersionsFrame(corr))
	got, body := c.recv()
	if got != corr {
		c.t.Fatalf("correlation id %d, want %d", got, corr)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	if err := resp.ReadFrom(body); err != nil || resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		c.t.Fatalf("bad ApiVersions response: err %v, code %d, %d keys", err, resp.ErrorCode, len(resp.ApiKeys))
	}
}

// stopped shuts s down and returns its final counters: the writer
// counts a response after its last byte is written, which may be after
// the client has read it.
func stopped(t testing.TB, s *Server) Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	return s.Stats()
}

// pollUntil checks cond every millisecond until it holds (true) or
// testTimeout passes (false). It is for the one state no event reports to
// a test: a writer parked in Go's netpoller waiting for room on a full
// socket, known only by Stats.WriteWaits (or the socket's waits counter)
// having moved. Wait for anything else on a channel (waitSignal, the
// server's test hooks); a hook in socket.waitWritable would retire this.
func pollUntil(cond func() bool) bool {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(testTimeout)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			return false
		}
	}
	return true
}

// waitSignal waits for one value on ch.
func waitSignal[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testTimeout):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}
