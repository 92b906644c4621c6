package bench

import (
	"testing"
	"time"
)

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
