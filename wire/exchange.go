package wire

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// RequestHeader is a decoded Kafka request header (v1 or v2).
type RequestHeader struct {
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
	ClientID      string // a null client id reads as ""
}

// Request is one decoded request, handed by netloop to the broker. It is
// owned by the receiver; Body may alias Frame (kmsg keeps record bytes as
// sub-slices of the frame), so Frame must not be reused while Body is alive.
type Request struct {
	Header     RequestHeader
	Body       kmsg.Request
	Frame      []byte // the whole request frame without its size prefix
	ClientAddr string // "ip:port" of the client, for logs
	// Session is the connection's: its listener and principal, shared by
	// every request of the connection. nil (an anonymous client) where
	// no connection stands behind the request (tests, in-process calls).
	Session *Session
	// Decoded is when netloop decoded the frame (zero where no netloop
	// stands behind the request): the start of its queue time in the
	// broker's request metrics.
	Decoded time.Time
	// Remote is how long the handler waited on others before answering
	// (a produce for durability and the ISR, a fetch parked for
	// min_bytes): Kafka's RemoteTime, set by the handler before it calls
	// Reply and read by the broker's request metrics.
	Remote time.Duration

	// Reply delivers the response. It must be called exactly once per
	// request, from any goroutine; a nil *Response means "no response"
	// (acks=0 produce) and only advances the connection's response order.
	Reply func(*Response)

	// FrameRelease, when set by whoever read the frame, takes the frame's
	// buffer back for reuse. Call it through ReleaseFrame.
	FrameRelease func()
}

// ReleaseFrame hands Frame's buffer back to its owner for reuse (netloop
// pools the buffers of large frames). Call it only when nothing refers to
// Frame or to the byte slices of Body any more, for a produce request once
// every partition has appended (and so copied) its records; afterwards
// neither may be read. It is optional: a frame never released is garbage
// collected, so a path that cannot be sure (a request that timed out while
// partitions may still hold its records) simply does not call it.
func (r *Request) ReleaseFrame() {
	if f := r.FrameRelease; f != nil {
		r.FrameRelease = nil
		r.Frame = nil
		f()
	}
}

// Response is an encoded response ready for the socket: the size prefix,
// the response header and the body, as a list of chunks written in order.
// A chunk is either bytes or a region of a file (record data that a
// plaintext listener sends with sendfile(2)).
type Response struct {
	Chunks []Chunk

	// Done, when set, is called once after every chunk has been written
	// or the connection has gone away; it releases what the chunks
	// borrowed (pooled buffers, file references).
	Done func()

	// CloseAfter closes the connection once this response's chunks (if
	// any) and every earlier response are written; responses to later
	// requests are dropped. It is Kafka's answer to an acks=0 produce
	// that failed: such a client reads no responses, and a closed
	// connection is the only way it learns to refresh its metadata.
	CloseAfter bool

	// MuteFor, when positive, stops netloop from decoding the
	// connection's requests for that long once this response is written:
	// a client over its quota is throttled after its answer (KIP-219), so
	// a client that honours throttle_time_ms never notices, and one that
	// does not is held back all the same.
	MuteFor time.Duration
}

// Len is the total number of bytes the response puts on the socket.
func (r *Response) Len() int64 {
	var n int64
	for i := range r.Chunks {
		n += r.Chunks[i].Len()
	}
	return n
}

// ErrShortRegion is returned by AppendTo when a file region cannot be read
// in full.
var ErrShortRegion = errors.New("wire: file region shorter than its chunk")

// AppendTo appends every chunk's bytes to dst, reading file regions with
// ReadAt: the copying path (TLS listeners, tests).
func (r *Response) AppendTo(dst []byte) ([]byte, error) {
	for i := range r.Chunks {
		c := &r.Chunks[i]
		if c.File == nil {
			dst = append(dst, c.Bytes...)
			continue
		}
		if c.Length <= 0 {
			continue
		}
		at := len(dst)
		dst = grow(dst, int(c.Length))[:at+int(c.Length)]
		n, err := c.File.ReadAt(dst[at:], c.Position)
		if n < int(c.Length) {
			if err == nil || err == io.EOF {
				err = ErrShortRegion
			}
			return dst[:at], fmt.Errorf("wire: chunk %d (%d bytes at %d): %w", i, c.Length, c.Position, err)
		}
	}
	return dst, nil
}

// Chunk is one piece of a response: Bytes, or, when File is set, Length
// bytes of File starting at Position.
type Chunk struct {
	Bytes    []byte
	File     RegionFile
	Position int64
	Length   int64
}

// Len is the number of bytes the chunk contributes.
func (c *Chunk) Len() int64 {
	if c.File != nil {
		return c.Length
	}
	return int64(len(c.Bytes))
}

// RegionFile is a file that record data can be sent from. ReadAt serves the
// copying path (TLS, tests); SysFd returns the operating-system file
// descriptor for sendfile(2), or ok=false when the file has none (an
// in-memory test file), in which case the writer copies.
type RegionFile interface {
	io.ReaderAt
	SysFd() (fd int, ok bool)
}
