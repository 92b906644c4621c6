package netloop

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/samsa-io/samsa/wire"
)

// osRegion is a segment file as netloop sees it: ReadAt plus a descriptor.
type osRegion struct{ *os.File }

func (f osRegion) SysFd() (int, bool) { return int(f.Fd()), true }

// memRegion is a file without a descriptor (an in-memory test file).
type memRegion struct{ *bytes.Reader }

func (memRegion) SysFd() (int, bool) { return 0, false }

// regionHandler answers each Metadata request with a frame made of a
// header, a region of file (Position and Length from the correlation id)
// and a trailer, counting Done calls.
type regionHandler struct {
	file  wire.RegionFile
	size  int64
	dones atomic.Int32
}

const trailer = "-end-"

// regionFor picks a region of the file for a correlation id: offsets
// differ per request so concurrent sends from one file would garble each
// other if they shared a file position.
func regionFor(corr int32, size int64) (pos, length int64) {
	pos = int64(corr) * 4099 % (size / 2)
	return pos, size/2 - int64(corr)%1000
}

func (h *regionHandler) Handle(req *wire.Request) {
	corr := req.Header.CorrelationID
	pos, length := regionFor(corr, h.size)
	hdr := binary.BigEndian.AppendUint32(nil, uint32(4+length+int64(len(trailer))))
	hdr = binary.BigEndian.AppendUint32(hdr, uint32(corr))
	req.Reply(&wire.Response{
		Chunks: []wire.Chunk{
			{Bytes: hdr},
			{File: h.file, Position: pos, Length: length},
			{Bytes: []byte(trailer)},
		},
		Done: func() { h.dones.Add(1) },
	})
}

func writeTempFile(t *testing.T, size int) (*os.File, []byte) {
	t.Helper()
	data := make([]byte, size)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	path := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, data
}

// Record data leaves a plaintext listener by sendfile(2): what the writer
// sent by sendfile is exactly the file regions' length, and several
// connections sending from one open file at once each get their own
// bytes (explicit offsets, no shared file position).
func TestFileRegionsBySendfile(t *testing.T) {
	f, data := writeTempFile(t, 4<<20)
	h := &regionHandler{file: osRegion{f}, size: int64(len(data))}
	s, _ := startServer(t, Config{}, h)
	want := runRegionClients(t, s, data, 4, 8)
	st := s.Stats()
	if st.BytesSendfile != want || st.BytesCopied != 0 {
		t.Fatalf("sendfile %d bytes, copied %d; want %d by sendfile", st.BytesSendfile, st.BytesCopied, want)
	}
	// Done runs after the write; Shutdown waits for every request to finish.
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if h.dones.Load() != 4*8 {
		t.Fatalf("Done called %d times, want %d", h.dones.Load(), 4*8)
	}
}

// A file without a descriptor is copied, through the same chunk order.
func TestFileRegionsByCopy(t *testing.T) {
	_, data := writeTempFile(t, 1<<20)
	h := &regionHandler{file: memRegion{bytes.NewReader(data)}, size: int64(len(data))}
	s, _ := startServer(t, Config{}, h)
	want := runRegionClients(t, s, data, 2, 4)
	st := s.Stats()
	if st.BytesCopied != want || st.BytesSendfile != 0 {
		t.Fatalf("copied %d bytes, sendfile %d; want %d copied", st.BytesCopied, st.BytesSendfile, want)
	}
}

// A region past the end of its file breaks the connection (the frame
// could not be completed) and still releases the response.
func TestFileRegionPastEOF(t *testing.T) {
	f, data := writeTempFile(t, 1<<10)
	var dones atomic.Int32
	h := handlerFunc(func(req *wire.Request) {
		hdr := binary.BigEndian.AppendUint32(nil, 4+4096)
		hdr = binary.BigEndian.AppendUint32(hdr, uint32(req.Header.CorrelationID))
		req.Reply(&wire.Response{
			Chunks: []wire.Chunk{{Bytes: hdr}, {File: osRegion{f}, Position: 0, Length: 4096}},
			Done:   func() { dones.Add(1) },
		})
	})
	s, _ := startServer(t, Config{}, h)
	c := dial(t, s.Addrs()[0])
	c.send(metadataFrame(1))
	got, err := io.ReadAll(io.LimitReader(c.r, 1<<20))
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if len(got) != 8+len(data) || !bytes.Equal(got[8:], data) {
		t.Fatalf("got %d bytes before the close, want the header and the %d file bytes", len(got), len(data))
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if dones.Load() != 1 {
		t.Fatalf("Done called %d times", dones.Load())
	}
}

// runRegionClients runs conns connections that each pipeline perConn
// requests and check every response byte; it returns the total region
// bytes expected.
func runRegionClients(t *testing.T, s *Server, data []byte, conns, perConn int) uint64 {
	t.Helper()
	return runRegionClientsWith(t, func() *client { return dial(t, s.Addrs()[0]) }, data, conns, perConn)
}

// runRegionClientsWith is runRegionClients on connections made by dial.
func runRegionClientsWith(t *testing.T, dial func() *client, data []byte, conns, perConn int) uint64 {
	t.Helper()
	var total atomic.Uint64
	var wg sync.WaitGroup
	errs := make(chan string, conns*perConn)
	for ci := range conns {
		c := dial()
		wg.Add(1)
		go func() {
			defer wg.Done()
			var frames [][]byte
			for i := range perConn {
				frames = append(frames, metadataFrame(int32(ci*perConn+i)))
			}
			if _, err := c.Write(bytes.Join(frames, nil)); err != nil {
				errs <- err.Error()
				return
			}
			for i := range perConn {
				corr, body, err := c.tryRecv()
				if err != nil {
					errs <- err.Error()
					return
				}
				want := int32(ci*perConn + i)
				pos, length := regionFor(want, int64(len(data)))
				total.Add(uint64(length))
				if corr != want || !bytes.Equal(body[:length], data[pos:pos+length]) || string(body[length:]) != trailer {
					errs <- fmt.Sprintf("connection %d, response %d: correlation id %d or bytes wrong", ci, i, corr)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	return total.Load()
}
