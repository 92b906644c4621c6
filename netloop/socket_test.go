package netloop

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"os"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/samsa-io/samsa/wire"
)

// bigAnswer answers every request with size bytes of data (by bytes or
// as a file region), counting Done calls and signalling each on done.
type bigAnswer struct {
	data  []byte
	file  wire.RegionFile // nil: the data goes as bytes
	dones atomic.Int32
	done  chan struct{} // nil, or buffered for every Done the test awaits
}

func (h *bigAnswer) Handle(req *wire.Request) {
	hdr := binary.BigEndian.AppendUint32(nil, uint32(4+len(h.data)))
	hdr = binary.BigEndian.AppendUint32(hdr, uint32(req.Header.CorrelationID))
	body := wire.Chunk{Bytes: h.data}
	if h.file != nil {
		body = wire.Chunk{File: h.file, Length: int64(len(h.data))}
	}
	req.Reply(&wire.Response{Chunks: []wire.Chunk{{Bytes: hdr}, body}, Done: func() {
		h.dones.Add(1)
		if h.done != nil {
			h.done <- struct{}{}
		}
	}})
}

// A response larger than the socket can hold, to a client that starts
// reading late, makes the writer wait for room (in Go's netpoller, on a
// registered dup) and arrives whole, by writev and by sendfile alike. The
// dup is dropped once the response is written, so later inbound packets
// wake no one but the loop.
func TestWriteWaitsForRoomThenDropsWaiter(t *testing.T) {
	f, data := writeTempFile(t, 16<<20)
	for _, tc := range []struct {
		name string
		file wire.RegionFile
	}{{"bytes", nil}, {"sendfile", osRegion{f}}} {
		t.Run(tc.name, func(t *testing.T) {
			h := &bigAnswer{data: data, file: tc.file, done: make(chan struct{}, 2)}
			s, _ := startServer(t, Config{}, h)
			c := dial(t, s.Addrs()[0])
			_ = c.Conn.(*net.TCPConn).SetReadBuffer(64 << 10)
			c.send(metadataFrame(7))
			waitForWriteWait(t, s) // the writer filled the socket and parked
			corr, body, err := c.tryRecv()
			if err != nil || corr != 7 || !bytes.Equal(body, data) {
				t.Fatalf("correlation id %d, %d bytes, err %v; want 7 and the %d bytes", corr, len(body), err, len(data))
			}
			// The connection still serves.
			c.send(metadataFrame(8))
			if corr, body, err := c.tryRecv(); err != nil || corr != 8 || len(body) != len(data) {
				t.Fatalf("second response: correlation id %d, %d bytes, err %v", corr, len(body), err)
			}
			// Done runs after the batch's waiter is dropped.
			waitSignal(t, h.done, "Done of the first response")
			waitSignal(t, h.done, "Done of the second response")
			s.mu.Lock()
			for cn := range s.conns {
				cn.mu.Lock()
				if sock := cn.sock; sock != nil {
					sock.mu.Lock()
					if sock.waiter != nil {
						t.Error("the waiter is still registered after the write")
					}
					sock.mu.Unlock()
				}
				cn.mu.Unlock()
			}
			s.mu.Unlock()
		})
	}
}

// A client that hangs up while the writer waits for room on its socket
// releases the writer: the response is dropped and released, and the
// server shuts down without waiting for it.
func TestWriteWaitBrokenByHangUp(t *testing.T) {
	_, data := writeTempFile(t, 16<<20)
	h := &bigAnswer{data: data}
	closed := make(chan struct{}, 1)
	s, _ := newServer(t, Config{}, h)
	s.hooks.afterClose = func() { closed <- struct{}{} }
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	c := dial(t, s.Addrs()[0])
	_ = c.Conn.(*net.TCPConn).SetReadBuffer(64 << 10)
	c.send(metadataFrame(1))
	waitForWriteWait(t, s)
	// Read a little, so the hang-up is a reset the server notices.
	if _, err := io.ReadFull(c.r, make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	waitSignal(t, closed, "the server to notice the hang-up")
	st := stopped(t, s) // Shutdown waits for every writer to exit
	if st.ConnectionsOpen != 0 || h.dones.Load() != 1 {
		t.Fatalf("open connections %d, Done called %d times; want 0 and 1", st.ConnectionsOpen, h.dones.Load())
	}
}

func waitForWriteWait(t *testing.T, s *Server) {
	t.Helper()
	if !pollUntil(func() bool { return s.Stats().WriteWaits > 0 }) {
		t.Fatal("the writer never waited for room")
	}
}

// writev takes more slices than IOV_MAX by writing them in several calls,
// skips empty ones, and waits for room when the peer reads slowly.
func TestSocketWritevManySlices(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	var waits atomic.Uint64
	s := newSocket(fds[0], &waits)
	peer := os.NewFile(uintptr(fds[1]), "peer")
	defer peer.Close()

	var want []byte
	iov := make([][]byte, 3000)
	for i := range iov {
		iov[i] = bytes.Repeat([]byte{byte(i)}, i%700) // empty ones too, the first among them
		want = append(want, iov[i]...)
	}
	got := make(chan []byte, 1)
	go func() {
		// Read only once the writer has filled the socket and waits for
		// room. If it never does, read anyway: the check below fails.
		pollUntil(func() bool { return waits.Load() > 0 })
		b, _ := io.ReadAll(peer)
		got <- b
	}()
	n, err := s.writev(iov)
	s.dropWaiter()
	s.close()
	if err != nil || n != len(want) {
		t.Fatalf("writev: %d bytes, %v; want %d", n, err, len(want))
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("the peer read %d bytes, not the %d written in order", len(b), len(want))
	}
	if waits.Load() == 0 {
		t.Fatal("the write never waited for room; the test did not fill the socket")
	}
}
