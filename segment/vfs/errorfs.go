package vfs

import (
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
)

// ErrorFS wraps any FS (MemFS, or OS in a temporary directory) and fails
// its operations as a FaultFunc says, with one difference from MemFS's
// own hook that matters to callers: like os.File.WriteAt, a write that
// put part of its bytes on disk before it failed can report n == 0
// (ReportZero), so a caller that trusts n to know what landed is caught
// out. Faults compose: FirstFault asks several in turn.
type ErrorFS struct {
	fs FS
	// reportZero: a failed write reports n == 0 whatever landed.
	reportZero bool
	fault      atomic.Pointer[FaultFunc]
}

// NewErrorFS wraps fs. With reportZero, a failed WriteAt reports n == 0
// even when some of its bytes were written, as os.File.WriteAt does (it
// drops the count of a short pwrite once the next one fails).
func NewErrorFS(fs FS, reportZero bool) *ErrorFS { return &ErrorFS{fs: fs, reportZero: reportZero} }

// SetFault installs f (nil removes it). For OpWrite the written bytes f
// returns are written to the wrapped file first.
func (e *ErrorFS) SetFault(f FaultFunc) {
	if f == nil {
		e.fault.Store(nil)
		return
	}
	e.fault.Store(&f)
}

func (e *ErrorFS) check(op Op, name string, size int) (int, error) {
	if f := e.fault.Load(); f != nil {
		return (*f)(op, name, size)
	}
	return 0, nil
}

// FirstFault returns a FaultFunc that asks each of fs in order and
// answers with the first error.
func FirstFault(fs ...FaultFunc) FaultFunc {
	return func(op Op, name string, size int) (int, error) {
		for _, f := range fs {
			if n, err := f(op, name, size); err != nil {
				return n, err
			}
		}
		return 0, nil
	}
}

// FailOp fails every op on names that match with err.
func FailOp(op Op, match func(name string) bool, err error) FaultFunc {
	return func(o Op, name string, _ int) (int, error) {
		if o == op && match(name) {
			return 0, err
		}
		return 0, nil
	}
}

// NoSpaceAfter lets writes put down budget bytes in total, then fails
// every write with ENOSPC; the write that crosses the limit writes what
// fits first. Space never comes back (a disk another program fills).
func NoSpaceAfter(budget int64) FaultFunc {
	var mu sync.Mutex
	return func(op Op, _ string, size int) (int, error) {
		if op != OpWrite {
			return 0, nil
		}
		mu.Lock()
		defer mu.Unlock()
		if int64(size) <= budget {
			budget -= int64(size)
			return 0, nil
		}
		n := int(max(budget, 0))
		budget = 0
		return n, syscall.ENOSPC
	}
}

func (e *ErrorFS) wrap(f File, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	return &errorFile{File: f, fs: e}, nil
}

// Create implements FS.
func (e *ErrorFS) Create(name string) (File, error) {
	if _, err := e.check(OpCreate, name, 0); err != nil {
		return nil, pathErr("create", name, err)
	}
	return e.wrap(e.fs.Create(name))
}

// OpenReadWrite implements FS.
func (e *ErrorFS) OpenReadWrite(name string) (File, error) {
	if _, err := e.check(OpOpen, name, 0); err != nil {
		return nil, pathErr("open", name, err)
	}
	return e.wrap(e.fs.OpenReadWrite(name))
}

// Open implements FS.
func (e *ErrorFS) Open(name string) (File, error) {
	if _, err := e.check(OpOpen, name, 0); err != nil {
		return nil, pathErr("open", name, err)
	}
	return e.wrap(e.fs.Open(name))
}

// Remove implements FS.
func (e *ErrorFS) Remove(name string) error {
	if _, err := e.check(OpRemove, name, 0); err != nil {
		return pathErr("remove", name, err)
	}
	return e.fs.Remove(name)
}

// RemoveAll implements FS.
func (e *ErrorFS) RemoveAll(name string) error {
	if _, err := e.check(OpRemove, name, 0); err != nil {
		return pathErr("remove", name, err)
	}
	return e.fs.RemoveAll(name)
}

// Rename implements FS.
func (e *ErrorFS) Rename(oldname, newname string) error {
	if _, err := e.check(OpRename, oldname, 0); err != nil {
		return pathErr("rename", oldname, err)
	}
	return e.fs.Rename(oldname, newname)
}

// MkdirAll implements FS.
func (e *ErrorFS) MkdirAll(dir string) error {
	if _, err := e.check(OpMkdir, dir, 0); err != nil {
		return pathErr("mkdir", dir, err)
	}
	return e.fs.MkdirAll(dir)
}

// List implements FS.
func (e *ErrorFS) List(dir string) ([]string, error) { return e.fs.List(dir) }

// Stat implements FS.
func (e *ErrorFS) Stat(name string) (FileInfo, error) { return e.fs.Stat(name) }

// SyncDir implements FS.
func (e *ErrorFS) SyncDir(dir string) error {
	if _, err := e.check(OpSyncDir, dir, 0); err != nil {
		return pathErr("syncdir", dir, err)
	}
	return e.fs.SyncDir(dir)
}

type errorFile struct {
	File
	fs *ErrorFS
}

func (f *errorFile) ReadAt(p []byte, off int64) (int, error) {
	if _, err := f.fs.check(OpRead, f.Name(), len(p)); err != nil {
		return 0, pathErr("read", f.Name(), err)
	}
	return f.File.ReadAt(p, off)
}

func (f *errorFile) WriteAt(p []byte, off int64) (int, error) {
	want, ferr := f.fs.check(OpWrite, f.Name(), len(p))
	if ferr == nil {
		want = len(p)
	}
	want = max(0, min(want, len(p)))
	var n int
	var err error
	if want > 0 {
		n, err = f.File.WriteAt(p[:want], off)
	}
	if err == nil && ferr != nil {
		err = pathErr("write", f.Name(), ferr)
	}
	if err != nil && f.fs.reportZero {
		n = 0
	}
	return n, err
}

func (f *errorFile) Sync() error {
	if _, err := f.fs.check(OpSync, f.Name(), 0); err != nil {
		return pathErr("sync", f.Name(), err)
	}
	return f.File.Sync()
}

func (f *errorFile) Truncate(size int64) error {
	if _, err := f.fs.check(OpTruncate, f.Name(), 0); err != nil {
		return pathErr("truncate", f.Name(), err)
	}
	return f.File.Truncate(size)
}

// Reserve passes a reservation on to the wrapped file, if it can take one.
func (f *errorFile) Reserve(off, n int64) error {
	sr, ok := f.File.(SpaceReserver)
	if !ok {
		return errors.ErrUnsupported
	}
	return sr.Reserve(off, n)
}

// Unwrap is the wrapped FS (vfs.Lock locks through it: a fault hook has
// no say over locks).
func (e *ErrorFS) Unwrap() FS { return e.fs }
