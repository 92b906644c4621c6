package partition

import (
	"encoding/binary"
	"io"
	"log/slog"
	"testing"

	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// testBatch builds an uncompressed RecordBatch v2 of n records with
// valueSize-byte values (base offset 0, as a producer sends it).
func testBatch(n, valueSize int) []byte {
	var recs []byte
	for i := range n {
		var rec []byte
		rec = append(rec, 0)
		rec = binary.AppendVarint(rec, int64(i))
		rec = binary.AppendVarint(rec, int64(i))
		rec = binary.AppendVarint(rec, -1)
		rec = binary.AppendVarint(rec, int64(valueSize))
		for j := range valueSize {
			rec = append(rec, byte(i+j))
		}
		rec = binary.AppendVarint(rec, 0)
		recs = binary.AppendVarint(recs, int64(len(rec)))
		recs = append(recs, rec...)
	}
	b := make([]byte, wire.BatchHeaderSize, wire.BatchHeaderSize+len(recs))
	be := binary.BigEndian
	be.PutUint32(b[wire.BatchLengthPos:], uint32(wire.BatchHeaderSize-wire.BatchLogOverhead+len(recs)))
	be.PutUint32(b[wire.BatchLeaderEpochPos:], 0xffffffff)
	b[wire.BatchMagicPos] = 2
	be.PutUint32(b[wire.BatchLastOffsetDeltaPos:], uint32(n-1))
	be.PutUint64(b[wire.BatchProducerIDPos:], 0xffffffffffffffff)
	be.PutUint16(b[wire.BatchProducerEpochPos:], 0xffff)
	be.PutUint32(b[wire.BatchBaseSequencePos:], 0xffffffff)
	be.PutUint32(b[wire.BatchRecordCountPos:], uint32(n))
	b = append(b, recs...)
	be.PutUint32(b[wire.BatchCRCPos:], wire.CRC32C(b[wire.BatchAttributesPos:]))
	return b
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testLog opens a log on a temporary directory, closed when t ends.
func testLog(t *testing.T, partition int32) *segment.Log {
	t.Helper()
	d, err := segment.OpenDir(t.TempDir(), segment.Options{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := d.Open("t", partition, segment.Config{FlushPolicy: segment.FlushNever})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Close()
		d.Close()
	})
	return l
}

// appendBatches appends count batches of n records and returns each
// batch's size on disk.
func appendBatches(t *testing.T, l *segment.Log, count, n, valueSize int) []int64 {
	t.Helper()
	var sizes []int64
	for range count {
		b := testBatch(n, valueSize)
		if _, err := l.Append(b, 0, 0); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, int64(len(b)))
	}
	return sizes
}

func regionChunks(rs []segment.Region) []wire.Chunk {
	cs := make([]wire.Chunk, len(rs))
	for i, r := range rs {
		cs[i] = r.Chunk()
	}
	return cs
}

// batchOffsets lists the base offsets of the batches in a read.
func batchOffsets(t *testing.T, res *segment.ReadResult) []int64 {
	t.Helper()
	if res == nil {
		return nil
	}
	raw, err := (&wire.Response{Chunks: regionChunks(res.Regions)}).AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for len(raw) > 0 {
		h, err := wire.ParseBatchHeader(raw)
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, h.BaseOffset)
		raw = raw[h.Size():]
	}
	return offs
}

