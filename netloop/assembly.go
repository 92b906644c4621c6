package netloop

import "github.com/panjf2000/gnet/v2"

// assembleMin is the smallest frame read in pieces into its own buffer as
// it arrives. Smaller frames wait in gnet's inbound buffer until whole and
// are copied out once: they fit in one or two reads anyway. Larger ones
// (produce requests of hundreds of KiB to MiBs) would otherwise make
// gnet's ring grow to the frame's size, be copied again on each growth,
// and keep that memory for the connection's life.
const assembleMin = 64 << 10

// assembleMax bounds the buffer allocated up front, when only the frame's
// size is known. A connection assembles at most one frame at a time (its
// in-flight slot is taken when assembly starts), so a client that
// announces large frames and sends slowly pins at most this much; frames
// above it (up to socket.request.max.bytes) wait in gnet's buffer as
// small ones do.
const assembleMax = 16 << 20

// assembles reports whether a frame of size bytes is read in pieces.
func assembles(size int32) bool { return size >= assembleMin && size <= assembleMax }

// assembly is a frame whose size and sequence number are known and whose
// bytes are still arriving. It belongs to the connection's loop.
type assembly struct {
	seq    uint64
	frame  []byte
	filled int
}

// newAssembly starts a frame whose buffer (of the frame's length) is
// frame.
func newAssembly(seq uint64, frame []byte) *assembly {
	return &assembly{seq: seq, frame: frame}
}

// fill moves what gnet has buffered for the connection into the frame,
// then reads what the socket holds of the rest straight into it (no copy
// through gnet's read buffer), and reports whether it is complete. err is
// the socket's end or failure: the connection must close.
func (a *assembly) fill(gc gnet.Conn) (frame []byte, seq uint64, done bool, err error) {
	if n := min(gc.InboundBuffered(), len(a.frame)-a.filled); n > 0 {
		m, _ := gc.Read(a.frame[a.filled : a.filled+n])
		a.filled += m
	}
	if a.filled < len(a.frame) && gc.InboundBuffered() == 0 {
		// Only once gnet holds nothing more, so the bytes stay in order.
		// Never past the frame: what follows is read by gnet as usual.
		n, rerr := readDirect(gc.Fd(), a.frame[a.filled:])
		a.filled += n
		err = rerr
	}
	return a.frame, a.seq, a.filled == len(a.frame), err
}
