package segment

import (
	"testing"

	"github.com/samsa-io/samsa/wire"
)

func TestScanBatchesVisitsHeadersAcrossSegments(t *testing.T) {
	d := testDir(t, nil)
	defer d.Close()
	l, _ := openLog(t, d, Config{SegmentBytes: 600})
	var bases []int64
	for i := range 6 {
		r := mustAppend(t, l, makeBatch(3, 60, 1000, uint64(i)), 1000)
		bases = append(bases, r.FirstOffset)
	}
	if len(l.Segments()) < 2 {
		t.Fatalf("want several segments, got %d", len(l.Segments()))
	}
	scan := func(from int64) []int64 {
		var got []int64
		if err := l.ScanBatches(from, func(h *wire.BatchHeader) error {
			if h.NumRecords != 3 {
				t.Fatalf("header at %d: %d records", h.BaseOffset, h.NumRecords)
			}
			got = append(got, h.BaseOffset)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := scan(0); len(got) != 6 || got[0] != 0 || got[5] != bases[5] {
		t.Fatalf("scan from 0: %v, want %v", got, bases)
	}
	// From the middle of a batch: that batch is included.
	if got := scan(bases[3] + 1); len(got) != 3 || got[0] != bases[3] {
		t.Fatalf("scan from %d: %v", bases[3]+1, got)
	}
	if got := scan(l.LogEndOffset()); len(got) != 0 {
		t.Fatalf("scan from the end: %v", got)
	}
	// Below the log start it starts at the log start.
	if _, err := l.DeleteRecordsBefore(bases[2]); err != nil {
		t.Fatal(err)
	}
	if got := scan(0); len(got) == 0 || got[0] > bases[2] || got[len(got)-1] != bases[5] {
		t.Fatalf("scan after DeleteRecords: %v", got)
	}
}