func TestReadPartitionRules(t *testing.T) {
	l := testLog(t, 0)
	sizes := appendBatches(t, l, 5, 10, 100) // offsets 0-49, 10 per batch
	hw := int64(40)                          // the last batch is not committed yet

	read := func(offset, maxBytes int64, epoch int32) *FetchSlot {
		f := &FetchSlot{Offset: offset, MaxBytes: maxBytes, LeaderEpoch: epoch}
		if err := readPartition(l, hw, 3, f); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.Release)
		return f
	}
	eq := func(a, b []int64) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}

	// Inside a batch: that batch comes whole, then what fits.
	f := read(15, sizes[0]*2, -1)
	if f.Code != 0 || !eq(batchOffsets(t, f.Res), []int64{10, 20}) {
		t.Fatalf("offset 15: code %v batches %v", f.Code, batchOffsets(t, f.Res))
	}
	if f.HW != 40 || f.LSO != 40 || f.LogStart != 0 {
		t.Fatalf("offsets reported: hw %d lso %d start %d", f.HW, f.LSO, f.LogStart)
	}
	// A budget smaller than the first batch still returns it.
	if f := read(0, 1, -1); !eq(batchOffsets(t, f.Res), []int64{0}) {
		t.Fatalf("first batch rule: %v", batchOffsets(t, f.Res))
	}
	// Never past the high watermark, however large the budget.
	if f := read(0, 1<<20, -1); !eq(batchOffsets(t, f.Res), []int64{0, 10, 20, 30}) {
		t.Fatalf("hw bound: %v", batchOffsets(t, f.Res))
	}
	// Between the high watermark and the log end: nothing, no error.
	if f := read(45, 1<<20, -1); f.Code != 0 || f.Res != nil || f.HW != 40 {
		t.Fatalf("offset 45: code %v res %v", f.Code, f.Res)
	}
	if f := read(50, 1<<20, -1); f.Code != 0 || f.Res != nil {
		t.Fatalf("log end: code %v", f.Code)
	}
	// Past the log end.
	if f := read(51, 1<<20, -1); f.Code != kerr.OffsetOutOfRange || f.HW != -1 {
		t.Fatalf("offset 51: code %v hw %d", f.Code, f.HW)
	}
	// Leader epochs: equal or unset pass, older is fenced, newer unknown.
	if f := read(0, 1, 3); f.Code != 0 {
		t.Fatalf("same epoch: %v", f.Code)
	}
	if f := read(0, 1, 2); f.Code != kerr.FencedLeaderEpoch || f.Res != nil {
		t.Fatalf("old epoch: %v", f.Code)
	}
	if f := read(0, 1, 4); f.Code != kerr.UnknownLeaderEpoch {
		t.Fatalf("new epoch: %v", f.Code)
	}
	// Below the log start.
	if _, err := l.DeleteRecordsBefore(20); err != nil {
		t.Fatal(err)
	}
	if f := read(5, 1<<20, -1); f.Code != kerr.OffsetOutOfRange {
		t.Fatalf("below start: %v", f.Code)
	}
	if f := read(20, 1<<20, -1); f.Code != 0 || f.LogStart != 20 || !eq(batchOffsets(t, f.Res), []int64{20, 30}) {
		t.Fatalf("at start: %v start %d %v", f.Code, f.LogStart, batchOffsets(t, f.Res))
	}
}

func TestPartitionViewEmptyAt(t *testing.T) {
	var nilView *View
	if _, _, ok := nilView.EmptyAt(0, -1); ok {
		t.Fatal("a nil view answered")
	}
	v := NewView()
	if _, _, ok := v.EmptyAt(0, -1); ok {
		t.Fatal("a view with no log answered")
	}
	l := testLog(t, 0)
	appendBatches(t, l, 1, 4, 10)
	v.log.Store(l)
	v.epoch.Store(3)
	v.hw.Store(4)
	for _, c := range []struct {
		offset int64
		epoch  int32
		ok     bool
	}{{4, -1, true}, {4, 3, true}, {4, 2, false}, {4, 5, false}, {3, -1, false}, {5, -1, false}} {
		hw, start, ok := v.EmptyAt(c.offset, c.epoch)
		if ok != c.ok || (ok && (hw != 4 || start != 0)) {
			t.Errorf("emptyAt(%d, epoch %d) = %d, %d, %v; want ok %v", c.offset, c.epoch, hw, start, ok, c.ok)
		}
	}
	if _, err := l.DeleteRecordsBefore(4); err != nil {
		t.Fatal(err)
	}
	if _, start, ok := v.EmptyAt(4, -1); !ok || start != 4 {
		t.Errorf("after DeleteRecords: log start %d, ok %v; want 4, true", start, ok)
	}
	v.hw.Store(-1)
	if _, _, ok := v.EmptyAt(4, -1); ok {
		t.Error("a hidden view answered")
	}
}
