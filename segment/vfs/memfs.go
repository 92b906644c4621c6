package vfs

import (
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// Op names a filesystem operation, for fault injection.
type Op int

// Operations a FaultFunc is asked about.
const (
	OpCreate Op = iota
	OpOpen
	OpRead
	OpWrite
	OpSync
	OpTruncate
	OpRemove
	OpRename
	OpMkdir
	OpSyncDir
)

var opNames = [...]string{"create", "open", "read", "write", "sync", "truncate", "remove", "rename", "mkdir", "syncdir"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", int(o))
}

// FaultFunc is consulted before every MemFS operation. Returning a nil
// error lets the operation proceed. A non-nil error makes it fail; for
// OpWrite, written bytes of the write (clamped to its size) land first,
// which models a torn write. size is the write's length (0 for other ops).
type FaultFunc func(op Op, name string, size int) (written int, err error)

// MemFS is an in-memory FS that models what survives a crash: file data
// written since the file's last Sync, and directory entries created,
// renamed or removed since the directory's last SyncDir, are volatile.
// CrashClone returns one possible state of the disk after a power loss.
// Faults (failed fsync, torn write, ENOSPC) are injected with SetFault
// and SetCapacity. MemFS is safe for concurrent use.
type MemFS struct {
	mu       sync.RWMutex
	files    map[string]*inode // current namespace
	dirs     map[string]bool
	durFiles map[string]*inode // namespace as of the last SyncDir of each directory
	durDirs  map[string]bool
	capacity int64 // 0: unlimited
	fault    atomic.Pointer[FaultFunc]
	locks    map[string]bool // names held through Lock (lock.go); not cloned: a crash releases them
}

type inode struct {
	data   []byte // current content
	synced []byte // content as of the last Sync
	// dirtyFrom: bytes [0, dirtyFrom) are unchanged since the last Sync.
	dirtyFrom int64
	dirty     bool
}

// NewMemFS returns an empty MemFS holding only the root directories "/"
// and ".".
func NewMemFS() *MemFS {
	m := &MemFS{
		files: map[string]*inode{}, dirs: map[string]bool{"/": true, ".": true},
		durFiles: map[string]*inode{}, durDirs: map[string]bool{"/": true, ".": true},
	}
	return m
}

// SetFault installs f (nil removes it).
func (m *MemFS) SetFault(f FaultFunc) {
	if f == nil {
		m.fault.Store(nil)
		return
	}
	m.fault.Store(&f)
}

// SetCapacity limits the total size of all files; a write that would
// exceed it writes what fits and fails with ENOSPC. 0 means unlimited.
func (m *MemFS) SetCapacity(bytes int64) {
	m.mu.Lock()
	m.capacity = bytes
	m.mu.Unlock()
}

func (m *MemFS) check(op Op, name string, size int) (int, error) {
	if f := m.fault.Load(); f != nil {
		return (*f)(op, name, size)
	}
	return 0, nil
}

func clean(name string) string { return path.Clean(name) }

func pathErr(op, name string, err error) error { return &fs.PathError{Op: op, Path: name, Err: err} }

// Create implements FS.
func (m *MemFS) Create(name string) (File, error) {
	name = clean(name)
	if _, err := m.check(OpCreate, name, 0); err != nil {
		return nil, pathErr("create", name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[path.Dir(name)] {
		return nil, pathErr("create", name, fs.ErrNotExist)
	}
	if m.dirs[name] {
		return nil, pathErr("create", name, syscall.EISDIR)
	}
	n := m.files[name]
	if n == nil {
		n = &inode{}
		m.files[name] = n
	} else {
		n.truncate(0)
	}
	return &memFile{fs: m, n: n, name: name}, nil
}

// OpenReadWrite implements FS.
func (m *MemFS) OpenReadWrite(name string) (File, error) { return m.open(name, false) }

// Open implements FS.
func (m *MemFS) Open(name string) (File, error) { return m.open(name, true) }

func (m *MemFS) open(name string, readOnly bool) (File, error) {
	name = clean(name)
	if _, err := m.check(OpOpen, name, 0); err != nil {
		return nil, pathErr("open", name, err)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	n := m.files[name]
	if n == nil {
		return nil, pathErr("open", name, fs.ErrNotExist)
	}
	return &memFile{fs: m, n: n, name: name, readOnly: readOnly}, nil
}

// Remove implements FS.
func (m *MemFS) Remove(name string) error {
	name = clean(name)
	if _, err := m.check(OpRemove, name, 0); err != nil {
		return pathErr("remove", name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files[name] != nil {
		delete(m.files, name)
		return nil
	}
	if m.dirs[name] {
		prefix := name + "/"
		for k := range m.files {
			if strings.HasPrefix(k, prefix) {
				return pathErr("remove", name, syscall.ENOTEMPTY)
			}
		}
		for k := range m.dirs {
			if strings.HasPrefix(k, prefix) {
				return pathErr("remove", name, syscall.ENOTEMPTY)
			}
		}
		delete(m.dirs, name)
		return nil
	}
	return pathErr("remove", name, fs.ErrNotExist)
}

// RemoveAll implements FS.
func (m *MemFS) RemoveAll(name string) error {
	name = clean(name)
	if _, err := m.check(OpRemove, name, 0); err != nil {
		return pathErr("remove", name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	prefix := name + "/"
	for k := range m.files {
		if k == name || strings.HasPrefix(k, prefix) {
			delete(m.files, k)
		}
	}
	for k := range m.dirs {
		if k == name || strings.HasPrefix(k, prefix) {
			delete(m.dirs, k)
		}
	}
	return nil
}

// Rename implements FS (files only).
func (m *MemFS) Rename(oldname, newname string) error {
	oldname, newname = clean(oldname), clean(newname)
	if _, err := m.check(OpRename, oldname, 0); err != nil {
		return pathErr("rename", oldname, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.files[oldname]
	if n == nil {
		return pathErr("rename", oldname, fs.ErrNotExist)
	}
	if !m.dirs[path.Dir(newname)] {
		return pathErr("rename", newname, fs.ErrNotExist)
	}
	delete(m.files, oldname)
	m.files[newname] = n
	return nil
}

// MkdirAll implements FS.
func (m *MemFS) MkdirAll(dir string) error {
	dir = clean(dir)
	if _, err := m.check(OpMkdir, dir, 0); err != nil {
		return pathErr("mkdir", dir, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for d := dir; !m.dirs[d]; d = path.Dir(d) {
		if m.files[d] != nil {
			return pathErr("mkdir", d, syscall.ENOTDIR)
		}
		m.dirs[d] = true
	}
	return nil
}

// List implements FS.
func (m *MemFS) List(dir string) ([]string, error) {
	dir = clean(dir)
	m.mu.RLock()
	defer m.mu.RUnlock()
	if !m.dirs[dir] {
		return nil, pathErr("list", dir, fs.ErrNotExist)
	}
	names := map[string]bool{}
	for k := range m.files {
		if path.Dir(k) == dir {
			names[path.Base(k)] = true
		}
	}
	for k := range m.dirs {
		if k != dir && path.Dir(k) == dir {
			names[path.Base(k)] = true
		}
	}
	return sortedKeys(names), nil
}

// Stat implements FS.
func (m *MemFS) Stat(name string) (FileInfo, error) {
	name = clean(name)
	m.mu.RLock()
	defer m.mu.RUnlock()
	if n := m.files[name]; n != nil {
		return FileInfo{Size: int64(len(n.data))}, nil
	}
	if m.dirs[name] {
		return FileInfo{IsDir: true}, nil
	}
	return FileInfo{}, pathErr("stat", name, fs.ErrNotExist)
}

// SyncDir implements FS: the directory's current entries become durable.
func (m *MemFS) SyncDir(dir string) error {
	dir = clean(dir)
	if _, err := m.check(OpSyncDir, dir, 0); err != nil {
		return pathErr("syncdir", dir, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[dir] {
		return pathErr("syncdir", dir, fs.ErrNotExist)
	}
	for k := range m.durFiles {
		if path.Dir(k) == dir && m.files[k] == nil {
			delete(m.durFiles, k)
		}
	}
	for k, n := range m.files {
		if path.Dir(k) == dir {
			m.durFiles[k] = n
		}
	}
	for k := range m.durDirs {
		if k != dir && path.Dir(k) == dir && !m.dirs[k] {
			delete(m.durDirs, k)
		}
	}
	for k := range m.dirs {
		if k != dir && path.Dir(k) == dir {
			m.durDirs[k] = true
		}
	}
	return nil
}

// CrashClone returns a new MemFS holding one possible state of this one
// after a power loss: durable directory entries with their synced
// content. With rng set, each file with unsynced data also keeps, at
// random, none, a prefix or all of its unsynced bytes, or a garbage tail
// in their place (a torn write); with rng nil only synced data survives.
// The clone has no fault hook or capacity.
func (m *MemFS) CrashClone(rng *rand.Rand) *MemFS {
	m.mu.RLock()
	defer m.mu.RUnlock()
	c := NewMemFS()
	alive := func(d string) bool {
		for ; d != "/" && d != "."; d = path.Dir(d) {
			if !m.durDirs[d] {
				return false
			}
		}
		return true
	}
	for d := range m.durDirs {
		if alive(d) {
			c.dirs[d], c.durDirs[d] = true, true
		}
	}
	cloned := map[*inode]*inode{}
	for _, k := range sortedKeys(m.durFiles) { // sorted: same rng, same result
		if !alive(path.Dir(k)) {
			continue
		}
		n := m.durFiles[k]
		nn := cloned[n]
		if nn == nil {
			content := n.afterCrash(rng)
			nn = &inode{data: content, synced: append([]byte(nil), content...), dirtyFrom: int64(len(content))}
			cloned[n] = nn
		}
		c.files[k], c.durFiles[k] = nn, nn
	}
	return c
}

func (n *inode) afterCrash(rng *rand.Rand) []byte {
	out := append([]byte(nil), n.synced...)
	if rng == nil || !n.dirty {
		return out
	}
	base := n.data[:n.dirtyFrom]
	unsynced := n.data[n.dirtyFrom:]
	switch rng.IntN(4) {
	case 0: // nothing unsynced reached the disk
		return out
	case 1: // a prefix of the unsynced bytes
		k := rng.IntN(len(unsynced) + 1)
		return append(append([]byte(nil), base...), unsynced[:k]...)
	case 2: // everything reached the disk
		return append([]byte(nil), n.data...)
	default: // the size grew but the data blocks hold garbage
		k := rng.IntN(len(unsynced) + 1)
		out = append([]byte(nil), base...)
		keep := rng.IntN(k + 1)
		out = append(out, unsynced[:keep]...)
		for i := keep; i < k; i++ {
			out = append(out, byte(rng.IntN(256)))
		}
		return out
	}
}

func (n *inode) markDirty(from int64) {
	if !n.dirty || from < n.dirtyFrom {
		n.dirtyFrom = from
	}
	n.dirty = true
}

func (n *inode) truncate(size int64) {
	old := int64(len(n.data))
	if size < old {
		n.markDirty(size)
		n.data = n.data[:size]
	} else if size > old {
		n.markDirty(old)
		n.data = append(n.data, make([]byte, size-old)...)
	}
}

func (n *inode) sync() {
	if !n.dirty {
		return
	}
	n.synced = append(n.synced[:n.dirtyFrom], n.data[n.dirtyFrom:]...)
	n.dirtyFrom = int64(len(n.data))
	n.dirty = false
}

func (m *MemFS) usedLocked() int64 {
	var used int64
	for _, n := range m.files {
		used += int64(len(n.data))
	}
	return used
}

type memFile struct {
	fs       *MemFS
	n        *inode
	name     string
	readOnly bool
	closed   atomic.Bool
}

func (f *memFile) Name() string              { return f.name }
func (f *memFile) SysFd() (int, bool)        { return 0, false }
func (f *memFile) errClosed(op string) error { return pathErr(op, f.name, os.ErrClosed) }

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if f.closed.Load() {
		return 0, f.errClosed("read")
	}
	if _, err := f.fs.check(OpRead, f.name, len(p)); err != nil {
		return 0, pathErr("read", f.name, err)
	}
	if off < 0 {
		return 0, pathErr("read", f.name, fs.ErrInvalid)
	}
	f.fs.mu.RLock()
	defer f.fs.mu.RUnlock()
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if f.closed.Load() {
		return 0, f.errClosed("write")
	}
	if f.readOnly || off < 0 {
		return 0, pathErr("write", f.name, fs.ErrPermission)
	}
	want := len(p)
	written, ferr := f.fs.check(OpWrite, f.name, len(p))
	if ferr != nil {
		want = max(0, min(written, len(p)))
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	var err error
	if ferr != nil {
		err = pathErr("write", f.name, ferr)
	}
	if c := f.fs.capacity; c > 0 {
		growth := max(0, off+int64(want)-int64(len(f.n.data)))
		if free := c - f.fs.usedLocked(); growth > free {
			want = max(0, want-int(growth-max(free, 0)))
			err = pathErr("write", f.name, syscall.ENOSPC)
		}
	}
	if want == 0 {
		return 0, err
	}
	end := off + int64(want)
	if end > int64(len(f.n.data)) {
		f.n.truncate(end)
	}
	f.n.markDirty(off)
	copy(f.n.data[off:end], p[:want])
	return want, err
}

func (f *memFile) Sync() error {
	if f.closed.Load() {
		return f.errClosed("sync")
	}
	if _, err := f.fs.check(OpSync, f.name, 0); err != nil {
		return pathErr("sync", f.name, err)
	}
	f.fs.mu.Lock()
	f.n.sync()
	f.fs.mu.Unlock()
	return nil
}

func (f *memFile) Truncate(size int64) error {
	if f.closed.Load() {
		return f.errClosed("truncate")
	}
	if f.readOnly || size < 0 {
		return pathErr("truncate", f.name, fs.ErrPermission)
	}
	if _, err := f.fs.check(OpTruncate, f.name, 0); err != nil {
		return pathErr("truncate", f.name, err)
	}
	f.fs.mu.Lock()
	f.n.truncate(size)
	f.fs.mu.Unlock()
	return nil
}

func (f *memFile) Size() (int64, error) {
	if f.closed.Load() {
		return 0, f.errClosed("stat")
	}
	f.fs.mu.RLock()
	defer f.fs.mu.RUnlock()
	return int64(len(f.n.data)), nil
}

func (f *memFile) Close() error {
	if f.closed.Swap(true) {
		return f.errClosed("close")
	}
	return nil
}
