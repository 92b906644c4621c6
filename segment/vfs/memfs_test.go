package vfs

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"syscall"
	"testing"
)

func mustWrite(t *testing.T, f File, p []byte, off int64) {
	t.Helper()
	if n, err := f.WriteAt(p, off); err != nil || n != len(p) {
		t.Fatalf("WriteAt: n=%d err=%v", n, err)
	}
}

func content(t *testing.T, fs FS, name string) []byte {
	t.Helper()
	b, err := ReadFile(fs, name)
	if err != nil {
		t.Fatalf("ReadFile %s: %v", name, err)
	}
	return b
}

func TestMemFSCrashLosesUnsyncedData(t *testing.T) {
	m := NewMemFS()
	if err := m.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	f, err := m.Create("/d/a")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, []byte("hello"), 0)
	// Neither data nor the name is durable yet.
	if c := m.CrashClone(nil); len(mustList(t, c, "/")) != 0 {
		t.Fatalf("unsynced directory survived the crash: %v", mustList(t, c, "/"))
	}
	if err := m.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	if got := content(t, m.CrashClone(nil), "/d/a"); len(got) != 0 {
		t.Fatalf("unsynced data survived: %q", got)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, []byte(" world"), 5)
	if got := content(t, m.CrashClone(nil), "/d/a"); string(got) != "hello" {
		t.Fatalf("after crash: %q, want %q", got, "hello")
	}
	// With an rng, the result is synced data plus some form of the tail.
	for seed := range uint64(50) {
		got := content(t, m.CrashClone(rand.New(rand.NewPCG(seed, 1))), "/d/a")
		if !bytes.HasPrefix(got, []byte("hello")) || len(got) > len("hello world") {
			t.Fatalf("seed %d: impossible crash state %q", seed, got)
		}
	}
	// The live filesystem is untouched by cloning.
	if got := content(t, m, "/d/a"); string(got) != "hello world" {
		t.Fatalf("live content %q", got)
	}
}

func mustList(t *testing.T, fs FS, dir string) []string {
	t.Helper()
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestMemFSRenameDurableOnlyAfterSyncDir(t *testing.T) {
	m := NewMemFS()
	if err := WriteFileAtomic(m, "/cp", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	f, _ := m.Create("/cp.tmp")
	mustWrite(t, f, []byte("v2"), 0)
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := m.Rename("/cp.tmp", "/cp"); err != nil {
		t.Fatal(err)
	}
	if got := content(t, m.CrashClone(nil), "/cp"); string(got) != "v1" {
		t.Fatalf("rename without directory sync survived: %q", got)
	}
	if err := m.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	if got := content(t, m.CrashClone(nil), "/cp"); string(got) != "v2" {
		t.Fatalf("synced rename lost: %q", got)
	}
}

func TestMemFSTruncateAndSyncModel(t *testing.T) {
	m := NewMemFS()
	f, _ := m.Create("/x")
	if err := m.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, []byte("0123456789"), 0)
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(4); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, []byte("ab"), 4)
	if got := content(t, m.CrashClone(nil), "/x"); string(got) != "0123456789" {
		t.Fatalf("unsynced truncate applied: %q", got)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := content(t, m.CrashClone(nil), "/x"); string(got) != "0123ab" {
		t.Fatalf("synced state %q", got)
	}
}

func TestMemFSFaults(t *testing.T) {
	m := NewMemFS()
	f, _ := m.Create("/x")
	m.SetFault(func(op Op, name string, size int) (int, error) {
		if op == OpWrite && size > 4 {
			return 3, ErrInjected // torn write
		}
		if op == OpSync {
			return 0, syscall.EIO
		}
		return 0, nil
	})
	n, err := f.WriteAt([]byte("abcdefgh"), 0)
	if n != 3 || !errors.Is(err, ErrInjected) {
		t.Fatalf("torn write: n=%d err=%v", n, err)
	}
	if got := content(t, m, "/x"); string(got) != "abc" {
		t.Fatalf("torn write left %q", got)
	}
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("sync error = %v", err)
	}
	m.SetFault(nil)
	m.SetCapacity(5)
	n, err = f.WriteAt([]byte("defgh"), 3)
	if n != 2 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("ENOSPC write: n=%d err=%v", n, err)
	}
}

func TestMemFSRemoveKeepsOpenHandles(t *testing.T) {
	m := NewMemFS()
	f, _ := m.Create("/x")
	mustWrite(t, f, []byte("data"), 0)
	r, err := m.Open("/x")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Remove("/x"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := r.ReadAt(buf, 0); err != nil || string(buf) != "data" {
		t.Fatalf("read after remove: %q %v", buf, err)
	}
	if _, err := m.Open("/x"); err == nil {
		t.Fatal("removed file still opens")
	}
	r.Close()
	if _, err := r.ReadAt(buf, 0); err == nil {
		t.Fatal("read on closed file succeeded")
	}
	if _, err := r.WriteAt(buf, 0); err == nil {
		t.Fatal("write through closed handle succeeded")
	}
}

// TestFSContract runs the same checks against OS and MemFS.
func TestFSContract(t *testing.T) {
	for name, fs := range map[string]FS{"os": OS, "mem": NewMemFS()} {
		t.Run(name, func(t *testing.T) {
			root := "/work-test"
			if name == "os" {
				root = t.TempDir()
			}
			dir := root + "/p-0"
			if err := fs.MkdirAll(dir); err != nil {
				t.Fatal(err)
			}
			f, err := fs.Create(dir + "/a.log")
			if err != nil {
				t.Fatal(err)
			}
			mustWrite(t, f, []byte("abcdef"), 0)
			mustWrite(t, f, []byte("XY"), 2)
			if sz, _ := f.Size(); sz != 6 {
				t.Fatalf("size %d", sz)
			}
			buf := make([]byte, 10)
			n, err := f.ReadAt(buf, 1)
			if n != 5 || err != io.EOF || string(buf[:n]) != "bXYef" {
				t.Fatalf("ReadAt: %d %v %q", n, err, buf[:n])
			}
			if err := f.Truncate(3); err != nil {
				t.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
			_, fdOK := f.SysFd()
			if fdOK != (name == "os") {
				t.Fatalf("SysFd ok=%v", fdOK)
			}
			f.Close()
			if err := WriteFileAtomic(fs, dir+"/cp", []byte("1\n")); err != nil {
				t.Fatal(err)
			}
			if got := mustList(t, fs, dir); len(got) != 2 || got[0] != "a.log" || got[1] != "cp" {
				t.Fatalf("List: %v", got)
			}
			if st, err := fs.Stat(dir + "/a.log"); err != nil || st.Size != 3 || st.IsDir {
				t.Fatalf("Stat: %+v %v", st, err)
			}
			if _, err := fs.OpenReadWrite(dir + "/missing"); err == nil {
				t.Fatal("opened a missing file")
			}
			if err := fs.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if _, err := fs.Stat(dir); err == nil {
				t.Fatal("directory survived RemoveAll")
			}
		})
	}
}
