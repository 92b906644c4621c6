package segment

import (
	"errors"
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
)

// fillLog appends n single-batch appends of 3 records with 100-byte values.
func fillLog(t *testing.T, l *Log, n int) [][]byte {
	t.Helper()
	var out [][]byte
	for i := range n {
		b := makeBatch(3, 100, int64(1000+10*i), uint64(i))
		mustAppend(t, l, b, int64(1000+10*i))
		out = append(out, b)
	}
	return out
}

func TestReadRegionsBoundaries(t *testing.T) {
	d := testDir(t, nil)
	l, _ := openLog(t, d, Config{SegmentBytes: 4000, IndexIntervalBytes: 500})
	batches := fillLog(t, l, 40) // ~370 bytes each, several segments
	if len(l.Segments()) < 3 {
		t.Fatalf("expected several segments, got %d", len(l.Segments()))
	}
	size := int64(len(batches[0]))

	// The byte limit ends the read on a batch boundary.
	res, err := l.Read(ReadRequest{Offset: 0, MaxBytes: 3*size + size/2, MaxOffset: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Bytes != 3*size || res.NextOffset != 9 || res.FirstOffset != 0 {
		t.Fatalf("limited read: bytes=%d next=%d first=%d", res.Bytes, res.NextOffset, res.FirstOffset)
	}
	for _, r := range res.Regions {
		if r.File == nil {
			t.Fatal("region has no file")
		}
		if c := r.Chunk(); c.Len() != r.Length {
			t.Fatal("chunk length differs")
		}
	}
	res.Release()

	// A read across segments returns one region per segment, all whole batches.
	res, err = l.Read(ReadRequest{Offset: 4, MaxBytes: 1 << 20, MaxOffset: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Regions) != len(l.Segments()) || res.NextOffset != l.LogEndOffset() || res.FirstOffset != 3 {
		t.Fatalf("full read: %d regions for %d segments, next %d, first %d", len(res.Regions), len(l.Segments()), res.NextOffset, res.FirstOffset)
	}
	res.Release()

	// The high watermark bounds the read; a batch straddling it is left out.
	b, next, err := l.ReadBytes(ReadRequest{Offset: 0, MaxBytes: 1 << 20, MaxOffset: 10})
	if err != nil || next != 9 || int64(len(b)) != 3*size {
		t.Fatalf("bounded read: %d bytes, next %d, err %v", len(b), next, err)
	}
	// At the bound: nothing.
	if b, next, err := l.ReadBytes(ReadRequest{Offset: 9, MaxBytes: 1 << 20, MaxOffset: 9}); err != nil || len(b) != 0 || next != 9 {
		t.Fatalf("read at the bound: %d bytes, next %d, err %v", len(b), next, err)
	}

	// A budget smaller than one batch: empty, unless MinOneBatch.
	if b, _, _ := l.ReadBytes(ReadRequest{Offset: 30, MaxBytes: 10, MaxOffset: -1}); len(b) != 0 {
		t.Fatalf("read without MinOneBatch returned %d bytes", len(b))
	}
	b, next, err = l.ReadBytes(ReadRequest{Offset: 31, MaxBytes: 10, MaxOffset: -1, MinOneBatch: true})
	if err != nil || !equalBatches(b, batches[10]) || next != 33 {
		t.Fatalf("MinOneBatch read: next %d err %v", next, err)
	}

	// Out of range.
	if _, err := l.Read(ReadRequest{Offset: l.LogEndOffset() + 1, MaxBytes: 1}); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read past the end: %v", err)
	}
	if res, err := l.Read(ReadRequest{Offset: l.LogEndOffset(), MaxBytes: 100, MaxOffset: -1}); err != nil || res.Bytes != 0 {
		t.Fatalf("read at the end: %v", err)
	}
}

func TestReadRegionsSurviveDeletionAndEviction(t *testing.T) {
	mem := vfs.NewMemFS()
	d, err := OpenDir("/data", Options{FS: mem, MaxOpenFiles: 1, Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := openLog(t, d, Config{SegmentBytes: 1000})
	batches := fillLog(t, l, 10)
	res, err := l.Read(ReadRequest{Offset: 0, MaxBytes: 1 << 20, MaxOffset: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.DeleteRecordsBefore(l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	if len(l.Segments()) != 1 {
		t.Fatalf("segments after DeleteRecords: %d", len(l.Segments()))
	}
	if _, err := mem.Stat(res.Regions[0].File.(vfs.File).Name()); err == nil {
		t.Fatal("deleted segment file still exists")
	}
	// The regions still read the deleted segments' bytes.
	var got []byte
	for _, r := range res.Regions {
		buf := make([]byte, r.Length)
		if _, err := r.File.ReadAt(buf, r.Position); err != nil {
			t.Fatalf("region read after deletion: %v", err)
		}
		got = append(got, buf...)
	}
	var want []byte
	for _, b := range batches {
		want = append(want, b...)
	}
	if !equalBatches(got, want) {
		t.Fatal("region bytes differ after deletion")
	}
	res.Release()
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := d.OpenFiles(); n > 1 {
		t.Fatalf("%d files open after release, limit 1", n)
	}
}

func TestFileCacheBoundsOpenFiles(t *testing.T) {
	mem := vfs.NewMemFS()
	d, err := OpenDir("/data", Options{FS: mem, MaxOpenFiles: 4, Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	var logs []*Log
	for p := range int32(20) {
		l, _, err := d.Open("many", p, Config{SegmentBytes: 800})
		if err != nil {
			t.Fatal(err)
		}
		fillLog(t, l, 5)
		logs = append(logs, l)
	}
	for _, l := range logs {
		if err := l.Flush(); err != nil { // pending fsyncs hold their files
			t.Fatal(err)
		}
	}
	if n := d.OpenFiles(); n > 4 {
		t.Fatalf("%d files open, limit 4", n)
	}
	for _, l := range logs {
		readAll(t, l, 0)
		if n := d.OpenFiles(); n > 4 {
			t.Fatalf("%d files open after reads, limit 4", n)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}
