package segment

import (
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
)

func TestFileCacheSecondChanceAndTryAcquire(t *testing.T) {
	mem := vfs.NewMemFS()
	for _, p := range []string{"/a", "/b", "/c"} {
		f, err := mem.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	c := newFileCache(mem, 2)
	acq := func(p string) *handle {
		t.Helper()
		h, err := c.acquire(p)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	ha := acq("/a")
	ha.release()
	hb := acq("/b")
	hb.release()
	// /a is the least recently used, but an append touched it since.
	if !ha.tryAcquire() {
		t.Fatal("tryAcquire failed on a cached handle")
	}
	ha.release()
	acq("/c").release()
	if !ha.cached.Load() || hb.cached.Load() {
		t.Fatalf("evicted the used handle: a cached %v, b cached %v", ha.cached.Load(), hb.cached.Load())
	}
	if hb.tryAcquire() {
		t.Fatal("tryAcquire revived an evicted, closed handle")
	}
	if n := c.live.Load(); n != 2 {
		t.Fatalf("%d files open, want 2", n)
	}
	// An evicted handle still referenced stays usable by its holder, but
	// tryAcquire sends new users to the cache.
	if !ha.tryAcquire() {
		t.Fatal("tryAcquire failed on a cached handle")
	}
	c.forget("/a")
	if ha.tryAcquire() {
		t.Fatal("tryAcquire took an evicted handle")
	}
	if _, err := ha.f.WriteAt([]byte("x"), 0); err != nil {
		t.Fatalf("held handle closed by eviction: %v", err)
	}
	ha.release()
	if n := c.live.Load(); n != 1 {
		t.Fatalf("%d files open after the last release, want 1", n)
	}
}

// TestAppendsUnderEvictionPressure: three active segments share two
// cache slots, so appends keep losing their handle and must reopen it;
// every byte lands and the bound holds.
func TestAppendsUnderEvictionPressure(t *testing.T) {
	d, err := OpenDir("/data", Options{FS: vfs.NewMemFS(), MaxOpenFiles: 2, Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	var logs []*Log
	want := make([][]byte, 3)
	for p := range int32(3) {
		l, _, err := d.Open("evict", p, Config{FlushPolicy: FlushNever})
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, l)
	}
	for i := range 30 {
		p := i % 3
		b := makeBatch(1, 10+i, int64(i), uint64(i))
		mustAppend(t, logs[p], b, 0) // sets b's offset and epoch as stored
		want[p] = append(want[p], b...)
		if n := d.OpenFiles(); n > 2 {
			t.Fatalf("%d files open, limit 2", n)
		}
	}
	for p, l := range logs {
		got, _, err := l.ReadBytes(ReadRequest{Offset: 0, MaxBytes: 1 << 20, MaxOffset: -1})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want[p]) || !equalBatches(got, want[p]) {
			t.Fatalf("partition %d reads back %d bytes, appended %d", p, len(got), len(want[p]))
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}
