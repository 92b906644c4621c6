package bench

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The clock is read again at every batch boundary (another partition, or
// an offset that does not follow) and every 256 records, never between.
func TestBatchClockReadsOncePerBatch(t *testing.T) {
	reads := 0
	c := batchClock{read: func() time.Time { reads++; return time.Unix(int64(reads), 0) }}
	rec := func(p int32, off int64) *kgo.Record { return &kgo.Record{Partition: p, Offset: off} }
	steps := []struct {
		r         *kgo.Record
		wantReads int
	}{
		{rec(0, 10), 1},
		{rec(0, 11), 1},
		{rec(0, 12), 1},
		{rec(1, 13), 2}, // another partition
		{rec(1, 14), 2},
		{rec(1, 20), 3}, // a gap: another batch of the same partition
		{rec(0, 21), 4},
	}
	for i, s := range steps {
		got := c.now(s.r)
		if reads != s.wantReads || !got.Equal(time.Unix(int64(s.wantReads), 0)) {
			t.Fatalf("step %d: %d clock reads (time %v), want %d", i, reads, got, s.wantReads)
		}
	}
	before := reads
	for off := int64(22); off < 22+600; off++ {
		c.now(rec(0, off))
	}
	if got := reads - before; got < 2 || got > 3 {
		t.Fatalf("600 records of one batch read the clock %d times, want 2 or 3 (every 256)", got)
	}
}

// A recycled record comes back clean, with its value stamped with the new
// send time, for both value sizes.
func TestRecordPoolStampsAndCleans(t *testing.T) {
	for _, size := range []int{100, 4} {
		p := newRecordPool(size)
		t0 := time.Unix(0, 1234567890)
		r := p.get(t0)
		if len(r.Value) != size || !p.sentAt(r).Equal(t0) || !r.Timestamp.Equal(t0) {
			t.Fatalf("size %d: value %d bytes, sent %v, timestamp %v", size, len(r.Value), p.sentAt(r), r.Timestamp)
		}
		r.Key, r.Partition, r.Offset = []byte("k"), 3, 99
		p.put(r)
		t1 := time.Unix(0, 987654321)
		r2 := p.get(t1)
		if r2.Key != nil || r2.Partition != 0 || r2.Offset != 0 || len(r2.Value) != size || !p.sentAt(r2).Equal(t1) {
			t.Fatalf("size %d: recycled record not clean: %+v", size, r2)
		}
	}
}
