package vfs

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

func TestErrorFSReportsZeroAfterAPartialWrite(t *testing.T) {
	mem := NewMemFS()
	e := NewErrorFS(mem, true)
	f, err := e.Create("/a.log")
	if err != nil {
		t.Fatal(err)
	}
	e.SetFault(NoSpaceAfter(6))
	if n, err := f.WriteAt([]byte("abcd"), 0); n != 4 || err != nil {
		t.Fatalf("write within the budget: %d %v", n, err)
	}
	n, err := f.WriteAt([]byte("efgh"), 4)
	if n != 0 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write past the budget: %d %v", n, err)
	}
	if got, _ := ReadFile(mem, "/a.log"); string(got) != "abcdef" {
		t.Fatalf("file holds %q: the part that fitted must land", got)
	}
	if n, err := f.WriteAt([]byte("x"), 6); n != 0 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full disk: %d %v", n, err)
	}
	// MemFS's own capacity limit shows through the same way.
	e.SetFault(nil)
	mem.SetCapacity(8)
	if n, err := f.WriteAt([]byte("ghij"), 6); n != 0 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write past capacity: %d %v", n, err)
	}
	if st, _ := mem.Stat("/a.log"); st.Size != 8 {
		t.Fatalf("size %d after a partial write to capacity", st.Size)
	}
}

func TestErrorFSFailOpComposes(t *testing.T) {
	e := NewErrorFS(NewMemFS(), false)
	e.SetFault(FirstFault(
		FailOp(OpSync, func(n string) bool { return strings.HasSuffix(n, ".log") }, syscall.EIO),
		FailOp(OpRename, func(string) bool { return true }, ErrInjected),
	))
	f, _ := e.Create("/a.log")
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("sync: %v", err)
	}
	g, _ := e.Create("/b.idx")
	if err := g.Sync(); err != nil {
		t.Fatalf("sync of another file: %v", err)
	}
	if err := e.Rename("/b.idx", "/c.idx"); !errors.Is(err, ErrInjected) {
		t.Fatalf("rename: %v", err)
	}
	if n, err := f.WriteAt([]byte("ab"), 0); n != 2 || err != nil {
		t.Fatalf("write: %d %v", n, err)
	}
}
