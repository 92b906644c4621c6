package segment

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
)

// An offset index whose every position is 7 bytes off passes every check
// that does not read the log (whole entries, increasing, inside the
// segment). Reads through it must still return exactly the batches
// asked for: the batch at an entry's position must be the one the entry
// names, else the index is rebuilt from the log (with a log line) and the
// read retried.
func TestShiftedOffsetIndexIsCaughtAndRebuilt(t *testing.T) {
	cfg := Config{SegmentBytes: 4000, IndexIntervalBytes: 300}
	mem, d, l, batches := filledLog(t, cfg, 40, 4)
	segs := l.Segments()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	old := segs[1] // a closed segment, its index read from disk on first use
	idxPath := strings.TrimSuffix(old.Path, LogSuffix) + IndexSuffix
	good, _ := vfs.ReadFile(mem, idxPath)
	if len(good) < 2*offsetEntrySize {
		t.Fatalf("index of %d bytes", len(good))
	}
	shiftIndex(t, mem, idxPath, 7)
	shifted, _ := vfs.ReadFile(mem, idxPath)
	if _, err := decodeOffsetIndex(shifted, old.Size, old.NextOffset-old.BaseOffset); err != nil {
		t.Fatalf("the shifted index must look sane: %v", err)
	}

	// A consumer starting inside the segment gets the batch holding its
	// offset, whole, at every offset.
	logger, lines := captureLog()
	l, _ = openLog(t, testDirLog(t, mem, logger), cfg)
	for off := old.BaseOffset; off < old.NextOffset; off++ {
		b, next, err := l.ReadBytes(ReadRequest{Offset: off, MaxBytes: 1000, MaxOffset: -1, MinOneBatch: true})
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		h, err := wire.ValidateBatch(b[:min(len(b), len(batches[0]))])
		if err != nil || h.BaseOffset > off || h.LastOffset() < off || next <= off {
			t.Fatalf("read at %d: batch %d..%d (%v), next %d", off, h.BaseOffset, h.LastOffset(), err, next)
		}
	}
	if !strings.Contains(lines.String(), "offset index does not match the log") {
		t.Fatalf("no log line for the rebuilt index:\n%s", lines)
	}
	if got, _ := vfs.ReadFile(mem, idxPath); !equalBatches(got, good) {
		t.Fatal("the rebuilt index differs from the one the log was written with")
	}

	// The same through the timestamp lookup, the header scan and a whole
	// read, with the damage fresh again.
	shiftIndex(t, mem, idxPath, 7)
	l, _ = openLog(t, testDirLog(t, mem.CrashClone(nil), quietLogger), cfg)
	if r, err := l.OffsetForTimestamp(1000 + 10*(old.BaseOffset/3+1)); err != nil || r.Offset != old.BaseOffset+3 {
		t.Fatalf("timestamp lookup: %+v %v", r, err)
	}
	n := 0
	if err := l.ScanBatches(old.BaseOffset+4, func(*wire.BatchHeader) error { n++; return nil }); err != nil || n != len(batches)-int(old.BaseOffset/3)-1 {
		t.Fatalf("header scan: %d batches, %v", n, err)
	}
	requireBatches(t, l, 0, batches, "a read through a shifted index")
}

// shiftIndex adds delta to every position of the offset index at path.
func shiftIndex(t *testing.T, fs vfs.FS, path string, delta uint32) {
	t.Helper()
	b, err := vfs.ReadFile(fs, path)
	if err != nil || len(b) == 0 {
		t.Fatalf("index %s: %d bytes, %v", path, len(b), err)
	}
	for i := 0; i < len(b); i += offsetEntrySize {
		p := b[i+4:]
		binary.BigEndian.PutUint32(p, binary.BigEndian.Uint32(p)+delta)
	}
	if err := vfs.WriteFileAtomic(fs, path, b); err != nil {
		t.Fatal(err)
	}
}

// After a clean shutdown the active segment's index comes from disk too
// and only its tail is scanned, from the last entry: that entry is
// checked, and a wrong index rebuilt, before the log end is trusted.
func TestShiftedActiveIndexAfterCleanShutdown(t *testing.T) {
	cfg := Config{IndexIntervalBytes: 300}
	mem, d, l, batches := filledLog(t, cfg, 20, 1)
	leo := l.LogEndOffset()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	shiftIndex(t, mem, strings.TrimSuffix(activeLog, LogSuffix)+IndexSuffix, 7)
	l, rep := openLog(t, testDir(t, mem), cfg)
	if !rep.Clean || rep.IndexesRebuilt != 1 || l.LogEndOffset() != leo {
		t.Fatalf("clean open with a shifted active index: %+v, log end %d want %d", rep, l.LogEndOffset(), leo)
	}
	requireBatches(t, l, 0, batches, "after the active index was rebuilt")
	for off := int64(0); off < leo; off += 2 {
		r, err := l.Read(ReadRequest{Offset: off, MaxBytes: 1, MaxOffset: -1, MinOneBatch: true})
		if err != nil || r.FirstOffset > off || r.NextOffset <= off {
			t.Fatalf("read at %d: %+v %v", off, r, err)
		}
		r.Release()
	}
}
