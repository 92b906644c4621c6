package netloop

import (
	"errors"
	"io"
	"net"
	"sync"

	"github.com/samsa-io/samsa/wire"
)

// copyBufSize is the buffer size of the copying path for file regions.
const copyBufSize = 64 << 10

var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// writeLoop is the connection's writer goroutine. It owns every write to
// the socket: it takes the responses that are ready in sequence order, as
// many consecutive ones as there are, writes them (byte chunks gathered
// into writev, file regions by sendfile or by copy), then advances the
// order, lowers the in-flight and outbound counts and, if the loop stopped
// decoding for backpressure and the connection is now below its bounds,
// wakes the loop. It exits when the connection is closed, releasing what
// is still filed.
func (c *conn) writeLoop() {
	defer c.srv.writers.Done()
	n := uint64(len(c.slots))
	batch := make([]*wire.Response, 0, n)
	iov := make([][]byte, 0, 16)
	for {
		c.mu.Lock()
		for !c.closed && !c.slots[c.writeSeq%n].ready {
			c.cond.Wait()
		}
		if c.closed {
			dropped := c.takeAllLocked()
			c.mu.Unlock()
			c.drop(dropped)
			return
		}
		batch = batch[:0]
		for k := uint64(0); k < n; k++ {
			s := &c.slots[(c.writeSeq+k)%n]
			if !s.ready {
				break
			}
			batch = append(batch, s.resp)
			*s = slot{}
		}
		broken := c.broken
		c.mu.Unlock()

		var err error
		if !broken {
			iov, err = c.writeBatch(batch, iov)
		}
		mem := 0
		for _, r := range batch {
			mem += memBytes(r)
		}

		c.mu.Lock()
		c.writeSeq += uint64(len(batch))
		c.inFlight -= len(batch)
		c.outbound -= mem
		if err != nil && !c.broken {
			c.broken = true
			if !c.closed {
				_ = c.gc.Close()
			}
		}
		if c.muted && !c.closed && c.inFlight < len(c.slots) && c.outbound < c.srv.cfg.MaxOutboundBytes {
			c.muted = false
			_ = c.gc.Wake(nil) // OnTraffic resumes reading and decoding
		}
		broken = c.broken
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
		clear(batch)
	}
}

// takeAllLocked empties the ring after close and returns what was filed.
func (c *conn) takeAllLocked() []*wire.Response {
	var out []*wire.Response
	count := 0
	for i := range c.slots {
		if c.slots[i].ready {
			count++
			if c.slots[i].resp != nil {
				out = append(out, c.slots[i].resp)
			}
			c.slots[i] = slot{}
		}
	}
	c.inFlight -= count
	// Requests counted in inFlight but never filed are finished by their
	// (late) Reply, which sees closed.
	c.srv.finish(count)
	return out
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
func (c *conn) writeBatch(batch []*wire.Response, iov [][]byte) ([][]byte, error) {
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
			if err := c.writev(iov); err != nil {
				return iov[:0], err
			}
			iov = iov[:0]
			if err := c.writeRegion(ch); err != nil {
				return iov, err
			}
		}
	}
	err := c.writev(iov)
	clear(iov)
	return iov[:0], err
}

func (c *conn) writev(iov [][]byte) error {
	if len(iov) == 0 {
		return nil
	}
	bufs := net.Buffers(iov)
	n, err := bufs.WriteTo(c.tc)
	c.srv.stats.bytesWritten.Add(uint64(n))
	return err
}

// errShortFile means a file region reaches past the end of its file.
var errShortFile = errors.New("netloop: file region past end of file")

// writeRegion sends Length bytes of File from Position: by sendfile(2)
// when the file has a descriptor, else (or if the kernel refuses
// sendfile for that file) by reading into a pooled buffer and writing.
func (c *conn) writeRegion(ch *wire.Chunk) error {
	pos, remaining := ch.Position, ch.Length
	if fd, ok := ch.File.SysFd(); ok {
		sent, err := sendfile(c.raw, fd, pos, remaining)
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
		w, err := c.tc.Write(buf[:n])
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
