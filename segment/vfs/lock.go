package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrLocked is returned by Lock when another holder has the lock: on OS,
// any process, this one included, that holds a flock on the file; on
// MemFS, an earlier Lock on the same MemFS not yet released.
var ErrLocked = errors.New("vfs: file is locked")

// Locker is implemented by filesystems that can take an exclusive,
// non-blocking lock on a file, creating the file if needed (an existing
// file keeps its content). The lock lasts until the returned Closer is
// closed or the holder dies: a crash releases it, so a MemFS crash clone
// starts with no locks held. OS and MemFS implement it; a wrapping FS
// implements it by delegating, or exposes the wrapped FS through Unwrap.
type Locker interface {
	Lock(name string) (io.Closer, error)
}

// Lock takes an exclusive lock on name through fsys (see Locker). On OS
// the Closer is the *os.File that holds the flock. An FS that neither
// implements Locker nor unwraps to one cannot lock: the error wraps
// errors.ErrUnsupported.
func Lock(fsys FS, name string) (io.Closer, error) {
	for {
		if l, ok := fsys.(Locker); ok {
			return l.Lock(name)
		}
		u, ok := fsys.(interface{ Unwrap() FS })
		if !ok {
			return nil, pathErr("lock", name, errors.ErrUnsupported)
		}
		fsys = u.Unwrap()
	}
}

// Lock implements Locker with flock(2), which Kafka uses on its .lock
// files too, so samsa and a Kafka broker exclude each other. The file is
// opened without O_TRUNC: truncating a file another process holds locked
// would be a write behind its back.
func (osFS) Lock(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		ferr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB)
	}); err != nil {
		f.Close()
		return nil, err
	}
	if ferr != nil {
		f.Close()
		if errors.Is(ferr, unix.EWOULDBLOCK) {
			return nil, pathErr("lock", name, fmt.Errorf("%w (%w)", ErrLocked, ferr))
		}
		return nil, pathErr("lock", name, ferr)
	}
	return f, nil
}

// Lock implements Locker with a table of held names, exclusive within
// this MemFS, so tests see a second broker on the same directories fail
// as it would on disk. The fault hook is asked with OpOpen.
func (m *MemFS) Lock(name string) (io.Closer, error) {
	name = clean(name)
	if _, err := m.check(OpOpen, name, 0); err != nil {
		return nil, pathErr("lock", name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[path.Dir(name)] {
		return nil, pathErr("lock", name, fs.ErrNotExist)
	}
	if m.dirs[name] {
		return nil, pathErr("lock", name, syscall.EISDIR)
	}
	if m.locks[name] {
		return nil, pathErr("lock", name, ErrLocked)
	}
	if m.files[name] == nil {
		m.files[name] = &inode{}
	}
	if m.locks == nil {
		m.locks = map[string]bool{}
	}
	m.locks[name] = true
	return &memLock{fs: m, name: name}, nil
}

type memLock struct {
	fs       *MemFS
	name     string
	released bool // guarded by fs.mu
}

func (l *memLock) Close() error {
	l.fs.mu.Lock()
	defer l.fs.mu.Unlock()
	if l.released {
		return pathErr("unlock", l.name, os.ErrClosed)
	}
	l.released = true
	delete(l.fs.locks, l.name)
	return nil
}
