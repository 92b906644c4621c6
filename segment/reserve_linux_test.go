package segment

import (
	"os"
	"syscall"
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
)

// allocated is the disk space a file holds, from its block count.
func allocated(t *testing.T, path string) (size, onDisk int64) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size(), st.Sys().(*syscall.Stat_t).Blocks * 512
}

// TestReserveOnDisk checks, on the real filesystem, that the active
// segment holds space past its end without a change of size, and that a
// roll and a close give it back.
func TestReserveOnDisk(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDir(dir, Options{FS: vfs.OS, Logger: quietLogger, ReserveBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := openLog(t, d, Config{FlushPolicy: FlushNever})
	batch := makeBatch(1, 64<<10, 1, 1)
	for range 4 {
		mustAppend(t, l, batch, 1)
	}
	first := l.Segments()[0]
	size, onDisk := allocated(t, first.Path)
	if size != first.Size {
		t.Fatalf("file size %d, segment size %d", size, first.Size)
	}
	if d.reserve.off.Load() {
		t.Skipf("this filesystem cannot reserve space (fallocate KEEP_SIZE)")
	}
	if onDisk < 8<<20 {
		t.Fatalf("active segment holds %d bytes on disk for %d of data, want the 8 MiB reserved", onDisk, size)
	}
	if err := l.Roll(1); err != nil {
		t.Fatal(err)
	}
	if _, onDisk := allocated(t, first.Path); onDisk >= size+64<<10 {
		t.Fatalf("rolled segment still holds %d bytes on disk for %d of data", onDisk, size)
	}
	mustAppend(t, l, batch, 1)
	active := l.Segments()[1]
	if _, onDisk := allocated(t, active.Path); onDisk < 8<<20 {
		t.Fatalf("new active segment holds %d bytes on disk, want the 8 MiB reserved", onDisk)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if size, onDisk := allocated(t, active.Path); onDisk >= size+64<<10 {
		t.Fatalf("closed segment still holds %d bytes on disk for %d of data", onDisk, size)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}
