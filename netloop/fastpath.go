package netloop

import (
	"golang.org/x/sys/unix"

	"github.com/samsa-io/samsa/wire"
)

// The replier's fast path. Waking the writer goroutine for every response
// costs a goroutine handoff per round trip, which dominates small
// requests. So when a Reply files the next response in order and nobody
// holds the write token, the replying goroutine takes the token and tries
// one non-blocking writev of the ready responses itself, if they are
// small and made of bytes only. Whatever the socket does not take at once
// (EAGAIN, a partial write) is handed to the writer goroutine, which
// finishes it with blocking semantics; file regions and large responses
// always go through the writer. The replier never waits: the fast path is
// one non-blocking system call, made on gnet's own descriptor (fd), so an
// idle connection needs no other. OnClose waits for that call to end
// (conn.rawWriting) before gnet closes fd.

const (
	fastPathMaxBytes  = 64 << 10 // larger batches go to the writer
	fastPathMaxChunks = 64       // iovecs in the one writev
)

// handoff is a batch the fast path wrote in part; the writer writes iov,
// the rest, and completes the batch.
type handoff struct {
	batch []*wire.Response
	iov   [][]byte
}

// tryFastPathLocked is called by deliver, under mu, after filing the
// response at the head of the order. If the fast path applies it takes
// the token and the batch, releases mu and writes; otherwise it wakes the
// writer (if the token is free) and releases mu.
func (c *conn) tryFastPathLocked() {
	if c.writing || c.handoff != nil {
		c.mu.Unlock() // the token holder (or the writer, for the handoff) sees the new head
		return
	}
	if c.broken {
		c.wakeWriterLocked() // it discards what is filed
		c.mu.Unlock()
		return
	}
	// Take the longest run of ready responses from the head that fits.
	n := uint64(len(c.slots))
	size, chunks, k := 0, 0, uint64(0)
run:
	for ; k < n; k++ {
		s := &c.slots[(c.writeSeq+k)%n]
		if !s.ready {
			break
		}
		if s.resp == nil {
			continue
		}
		if s.resp.CloseAfter {
			// Only the responses before it go by the fast path; the
			// writer takes it (and closes) next.
			break
		}
		rs, rc := 0, 0
		for i := range s.resp.Chunks {
			if s.resp.Chunks[i].File != nil {
				break run
			}
			rs += len(s.resp.Chunks[i].Bytes)
			rc++
		}
		if size+rs > fastPathMaxBytes || chunks+rc > fastPathMaxChunks {
			break
		}
		size += rs
		chunks += rc
	}
	if k == 0 {
		c.wakeWriterLocked() // the writer takes it
		c.mu.Unlock()
		return
	}
	c.writing, c.rawWriting = true, true
	// Fresh slices: after finishBatch gives the token back, they may still
	// be read here or sit in a handoff.
	batch := make([]*wire.Response, 0, k)
	for i := uint64(0); i < k; i++ {
		s := &c.slots[(c.writeSeq+i)%n]
		batch = append(batch, s.resp)
		*s = slot{}
	}
	c.mu.Unlock()
	c.fastWrite(batch)
}

// fastWrite tries the one non-blocking writev; the caller holds the token.
func (c *conn) fastWrite(batch []*wire.Response) {
	iov := make([][]byte, 0, fastPathMaxChunks/4)
	total := 0
	for _, r := range batch {
		if r == nil {
			continue
		}
		for i := range r.Chunks {
			if b := r.Chunks[i].Bytes; len(b) > 0 {
				iov = append(iov, b)
				total += len(b)
			}
		}
	}
	written, err := tryWritev(c.fd, iov)
	c.srv.stats.bytesWritten.Add(uint64(written))
	c.mu.Lock()
	c.rawWriting = false
	closed := c.closed
	if closed {
		c.cond.Broadcast() // OnClose waits for this write to end
	}
	if err == nil && written == total {
		c.mu.Unlock()
		c.finishBatch(batch, nil)
		return
	}
	if err != nil && err != unix.EAGAIN {
		c.mu.Unlock()
		c.finishBatch(batch, err)
		return
	}
	if closed {
		c.mu.Unlock()
		c.finishBatch(batch, errClosedWhileWriting)
		return
	}
	// The socket took part of it: the writer finishes with blocking
	// semantics. The token is free, but no fast path runs while a handoff
	// is pending.
	c.writing = false
	c.handoff = &handoff{batch: batch, iov: advance(iov, written)}
	c.srv.stats.handoffs.Add(1)
	c.wakeWriterLocked()
	c.mu.Unlock()
	if h := c.srv.hooks.handoff; h != nil {
		h()
	}
}
