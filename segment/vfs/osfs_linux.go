package vfs

import "golang.org/x/sys/unix"

// Reserve allocates [off, off+n) without changing the file's size.
func (f osFile) Reserve(off, n int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		ferr = unix.Fallocate(int(fd), unix.FALLOC_FL_KEEP_SIZE, off, n)
	}); err != nil {
		return err
	}
	return ferr
}
