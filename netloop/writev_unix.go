//go:build linux || darwin || openbsd

package netloop

import "golang.org/x/sys/unix"

// writev is writev(2) where golang.org/x/sys offers it.
func writev(fd int, iov [][]byte) (int, error) { return unix.Writev(fd, iov) }
