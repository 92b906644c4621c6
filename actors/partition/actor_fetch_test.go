package partition

import (
	"testing"

	"github.com/samsa-io/samsa/segment/segmenttest"
	"github.com/samsa-io/samsa/wire/kerr"
)

func TestReadPartitionRules(t *testing.T) {
	l := segmenttest.Log(t, 0)
	sizes := segmenttest.AppendBatches(t, l, 5, 10, 100) // offsets 0-49, 10 per batch
	hw := int64(40)                                      // the last batch is not committed yet

	read := func(offset, maxBytes int64, epoch int32) *FetchSlot {
		f := &FetchSlot{Offset: offset, MaxBytes: maxBytes, LeaderEpoch: epoch}
		if err := readPartition(l, hw, hw, 3, f); err != nil {
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
	if f.Code != 0 || !eq(segmenttest.BatchOffsets(t, f.Res), []int64{10, 20}) {
		t.Fatalf("offset 15: code %v batches %v", f.Code, segmenttest.BatchOffsets(t, f.Res))
	}
	if f.HW != 40 || f.LSO != 40 || f.LogStart != 0 {
		t.Fatalf("offsets reported: hw %d lso %d start %d", f.HW, f.LSO, f.LogStart)
	}
	// A budget smaller than the first batch still returns it.
	if f := read(0, 1, -1); !eq(segmenttest.BatchOffsets(t, f.Res), []int64{0}) {
		t.Fatalf("first batch rule: %v", segmenttest.BatchOffsets(t, f.Res))
	}
	// Never past the high watermark, however large the budget.
	if f := read(0, 1<<20, -1); !eq(segmenttest.BatchOffsets(t, f.Res), []int64{0, 10, 20, 30}) {
		t.Fatalf("hw bound: %v", segmenttest.BatchOffsets(t, f.Res))
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
	if f := read(20, 1<<20, -1); f.Code != 0 || f.LogStart != 20 || !eq(segmenttest.BatchOffsets(t, f.Res), []int64{20, 30}) {
		t.Fatalf("at start: %v start %d %v", f.Code, f.LogStart, segmenttest.BatchOffsets(t, f.Res))
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
	l := segmenttest.Log(t, 0)
	segmenttest.AppendBatches(t, l, 1, 4, 10)
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
