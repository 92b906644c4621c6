package vfs

import (
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
)

// FS is the filesystem seen by the segment package. Paths use forward
// slashes. Implementations must be safe for concurrent use.
type FS interface {
	// Create opens name for reading and writing, creating it or
	// truncating it to zero length.
	Create(name string) (File, error)
	// OpenReadWrite opens an existing file for reading and writing.
	OpenReadWrite(name string) (File, error)
	// Open opens an existing file read-only.
	Open(name string) (File, error)
	// Remove deletes a file or an empty directory. Open handles stay
	// usable until closed (POSIX unlink semantics).
	Remove(name string) error
	// RemoveAll deletes a directory and everything below it.
	RemoveAll(name string) error
	// Rename atomically replaces newname with oldname.
	Rename(oldname, newname string) error
	// MkdirAll creates a directory and any missing parents.
	MkdirAll(dir string) error
	// List returns the names (not paths) of the entries of dir, sorted.
	List(dir string) ([]string, error)
	// Stat describes name.
	Stat(name string) (FileInfo, error)
	// SyncDir makes the directory's entries (creations, removals,
	// renames) durable.
	SyncDir(dir string) error
}

// FileInfo is what Stat reports.
type FileInfo struct {
	Size  int64
	IsDir bool
}

// File is an open file. Writes are positional (WriteAt); there is no file
// cursor, so one File may be shared by a writer and concurrent readers.
type File interface {
	io.ReaderAt
	io.WriterAt
	// Sync makes the file's contents durable (fsync).
	Sync() error
	// Truncate changes the file's size.
	Truncate(size int64) error
	// Size is the file's current size.
	Size() (int64, error)
	Close() error
	// SysFd returns the operating-system descriptor for sendfile(2), or
	// ok=false when the file has none (MemFS). It satisfies
	// wire.RegionFile together with ReadAt.
	SysFd() (fd int, ok bool)
	// Name is the path the file was opened with.
	Name() string
}

// ErrInjected is the error a fault hook returns by default; tests use it
// to recognise injected failures.
var ErrInjected = errors.New("vfs: injected fault")

// ReadFile returns the whole content of name.
func ReadFile(fs FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, size)
	n, err := f.ReadAt(buf, 0)
	if err == io.EOF && int64(n) == size {
		err = nil
	}
	return buf[:n], err
}

// WriteFileAtomic replaces name with data so that after a crash the file
// holds either its old or its new content, never a mix: it writes a
// temporary file next to it, fsyncs it, renames it over name and fsyncs
// the directory.
func WriteFileAtomic(fs FS, name string, data []byte) error {
	tmp := name + ".tmp"
	f, err := fs.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		fs.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		fs.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		fs.Remove(tmp)
		return err
	}
	if err := fs.Rename(tmp, name); err != nil {
		fs.Remove(tmp)
		return err
	}
	if err := fs.SyncDir(path.Dir(name)); err != nil {
		return fmt.Errorf("vfs: sync directory of %s: %w", name, err)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// SpaceReserver is implemented by files that can reserve disk space past
// their end without changing their size (on Linux, fallocate(2) with
// FALLOC_FL_KEEP_SIZE). A write into reserved space skips the
// filesystem's block allocation; truncating the file to its own size
// gives back what was not written. Callers treat it as optional: a file
// without it, or an error from it, only means no reservation.
type SpaceReserver interface {
	Reserve(off, n int64) error
}
