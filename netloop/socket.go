package netloop

import (
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// socket is the writer goroutine's own descriptor of a connection's
// socket: a dup made when the writer starts (under the connection's mutex,
// while gnet's descriptor is still this connection's), non-blocking (the
// flag lives on the open file description gnet set up), written with
// plain system calls, closed when the writer exits.
//
// Why not a *net.TCPConn, as Go would have it: Go registers every
// descriptor it wraps with its netpoller for reading and writing, edge
// triggered. The dup shares the socket with gnet's descriptor, so every
// inbound packet then woke the runtime's netpoll thread as well as the
// gnet loop, for a read nobody was waiting for. On end-to-end traffic
// that was a fifth of the broker's context switches. So the descriptor
// stays unregistered, and only a write that would block registers a
// second dup (the waiter) to park on until the socket drains; the writer
// drops the waiter once its batch is written.
//
// Ownership: fd is the writer goroutine's: it writes it while it holds
// the connection's write token and closes it as it exits, so no write can
// reach a reused descriptor number. waiter is the writer goroutine's; mu orders its creation and
// closing against shutdown, which OnClose calls to break a wait on a
// client that does not read.
type socket struct {
	fd    int
	waits *atomic.Uint64 // Stats.WriteWaits

	mu       sync.Mutex
	waiter   *os.File // a registered dup while a write waits for room, or nil
	shutdown bool     // the connection closed: no more waiting
}

// maxIovecs is IOV_MAX on Linux and the BSDs: writev refuses more
// slices than that (EINVAL), so a longer list goes in several calls.
const maxIovecs = 1024

func newSocket(fd int, waits *atomic.Uint64) *socket { return &socket{fd: fd, waits: waits} }

// writev writes every byte of iov, waiting for room when the socket is
// full. It returns how many bytes it wrote. iov's slices are advanced in
// place past what was written.
func (s *socket) writev(iov [][]byte) (int, error) {
	written := 0
	// Every call starts with a non-empty slice, so it makes progress or
	// fails: a stream socket never takes 0 bytes of a non-empty write.
	for iov = advance(iov, 0); len(iov) > 0; {
		n, err := s.tryWritev(iov)
		written += n
		iov = advance(iov, n)
		switch {
		case err == unix.EAGAIN:
			if err := s.waitWritable(); err != nil {
				return written, err
			}
		case err != nil:
			return written, err
		}
	}
	return written, nil
}

// tryWritev makes one non-blocking writev and never waits: it returns
// what the socket took, and EAGAIN when it took nothing. A short count
// without an error means the socket took only part (or iov was longer
// than maxIovecs).
func (s *socket) tryWritev(iov [][]byte) (int, error) { return tryWritev(s.fd, iov) }

// tryWritev is socket.tryWritev on any descriptor: the fast path uses it
// on gnet's own.
func tryWritev(fd int, iov [][]byte) (int, error) {
	for {
		n, err := writev(fd, iov[:min(len(iov), maxIovecs)])
		if err != unix.EINTR {
			return max(n, 0), err
		}
	}
}

// advance drops the first n bytes of iov, and the empty slices that
// then lead it.
func advance(iov [][]byte, n int) [][]byte {
	for n > 0 && len(iov) > 0 {
		if n < len(iov[0]) {
			iov[0] = iov[0][n:]
			return iov
		}
		n -= len(iov[0])
		iov = iov[1:]
	}
	for len(iov) > 0 && len(iov[0]) == 0 {
		iov = iov[1:]
	}
	return iov
}

// waitWritable parks the goroutine in Go's netpoller until the socket
// has room, after a write returned EAGAIN. The first wait of a batch
// registers the waiter; an edge-triggered registration reports a socket
// that drained in between at once, so no wake-up is lost.
func (s *socket) waitWritable() error {
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		return errClosedWhileWriting
	}
	w := s.waiter
	if w == nil {
		fd, err := unix.FcntlInt(uintptr(s.fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			s.mu.Unlock()
			return err
		}
		w = os.NewFile(uintptr(fd), "socket") // non-blocking: registered with the netpoller
		s.waiter = w
	}
	s.mu.Unlock()
	s.waits.Add(1)
	rc, err := w.SyscallConn()
	if err != nil {
		return err
	}
	waited := false
	if err := rc.Write(func(uintptr) bool {
		if waited {
			return true
		}
		waited = true
		return false // wait for the next writable edge
	}); err != nil {
		return errClosedWhileWriting
	}
	return nil
}

// dropWaiter closes the waiter, if a write of the batch needed one, so
// inbound packets stop waking the netpoller. Writer goroutine only.
func (s *socket) dropWaiter() {
	s.mu.Lock()
	w := s.waiter
	s.waiter = nil
	s.mu.Unlock()
	if w != nil {
		_ = w.Close()
	}
}

// shutdownWaits ends a wait in progress and refuses new ones (OnClose).
func (s *socket) shutdownWaits() {
	s.mu.Lock()
	s.shutdown = true
	w := s.waiter
	s.waiter = nil
	s.mu.Unlock()
	if w != nil {
		_ = w.Close()
	}
}

// close closes the descriptor; the writer goroutine calls it last.
func (s *socket) close() { _ = unix.Close(s.fd) }
