package netloop

import (
	"encoding/binary"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// Responses leave in request order whatever order the handler answers in,
// and from whichever goroutines.
func TestResponsesInRequestOrder(t *testing.T) {
	h := newHoldHandler()
	s, _ := startServer(t, Config{MaxInFlightPerConn: 32}, h)
	c := dial(t, s.Addrs()[0])
	const n = 32
	var frames [][]byte
	for i := int32(0); i < n; i++ {
		frames = append(frames, metadataFrame(i))
	}
	c.send(frames...)
	reqs := make([]*wire.Request, n)
	for i := range reqs {
		reqs[i] = h.next(t)
	}
	// Answer in a shuffled order, each from its own goroutine, in waves
	// so that many answers really do arrive before earlier ones.
	order := rand.Perm(n)
	var wg sync.WaitGroup
	for _, i := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reqs[i].Reply(corrOnly(reqs[i].Header.CorrelationID))
		}()
	}
	wg.Wait()
	for i := int32(0); i < n; i++ {
		if got, _ := c.recv(); got != i {
			t.Fatalf("response %d has correlation id %d", i, got)
		}
	}
}

// The last request answered first: nothing may be written until the
// first is answered.
func TestReverseOrderReplies(t *testing.T) {
	h := newHoldHandler()
	s, _ := startServer(t, Config{}, h)
	c := dial(t, s.Addrs()[0])
	c.send(metadataFrame(1), metadataFrame(2), metadataFrame(3))
	r1, r2, r3 := h.next(t), h.next(t), h.next(t)
	r3.Reply(corrOnly(3))
	r2.Reply(corrOnly(2))
	if st := s.Stats(); st.Responses != 0 {
		t.Fatalf("%d responses written before the first request was answered", st.Responses)
	}
	r1.Reply(corrOnly(1))
	for want := int32(1); want <= 3; want++ {
		if got, _ := c.recv(); got != want {
			t.Fatalf("got correlation id %d, want %d", got, want)
		}
	}
}

// A request without a response (Reply(nil), like acks=0 produce) still
// advances the order.
func TestReplyNilAdvancesOrder(t *testing.T) {
	h := newHoldHandler()
	s, _ := startServer(t, Config{}, h)
	c := dial(t, s.Addrs()[0])
	c.send(metadataFrame(1), metadataFrame(2), metadataFrame(3))
	r1, r2, r3 := h.next(t), h.next(t), h.next(t)
	r3.Reply(corrOnly(3))
	r2.Reply(nil)
	r1.Reply(corrOnly(1))
	for _, want := range []int32{1, 3} {
		if got, _ := c.recv(); got != want {
			t.Fatalf("got correlation id %d, want %d", got, want)
		}
	}
	if st := stopped(t, s); st.Requests != 3 || st.Responses != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// Replies that arrive after their connection closed are dropped and
// their Done still runs exactly once; a second Reply is ignored.
func TestReplyAfterCloseCallsDone(t *testing.T) {
	closed := make(chan struct{}, 16)
	h := newHoldHandler()
	s, logs := newServer(t, Config{}, h)
	s.hooks.afterClose = func() { closed <- struct{}{} }
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, s)

	c := dial(t, s.Addrs()[0])
	c.send(metadataFrame(1), metadataFrame(2))
	r1, r2 := h.next(t), h.next(t)
	var done1, done2 atomic.Int32
	r2.Reply(withDone(corrOnly(2), &done2)) // filed, waiting for r1
	c.Close()
	waitSignal(t, closed, "the server to see the close")
	r1.Reply(withDone(corrOnly(1), &done1))
	r1.Reply(withDone(corrOnly(1), &done1)) // a handler bug: logged, released
	// The writer exits after the close; Shutdown waits for it.
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if done1.Load() != 2 || done2.Load() != 1 {
		t.Fatalf("Done calls: first request %d (two replies), second %d", done1.Load(), done2.Load())
	}
	if st := s.Stats(); st.RepliesDropped != 2 || st.Responses != 0 {
		t.Fatalf("stats %+v", st)
	}
	if l := logs.lines("Reply called twice"); len(l) != 1 {
		t.Fatalf("log lines %q", l)
	}
}

func withDone(r *wire.Response, n *atomic.Int32) *wire.Response {
	r.Done = func() { n.Add(1) }
	return r
}

// A handler that panics costs its connection, not the loop: other
// connections keep being served.
func TestHandlerPanicClosesOnlyItsConnection(t *testing.T) {
	h := handlerFunc(func(req *wire.Request) {
		if req.Header.ClientID == "boom" {
			panic("handler bug")
		}
		req.Reply(answer(req))
	})
	s, _ := startServer(t, Config{}, h)
	good := dial(t, s.Addrs()[0])
	good.roundTrip(1)
	bad := dial(t, s.Addrs()[0])
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 1
	bad.send(requestFrame(md, 9, "boom"))
	bad.expectClosed()
	good.roundTrip(2)
	if st := s.Stats(); st.HandlerPanics != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// Small responses go out through the replier's fast path; when the
// socket takes only part of one, the writer finishes it. Every byte must
// arrive, in order, either way. The handler answers from one goroutine of
// its own, one request at a time, as a partition actor would.
func TestFastPathHandoffKeepsBytesInOrder(t *testing.T) {
	const respSize = 24 << 10
	queue := make(chan *wire.Request, 1024)
	defer close(queue)
	go func() {
		for req := range queue {
			req.Reply(responseFor(req.Header.CorrelationID, respSize))
		}
	}()
	h := handlerFunc(func(req *wire.Request) { queue <- req })
	handedOff := make(chan struct{}, 1)
	s, _ := newServer(t, Config{}, h)
	s.hooks.handoff = func() {
		select {
		case handedOff <- struct{}{}:
		default:
		}
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, s)
	c := dial(t, s.Addrs()[0])
	// A fixed receive buffer (no autotuning up to tcp_rmem's 32 MiB), so
	// that the responses fill the socket.
	_ = c.Conn.(*net.TCPConn).SetReadBuffer(256 << 10)
	const n = 400
	var frames [][]byte
	for i := int32(0); i < n; i++ {
		frames = append(frames, metadataFrame(i))
	}
	c.send(frames...)
	// Read nothing until the socket has refused part of a fast-path write.
	waitSignal(t, handedOff, "a fast-path write to be handed to the writer")
	for i := int32(0); i < n; i++ {
		corr, body := c.recv()
		if corr != i || len(body) != respSize {
			t.Fatalf("response %d: correlation id %d, %d bytes", i, corr, len(body))
		}
		for j, v := range body {
			if v != byte(int(corr)+j+8) {
				t.Fatalf("response %d: byte %d is %d", i, j, v)
			}
		}
	}
	st := stopped(t, s)
	t.Logf("%d handoffs, %d mutes", st.Handoffs, st.Mutes)
}

// responseFor is a response frame of size bytes after the correlation id,
// byte i of the frame being corr+i, in two chunks.
func responseFor(corr int32, size int) *wire.Response {
	b := make([]byte, 8+size)
	binary.BigEndian.PutUint32(b, uint32(4+size))
	binary.BigEndian.PutUint32(b[4:], uint32(corr))
	for i := 8; i < len(b); i++ {
		b[i] = byte(int(corr) + i)
	}
	return &wire.Response{Chunks: []wire.Chunk{{Bytes: b[:100]}, {Bytes: b[100:]}}}
}
