//go:build linux

package netloop

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// errSendfileUnsupported means the kernel refused sendfile for this file
// (nothing was sent); the caller copies instead.
var errSendfileUnsupported = errors.New("netloop: sendfile unsupported for this file")

// maxSendfileChunk bounds one sendfile(2) call (Linux caps a call near
// 2 GiB anyway).
const maxSendfileChunk = 1 << 30

// sendfile sends n bytes of file descriptor fd from offset off to the
// socket behind raw, and returns how many it sent.
//
// The offset is explicit: sendfile(2) reads at *off and advances only our
// copy, never the file's shared position, so many connections can send
// from one open segment file at once (TCPConn.ReadFrom would use and move
// the file position). EAGAIN returns false to RawConn.Write, which parks
// the goroutine in Go's netpoller until the socket is writable; a
// cold-cache read blocks only this writer goroutine, never a gnet loop.
func sendfile(raw syscall.RawConn, fd int, off, n int64) (sent int64, err error) {
	werr := raw.Write(func(sock uintptr) bool {
		for sent < n {
			chunk := min(n-sent, maxSendfileChunk)
			m, e := unix.Sendfile(int(sock), fd, &off, int(chunk))
			if m > 0 {
				sent += int64(m)
			}
			switch {
			case e == unix.EAGAIN:
				return false
			case e == unix.EINTR:
				continue
			case (e == unix.EINVAL || e == unix.ENOSYS || e == unix.EOPNOTSUPP) && sent == 0:
				err = errSendfileUnsupported
				return true
			case e != nil:
				err = e
				return true
			case m == 0:
				err = errShortFile
				return true
			}
		}
		return true
	})
	if err == nil {
		err = werr
	}
	return sent, err
}
