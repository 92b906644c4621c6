package netloop

import (
	"encoding/binary"
	"errors"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/samsa-io/samsa/wire"
)

// A client that pipelines requests and never reads its responses cannot
// make the broker's memory grow: the connection stops being decoded at its
// bounds, its socket stops being read, and TCP pushes back until the
// client's own writes block.
func TestBackpressureClientNeverReads(t *testing.T) {
	const (
		respSize    = 64 << 10
		maxInFlight = 4
	)
	payload := make([]byte, respSize)
	h := handlerFunc(func(req *wire.Request) {
		hdr := corrOnly(req.Header.CorrelationID).Chunks[0].Bytes
		// The size prefix covers the correlation id and the payload.
		binary.BigEndian.PutUint32(hdr, 4+respSize)
		req.Reply(&wire.Response{Chunks: []wire.Chunk{{Bytes: hdr}, {Bytes: payload}}})
	})
	s, _ := startServer(t, Config{MaxInFlightPerConn: maxInFlight, MaxOutboundBytes: 256 << 10}, h)

	heapBefore := heapInUse()
	c := dial(t, s.Addrs()[0])
	tc := c.Conn.(*net.TCPConn)
	_ = tc.SetReadBuffer(64 << 10) // fixed size: no receive-window autotuning

	// Each request is 1 KiB (a Metadata request padded with trailing
	// bytes kmsg ignores), each answer 64 KiB.
	frame := metadataFrame(1)
	frame = append(frame, make([]byte, 1024-len(frame))...)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	batch := make([]byte, 0, 64*len(frame))
	for range 64 {
		batch = append(batch, frame...)
	}

	// Write until a write makes no progress for a second: the server has
	// stopped reading. If it kept reading (buffering without bound), the
	// client could write without end; give up after 256 MiB.
	const giveUp = 256 << 20
	sent := 0
	for {
		_ = tc.SetWriteDeadline(time.Now().Add(time.Second))
		n, err := tc.Write(batch)
		sent += n
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			break
		}
		if err != nil {
			t.Fatalf("write: %v", err)
		}
		if sent > giveUp {
			t.Fatalf("the client wrote %d MiB without being pushed back", sent>>20)
		}
	}
	st := s.Stats()
	decoded := st.Requests
	// Written responses sit in the server's send buffer (tcp_wmem max
	// 4 MiB) and the client's 64 KiB receive buffer; beyond those only
	// maxInFlight more may be decoded.
	bound := uint64(maxInFlight + (4<<20+256<<10)/respSize + 8)
	if decoded > bound {
		t.Fatalf("%d requests decoded, want at most %d", decoded, bound)
	}
	if st.Mutes == 0 {
		t.Fatal("the connection was never muted")
	}
	if sent > 64<<20 {
		t.Fatalf("the client wrote %d MiB before being pushed back", sent>>20)
	}
	// The kernel buffers what was sent; the broker's heap must not hold it.
	if grew := heapInUse() - heapBefore; grew > 32<<20 {
		t.Fatalf("heap grew by %d MiB", grew>>20)
	}
	t.Logf("client sent %d KiB before blocking; %d requests decoded, %d responses written, %d mutes",
		sent>>10, decoded, st.Responses, st.Mutes)

	// Reading drains the connection, which is then decoded again.
	if err := c.SetReadDeadline(time.Now().Add(testTimeout)); err != nil {
		t.Fatal(err)
	}
	for i := 0; s.Stats().Requests <= decoded; i++ {
		if _, _, err := c.tryRecv(); err != nil {
			t.Fatalf("after %d responses: %v", i, err)
		}
	}
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// A client whose connection is paused (never reads, kept sending) and
// then hangs up is noticed and cleaned up: the paused socket still
// reports the hang-up.
func TestPausedConnectionHangUp(t *testing.T) {
	closed := make(chan struct{}, 4)
	payload := make([]byte, 256<<10)
	h := handlerFunc(func(req *wire.Request) {
		hdr := binary.BigEndian.AppendUint32(nil, uint32(4+len(payload)))
		hdr = binary.BigEndian.AppendUint32(hdr, uint32(req.Header.CorrelationID))
		req.Reply(&wire.Response{Chunks: []wire.Chunk{{Bytes: hdr}, {Bytes: payload}}})
	})
	s, _ := newServer(t, Config{MaxInFlightPerConn: 2}, h)
	s.hooks.afterClose = func() { closed <- struct{}{} }
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, s)
	c := dial(t, s.Addrs()[0])
	_ = c.Conn.(*net.TCPConn).SetReadBuffer(64 << 10)
	frame := metadataFrame(1)
	for {
		_ = c.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
		if _, err := c.Write(frame); err != nil {
			break // pushed back: the server stopped reading
		}
	}
	if s.Stats().Mutes == 0 {
		t.Fatal("never muted")
	}
	c.Close()
	waitSignal(t, closed, "the server to notice the hang-up")
	st := stopped(t, s)
	if st.ConnectionsOpen != 0 || st.RepliesDropped == 0 {
		t.Fatalf("stats %+v", st)
	}
}
