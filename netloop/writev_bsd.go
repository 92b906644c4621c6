//go:build freebsd || netbsd || dragonfly

package netloop

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// writev is writev(2) by its system call number: golang.org/x/sys has no
// wrapper on these systems. Empty slices are left out, as the wrapper
// elsewhere does.
func writev(fd int, iov [][]byte) (int, error) {
	vecs := make([]unix.Iovec, 0, len(iov))
	for _, b := range iov {
		if len(b) == 0 {
			continue
		}
		v := unix.Iovec{Base: &b[0]}
		v.SetLen(len(b))
		vecs = append(vecs, v)
	}
	if len(vecs) == 0 {
		return 0, nil
	}
	n, _, errno := unix.Syscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&vecs[0])), uintptr(len(vecs)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
