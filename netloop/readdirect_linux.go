package netloop

import (
	"io"

	"golang.org/x/sys/unix"
)

// readDirect reads from the socket fd into p until p is full or the
// socket has nothing more for now, without blocking (gnet's sockets are
// non-blocking). It runs on the connection's loop, the socket's only
// reader. err is io.EOF when the client closed its side, or the socket's
// error; EAGAIN is not one.
func readDirect(fd int, p []byte) (n int, err error) {
	for n < len(p) {
		m, rerr := unix.Read(fd, p[n:])
		switch {
		case rerr == unix.EINTR:
			continue
		case rerr == unix.EAGAIN:
			return n, nil
		case rerr != nil:
			return n, rerr
		case m == 0:
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

// pendingBytes is how many bytes the socket fd holds unread (0 if it
// cannot tell), so a growing frame can be sized to what has arrived.
func pendingBytes(fd int) int {
	n, err := unix.IoctlGetInt(fd, unix.SIOCINQ)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
