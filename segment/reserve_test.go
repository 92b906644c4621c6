package segment

import (
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
)

// reservingFS is a MemFS whose .log files accept reservations and record
// them, and count truncations to their own size (which is how the log
// gives reserved space back).
type reservingFS struct {
	*vfs.MemFS
	mu        sync.Mutex
	reserved  [][2]int64 // [off, n] of every Reserve, in order
	giveBacks int        // truncations of a .log file to its current size
	reserve   error      // what Reserve returns
}

type reservingFile struct {
	vfs.File
	fs *reservingFS
}

func (f reservingFile) Reserve(off, n int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.fs.reserved = append(f.fs.reserved, [2]int64{off, n})
	return f.fs.reserve
}

func (f reservingFile) Truncate(size int64) error {
	if cur, err := f.Size(); err == nil && cur == size {
		f.fs.mu.Lock()
		f.fs.giveBacks++
		f.fs.mu.Unlock()
	}
	return f.File.Truncate(size)
}

func (r *reservingFS) wrap(f vfs.File, name string) vfs.File {
	if strings.HasSuffix(name, LogSuffix) {
		return reservingFile{f, r}
	}
	return f
}

func (r *reservingFS) Create(name string) (vfs.File, error) {
	f, err := r.MemFS.Create(name)
	if err != nil {
		return nil, err
	}
	return r.wrap(f, name), nil
}

func (r *reservingFS) OpenReadWrite(name string) (vfs.File, error) {
	f, err := r.MemFS.OpenReadWrite(name)
	if err != nil {
		return nil, err
	}
	return r.wrap(f, name), nil
}

func (r *reservingFS) snapshot() ([][2]int64, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][2]int64(nil), r.reserved...), r.giveBacks
}

func reservingDir(t *testing.T, fs *reservingFS, step int64) *Dir {
	t.Helper()
	d, err := OpenDir("/data", Options{FS: fs, Logger: quietLogger, ReserveBytes: step})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// reserveBatch is the batch the reservation tests append: about 1 KiB.
var reserveBatch = makeBatch(1, 1000, 1, 1)

// reservingLog opens a log on fs with reservations of step bytes and
// appends n reserveBatch; the directory closes when the test ends.
func reservingLog(t *testing.T, fs *reservingFS, step int64, n int) *Log {
	t.Helper()
	d := reservingDir(t, fs, step)
	t.Cleanup(func() { d.Close() })
	l, _ := openLog(t, d, Config{FlushPolicy: FlushNever})
	for range n {
		mustAppend(t, l, reserveBatch, 1)
	}
	return l
}

func TestReserveAheadInSteps(t *testing.T) {
	fs := &reservingFS{MemFS: vfs.NewMemFS()}
	reservingLog(t, fs, 4096, 10)
	size := int64(len(reserveBatch))
	got, _ := fs.snapshot()
	// Each reservation starts where the last ended and runs to the next
	// multiple of the step at or past the append's end.
	var want [][2]int64
	var to int64
	for i := int64(1); i <= 10; i++ {
		if end := i * size; end > to {
			next := (end + 4095) / 4096 * 4096
			want = append(want, [2]int64{to, next - to})
			to = next
		}
	}
	if len(got) != len(want) {
		t.Fatalf("reservations %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("reservation %d: %v, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
	if len(want) >= 10 {
		t.Fatalf("test batches too large: %d reservations for 10 appends", len(want))
	}
}

func TestReserveGivenBackOnRollCloseAndTruncate(t *testing.T) {
	fs := &reservingFS{MemFS: vfs.NewMemFS()}
	d := reservingDir(t, fs, 1<<20)
	l, _ := openLog(t, d, Config{FlushPolicy: FlushNever})
	batch := makeBatch(1, 1000, 1, 1)
	mustAppend(t, l, batch, 1)
	if err := l.Roll(1); err != nil {
		t.Fatal(err)
	}
	if _, back := fs.snapshot(); back != 1 {
		t.Fatalf("roll gave reserved space back %d times, want 1", back)
	}
	// The new active segment reserves from its own start.
	mustAppend(t, l, batch, 1)
	res, _ := fs.snapshot()
	if last := res[len(res)-1]; last != [2]int64{0, 1 << 20} {
		t.Fatalf("first reservation of the new segment %v, want [0 %d]", last, 1<<20)
	}
	// A truncation gives everything past the cut back: the next append
	// reserves again from the new end.
	r := mustAppend(t, l, batch, 1)
	if _, err := l.TruncateTo(r.FirstOffset); err != nil {
		t.Fatal(err)
	}
	before := len(res)
	mustAppend(t, l, batch, 1)
	res, _ = fs.snapshot()
	if len(res) != before+1 || res[len(res)-1][0] != int64(len(batch)) {
		t.Fatalf("after truncation: reservations %v, want one more starting at %d", res, len(batch))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, back := fs.snapshot(); back != 2 {
		t.Fatalf("close gave reserved space back %d times in all, want 2 (roll and close)", back)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// What was appended is all there after reopening: reservations never
	// changed a file's size.
	d = reservingDir(t, fs, 1<<20)
	defer d.Close()
	l, _ = openLog(t, d, Config{FlushPolicy: FlushNever})
	if n := len(readAll(t, l, 0)); n != 3 {
		t.Fatalf("%d batches after reopening, want 3", n)
	}
}

func TestReserveFailuresAreNotErrors(t *testing.T) {
	t.Run("no space: appends go on, retried a step later", func(t *testing.T) {
		fs := &reservingFS{MemFS: vfs.NewMemFS(), reserve: syscall.ENOSPC}
		reservingLog(t, fs, 4096, 8)
		if res, _ := fs.snapshot(); len(res) < 2 || len(res) >= 8 {
			t.Fatalf("%d reservation attempts for 8 appends over 2 steps each, want one per step", len(res))
		}
	})
	t.Run("unsupported: asked once, then never again", func(t *testing.T) {
		fs := &reservingFS{MemFS: vfs.NewMemFS(), reserve: errors.ErrUnsupported}
		l := reservingLog(t, fs, 4096, 8)
		if err := l.Roll(1); err != nil {
			t.Fatal(err)
		}
		mustAppend(t, l, reserveBatch, 1)
		if res, back := fs.snapshot(); len(res) != 1 || back != 0 {
			t.Fatalf("%d reservations and %d give-backs, want 1 and 0", len(res), back)
		}
	})
	t.Run("disabled", func(t *testing.T) {
		fs := &reservingFS{MemFS: vfs.NewMemFS()}
		l := reservingLog(t, fs, -1, 1)
		if err := l.Roll(1); err != nil {
			t.Fatal(err)
		}
		if res, back := fs.snapshot(); len(res) != 0 || back != 0 {
			t.Fatalf("%d reservations and %d give-backs with ReserveBytes < 0", len(res), back)
		}
	})
}
