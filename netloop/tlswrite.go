package netloop

import (
	"bufio"
	"io"
	"sync/atomic"

	"github.com/samsa-io/samsa/wire"
)

// tlsWriteBuffer gathers a batch's byte chunks into full TLS records (at
// most 16 KiB of plaintext each): written one by one, the small chunks of
// a response would each cost a record, a MAC and a system call.
const tlsWriteBuffer = 64 << 10

// deliver files resp under seq and wakes the writer. A reply for a closed
// connection is released at once. Any goroutine; it never writes, so the
// replier never waits on a TLS socket.
func (c *tlsConn) deliver(seq uint64, resp *wire.Response) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.srv.dropLate(resp)
		return
	}
	s := &c.slots[seq%uint64(len(c.slots))]
	s.resp, s.ready = resp, true
	c.outbound += memBytes(resp)
	c.throttle.filedLocked(resp)
	if seq == c.writeSeq {
		c.cond.Broadcast()
	}
	c.mu.Unlock()
}

// writeLoop is the connection's writer goroutine: it waits for the
// response with the next sequence number, takes it with every
// consecutive ready one, and writes them through the TLS connection:
// byte chunks gathered in a buffer, file regions copied (pread into a
// pooled buffer, then encrypted; sendfile cannot encrypt). When the
// connection closes it drops what is filed and exits.
func (c *tlsConn) writeLoop() {
	defer c.srv.writers.Done()
	bw := bufio.NewWriterSize(tlsWriter{c}, tlsWriteBuffer)
	var batch []*wire.Response
	for {
		c.mu.Lock()
		for !c.closed && !c.slots[c.writeSeq%uint64(len(c.slots))].ready {
			c.cond.Wait()
		}
		if c.closed {
			dropped := c.takeAllLocked()
			c.mu.Unlock()
			for _, r := range dropped {
				c.srv.stats.repliesDropped.Add(1)
				release(r)
			}
			return
		}
		batch = c.takeBatchLocked(batch[:0])
		c.mu.Unlock()
		err := c.writeBatch(bw, batch)
		c.finishBatch(batch, err)
		clear(batch)
	}
}

// takeBatchLocked moves the consecutive ready responses from the head of
// the ring into dst, up to one that closes the connection.
func (c *tlsConn) takeBatchLocked(dst []*wire.Response) []*wire.Response {
	n := uint64(len(c.slots))
	for k := range n {
		s := &c.slots[(c.writeSeq+k)%n]
		if !s.ready {
			break
		}
		dst = append(dst, s.resp)
		*s = slot{}
		if closesAfter(dst[len(dst)-1]) {
			break
		}
	}
	return dst
}

// takeAllLocked empties the ring after close and returns what was filed;
// requests never filed are finished by their late Reply.
func (c *tlsConn) takeAllLocked() []*wire.Response {
	out, count := drainRing(c.slots)
	c.inFlight -= count
	c.srv.finish(count)
	return out
}

// writeBatch writes the responses' chunks in order and flushes.
func (c *tlsConn) writeBatch(bw *bufio.Writer, batch []*wire.Response) error {
	for _, r := range batch {
		if r == nil {
			continue
		}
		for i := range r.Chunks {
			ch := &r.Chunks[i]
			if ch.File == nil {
				if _, err := bw.Write(ch.Bytes); err != nil {
					return err
				}
				continue
			}
			if err := c.copyRegion(bw, ch); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// copyRegion writes Length bytes of File from Position: read at an
// explicit offset (never the file's shared position), into a pooled
// buffer, then written.
func (c *tlsConn) copyRegion(bw *bufio.Writer, ch *wire.Chunk) error {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	pos, remaining := ch.Position, ch.Length
	for remaining > 0 {
		m := min(remaining, int64(len(buf)))
		n, err := ch.File.ReadAt(buf[:m], pos)
		if int64(n) < m {
			if err == nil || err == io.EOF {
				err = errShortFile
			}
			return err
		}
		if _, err := bw.Write(buf[:n]); err != nil {
			return err
		}
		c.srv.stats.bytesCopied.Add(uint64(n))
		pos += int64(n)
		remaining -= int64(n)
	}
	return nil
}

// finishBatch completes a written (or failed) batch: the order advances,
// the bounds drop (waking a reader that waits for room), and the
// responses are released. A write error, or a response that asked for
// it, closes the connection.
func (c *tlsConn) finishBatch(batch []*wire.Response, err error) {
	mem := 0
	closeAfter := false
	for _, r := range batch {
		mem += memBytes(r)
		closeAfter = closeAfter || closesAfter(r)
	}
	c.mu.Lock()
	c.writeSeq += uint64(len(batch))
	c.inFlight -= len(batch)
	c.outbound -= mem
	c.throttle.writtenLocked(batch, err == nil)
	c.cond.Broadcast()
	c.mu.Unlock()
	c.touch()
	for _, r := range batch {
		if r == nil {
			continue
		}
		if err != nil {
			c.srv.stats.repliesDropped.Add(1)
		} else {
			c.srv.stats.responses.Add(1)
		}
		release(r)
	}
	c.srv.finish(len(batch))
	if err != nil || closeAfter {
		c.close()
	}
}

// tlsWriter counts what reaches the TLS connection.
type tlsWriter struct{ c *tlsConn }

func (w tlsWriter) Write(p []byte) (int, error) {
	n, err := w.c.tc.Write(p)
	w.c.srv.stats.bytesWritten.Add(uint64(n))
	return n, err
}

// tlsReply is one request's Reply on a TLS connection: like reply, it
// files the response under the request's sequence number.
type tlsReply struct {
	c       *tlsConn
	seq     uint64
	apiKey  int16
	corr    int32
	replied atomic.Bool
}

func (r *tlsReply) send(resp *wire.Response) {
	if !r.replied.CompareAndSwap(false, true) {
		r.c.srv.secondReply(r.c.remote, r.apiKey, r.corr, resp)
		return
	}
	r.c.deliver(r.seq, resp)
}

func (r *tlsReply) abandon() {
	if r.replied.CompareAndSwap(false, true) {
		r.c.deliver(r.seq, nil)
	}
}
