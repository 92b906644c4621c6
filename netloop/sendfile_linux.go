//go:build linux

package netloop

import (
	"errors"

	"golang.org/x/sys/unix"
)

// errSendfileUnsupported means the kernel refused sendfile for this file
// (nothing was sent); the caller copies instead.
var errSendfileUnsupported = errors.New("netloop: sendfile unsupported for this file")

// maxSendfileChunk bounds one sendfile(2) call (Linux caps a call near
// 2 GiB anyway).
const maxSendfileChunk = 1 << 30

// sendfile sends n bytes of file descriptor fd from offset off to the
// socket, and returns how many it sent.
//
// The offset is explicit: sendfile(2) reads at *off and advances only our
// copy, never the file's shared position, so many connections can send
// from one open segment file at once (TCPConn.ReadFrom would use and move
// the file position). A full socket (EAGAIN) parks the goroutine in Go's
// netpoller until it drains (socket.waitWritable); a cold-cache read
// blocks only the goroutine writing, never a gnet loop.
func sendfile(s *socket, fd int, off, n int64) (sent int64, err error) {
	for sent < n {
		chunk := min(n-sent, maxSendfileChunk)
		m, e := unix.Sendfile(s.fd, fd, &off, int(chunk))
		if m > 0 {
			sent += int64(m)
		}
		switch {
		case e == unix.EAGAIN:
			if err := s.waitWritable(); err != nil {
				return sent, err
			}
		case e == unix.EINTR:
		case (e == unix.EINVAL || e == unix.ENOSYS || e == unix.EOPNOTSUPP) && sent == 0:
			return sent, errSendfileUnsupported
		case e != nil:
			return sent, e
		case m == 0:
			return sent, errShortFile
		}
	}
	return sent, nil
}
