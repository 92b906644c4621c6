package netloop

import (
	"errors"
	"io"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/samsa-io/samsa/wire"
)

// copyBufSize is the buffer size of the copying path for file regions.
const copyBufSize = 64 << 10

var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// writeLoop is the connection's writer goroutine, started by
// wakeWriterLocked when there is something the fast path cannot write at
// once: a batch it wrote in part (handoff), file regions, large responses,
// a response after which the connection closes. Whoever holds the write
// token (conn.writing) is the only one writing to the socket. The writer
// takes the handoff, or the response with the next sequence number
// together with every consecutive ready one, writes them (byte chunks
// gathered into writev, file regions by sendfile or by copy) on its own
// dup of the socket and completes the batch (see finishBatch).
//
// It exits as soon as it has nothing to write, or the token is held by a
// fast-path write (whose finishBatch starts a writer again if more is
// ready): an idle connection then costs no goroutine, and the dup is
// closed with it, so one descriptor. The dup is made under mu while the
// connection is open, when gnet's descriptor is known to be this
// connection's; after OnClose the writer drops what is filed and closes
// the dup, which finally closes a socket gnet has let go of.
func (c *conn) writeLoop() {
	defer c.srv.writers.Done()
	var batch []*wire.Response
	var iov [][]byte
	for {
		c.mu.Lock()
		if c.closed || c.writing || (c.handoff == nil && !c.headReadyLocked()) {
			var dropped []*wire.Response
			if c.closed {
				dropped = c.takeAllLocked()
			}
			sock := c.sock
			c.sock, c.writerOn = nil, false
			c.mu.Unlock()
			c.drop(dropped)
			if sock != nil {
				sock.close()
			}
			return
		}
		broken := c.broken
		var dupErr error
		if c.sock == nil && !broken {
			var fd int
			fd, dupErr = unix.FcntlInt(uintptr(c.fd), unix.F_DUPFD_CLOEXEC, 0)
			if dupErr == nil {
				c.sock = newSocket(fd, &c.srv.stats.writeWaits)
			}
		}
		c.writing = true
		var rest [][]byte
		if h := c.handoff; h != nil {
			c.handoff = nil
			batch = append(batch[:0], h.batch...)
			rest = h.iov
		} else {
			batch = c.takeBatchLocked(batch[:0])
		}
		sock := c.sock
		c.mu.Unlock()

		var err error
		switch {
		case broken:
		case dupErr != nil:
			// Out of descriptors, typically: this connection cannot be
			// written to, the others carry on.
			c.srv.log.Error("netloop: closing connection: cannot get a descriptor to write its responses",
				"client", c.remote, "client_id", c.loopClientID(), "err", dupErr)
			err = dupErr
		case rest != nil:
			err = c.writev(sock, rest)
		default:
			iov, err = c.writeBatch(sock, batch, iov)
		}
		if sock != nil {
			sock.dropWaiter()
		}
		c.finishBatch(batch, err)
		clear(batch)
	}
}

// headReadyLocked reports whether the next response in order is filed.
func (c *conn) headReadyLocked() bool {
	return c.slots[c.writeSeq%uint64(len(c.slots))].ready
}

// takeBatchLocked moves the consecutive ready responses from the head of
// the ring into dst.
func (c *conn) takeBatchLocked(dst []*wire.Response) []*wire.Response {
	n := uint64(len(c.slots))
	for k := uint64(0); k < n; k++ {
		s := &c.slots[(c.writeSeq+k)%n]
		if !s.ready {
			break
		}
		r := s.resp
		dst = append(dst, r)
		*s = slot{}
		if closesAfter(r) {
			break // nothing after it is written
		}
	}
	return dst
}

// closesAfter reports whether r asks for the connection to be closed once
// it is written.
func closesAfter(r *wire.Response) bool { return r != nil && r.CloseAfter }

// finishBatch completes a written (or failed) batch and gives the write
// token back: the order advances, the in-flight and outbound counts drop
// and, if the loop stopped decoding for backpressure and the connection
// is now below its bounds, the loop is woken to resume. A write error
// closes the connection; the rest is discarded until OnClose.
func (c *conn) finishBatch(batch []*wire.Response, err error) {
	mem := 0
	closeAfter := false
	for _, r := range batch {
		mem += memBytes(r)
		closeAfter = closeAfter || closesAfter(r)
	}
	c.mu.Lock()
	c.writing = false
	c.writeSeq += uint64(len(batch))
	c.inFlight -= len(batch)
	c.outbound -= mem
	brokenBefore := c.broken
	c.throttle.writtenLocked(batch, err == nil && !brokenBefore)
	if (err != nil || closeAfter) && !c.broken {
		// A write error, or a response that asked for the close: what
		// follows is discarded until OnClose.
		c.broken = true
		if !c.closed {
			_ = c.gc.Close()
		}
	}
	if c.muted && !c.closed && c.inFlight < len(c.slots) && c.outbound < c.srv.cfg.MaxOutboundBytes && !c.throttle.activeLocked(c.endThrottle) {
		c.muted = false
		_ = c.gc.Wake(nil) // OnTraffic resumes reading and decoding
	}
	if !c.closed && c.headReadyLocked() {
		c.wakeWriterLocked() // the token is free and there is more to write
	}
	// This batch was written unless the connection was already broken or
	// this write failed; a close it asked for does not undo it.
	broken := brokenBefore || err != nil
	c.mu.Unlock()

	c.touch()
	for _, r := range batch {
		if r == nil {
			continue
		}
		if broken {
			c.srv.stats.repliesDropped.Add(1)
		} else {
			c.srv.stats.responses.Add(1)
		}
		release(r)
	}
	c.srv.finish(len(batch))
}

