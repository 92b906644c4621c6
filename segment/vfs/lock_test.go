package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// lockTwice checks the behaviour both implementations share: a second
// Lock of a held name fails with ErrLocked, and closing the first frees it.
func lockTwice(t *testing.T, fsys FS, name string) {
	t.Helper()
	l, err := Lock(fsys, name)
	if err != nil {
		t.Fatalf("first lock: %v", err)
	}
	if l2, err := Lock(fsys, name); !errors.Is(err, ErrLocked) {
		if l2 != nil {
			l2.Close()
		}
		t.Fatalf("second lock of a held file: %v, want ErrLocked", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("unlock: %v", err)
	}
	l, err = Lock(fsys, name)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLockOS(t *testing.T) {
	name := filepath.Join(t.TempDir(), ".lock")
	lockTwice(t, OS, name)
	// The lock file keeps what is in it: Lock must not truncate a file
	// another process may hold.
	if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Lock(OS, name)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, ok := l.(*os.File); !ok {
		t.Fatalf("Lock on OS returned %T, want the *os.File holding the flock", l)
	}
	if data, _ := os.ReadFile(name); string(data) != "x" {
		t.Fatalf("locking changed the file to %q", data)
	}
}

func TestLockMemFS(t *testing.T) {
	m := NewMemFS()
	if err := MkdirAllSync(m, "/d"); err != nil {
		t.Fatal(err)
	}
	lockTwice(t, m, "/d/.lock")
	if _, err := Lock(m, "/missing/.lock"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("lock in a missing directory: %v", err)
	}
	l, err := Lock(m, "/d/.lock")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err == nil {
		t.Fatal("a second Close of a lock succeeded")
	}
	held, err := Lock(m, "/d/.lock")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	// A crash kills the holder: the image after it is unlocked.
	c := m.CrashClone(nil)
	if l, err := Lock(c, "/d/.lock"); err != nil {
		t.Fatalf("lock on a crash clone: %v", err)
	} else {
		l.Close()
	}
	// The fault hook sees lock attempts.
	m.SetFault(func(Op, string, int) (int, error) { return 0, ErrInjected })
	if _, err := Lock(m, "/d/other"); !errors.Is(err, ErrInjected) {
		t.Fatalf("lock under a failing hook: %v", err)
	}
}

type wrapFS struct{ FS }

func (w wrapFS) Unwrap() FS { return w.FS }

type plainFS struct{ FS }

func TestLockThroughWrappers(t *testing.T) {
	m := NewMemFS()
	a, err := Lock(wrapFS{m}, "/a")
	if err != nil {
		t.Fatalf("lock through Unwrap: %v", err)
	}
	if _, err := Lock(m, "/a"); !errors.Is(err, ErrLocked) {
		t.Fatalf("the wrapper's lock is not the wrapped FS's: %v", err)
	}
	a.Close()
	var c io.Closer
	if c, err = Lock(plainFS{m}, "/a"); !errors.Is(err, errors.ErrUnsupported) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("lock through an FS that cannot lock: %v, want ErrUnsupported", err)
	}
}

func TestMkdirAllSync(t *testing.T) {
	m := NewMemFS()
	if err := MkdirAllSync(m, "/a/b/c"); err != nil {
		t.Fatal(err)
	}
	// Every created level survives a crash, with nothing else synced.
	if st, err := m.CrashClone(nil).Stat("/a/b/c"); err != nil || !st.IsDir {
		t.Fatalf("after a crash: %+v, %v", st, err)
	}
	f, err := m.Create("/a/file")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := MkdirAllSync(m, "/a/file/x"); err == nil {
		t.Fatal("MkdirAllSync below a file succeeded")
	}
	// An existing directory costs no fsync.
	m.SetFault(func(op Op, name string, _ int) (int, error) {
		if op == OpSyncDir || op == OpMkdir {
			t.Errorf("%s %s for an existing directory", op, name)
		}
		return 0, nil
	})
	if err := MkdirAllSync(m, "/a/b"); err != nil {
		t.Fatal(err)
	}
	if err := MkdirAllSync(OS, filepath.Join(t.TempDir(), "x", "y")); err != nil {
		t.Fatalf("on OS: %v", err)
	}
}