// takeAllLocked empties the ring and the handoff after close and returns
// what was filed. Requests counted in flight but never filed are finished
// by their (late) Reply, which sees closed.
func (c *conn) takeAllLocked() []*wire.Response {
	out, count := drainRing(c.slots)
	if h := c.handoff; h != nil {
		c.handoff = nil
		count += len(h.batch)
		for _, r := range h.batch {
			if r != nil {
				out = append(out, r)
			}
		}
	}
	c.inFlight -= count
	c.srv.finish(count)
	return out
}

// drainRing empties a closed connection's reorder ring: it returns the
// responses filed there and how many slots were ready (Reply(nil) ones
// included).
func drainRing(slots []slot) (out []*wire.Response, ready int) {
	for i := range slots {
		if slots[i].ready {
			ready++
			if slots[i].resp != nil {
				out = append(out, slots[i].resp)
			}
			slots[i] = slot{}
		}
	}
	return out, ready
}

// drop releases responses that will never be written.
func (c *conn) drop(rs []*wire.Response) {
	for _, r := range rs {
		c.srv.stats.repliesDropped.Add(1)
		release(r)
	}
}

// writeBatch writes the responses' chunks in order. Byte chunks are
// gathered and written with one writev; a file region flushes them first.
// iov is scratch space, returned for reuse.
func (c *conn) writeBatch(sock *socket, batch []*wire.Response, iov [][]byte) ([][]byte, error) {
	iov = iov[:0]
	for _, r := range batch {
		if r == nil {
			continue
		}
		for i := range r.Chunks {
			ch := &r.Chunks[i]
			if ch.File == nil {
				if len(ch.Bytes) > 0 {
					iov = append(iov, ch.Bytes)
				}
				continue
			}
			if err := c.writev(sock, iov); err != nil {
				return iov[:0], err
			}
			iov = iov[:0]
			if err := c.writeRegion(sock, ch); err != nil {
				return iov, err
			}
		}
	}
	err := c.writev(sock, iov)
	clear(iov)
	return iov[:0], err
}

func (c *conn) writev(sock *socket, iov [][]byte) error {
	if len(iov) == 0 {
		return nil
	}
	n, err := sock.writev(iov)
	c.srv.stats.bytesWritten.Add(uint64(n))
	return err
}

// errClosedWhileWriting fails a batch whose connection closed mid-write.
var errClosedWhileWriting = errors.New("netloop: connection closed while writing")

// errShortFile means a file region reaches past the end of its file.
var errShortFile = errors.New("netloop: file region past end of file")

// writeRegion sends Length bytes of File from Position: by sendfile(2)
// when the file has a descriptor, else (or if the kernel refuses
// sendfile for that file) by reading into a pooled buffer and writing.
func (c *conn) writeRegion(sock *socket, ch *wire.Chunk) error {
	pos, remaining := ch.Position, ch.Length
	if fd, ok := ch.File.SysFd(); ok {
		sent, err := sendfile(sock, fd, pos, remaining)
		c.srv.stats.bytesSendfile.Add(uint64(sent))
		c.srv.stats.bytesWritten.Add(uint64(sent))
		if err == nil {
			return nil
		}
		if !errors.Is(err, errSendfileUnsupported) {
			return err
		}
		pos += sent
		remaining -= sent
	}
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	for remaining > 0 {
		m := int64(len(buf))
		if remaining < m {
			m = remaining
		}
		n, err := ch.File.ReadAt(buf[:m], pos)
		if int64(n) < m {
			if err == nil || err == io.EOF {
				err = errShortFile
			}
			return err
		}
		w, err := sock.writev([][]byte{buf[:n]})
		c.srv.stats.bytesCopied.Add(uint64(w))
		c.srv.stats.bytesWritten.Add(uint64(w))
		if err != nil {
			return err
		}
		pos += int64(n)
		remaining -= int64(n)
	}
	return nil
}
