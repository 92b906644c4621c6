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
		r := p.get(t0, true)
		if sent, timed := p.sentAt(r); len(r.Value) != size || !timed || !sent.Equal(t0) || !r.Timestamp.Equal(t0) {
			t.Fatalf("size %d: value %d bytes, sent %v (timed %v), timestamp %v", size, len(r.Value), sent, timed, r.Timestamp)
		}
		r.Key, r.Partition, r.Offset = []byte("k"), 3, 99
		p.put(r)
		t1 := time.Unix(0, 987654321)
		r2 := p.get(t1, true)
		if sent, _ := p.sentAt(r2); r2.Key != nil || r2.Partition != 0 || r2.Offset != 0 || len(r2.Value) != size || !sent.Equal(t1) {
			t.Fatalf("size %d: recycled record not clean: %+v", size, r2)
		}
		// Recycled again untimed: it must not pass for timed with the
		// previous send time.
		p.put(r2)
		r3 := p.get(t1, false)
		if _, timed := p.sentAt(r3); timed || !r3.Timestamp.Equal(t1) {
			t.Fatalf("size %d: untimed record reads as timed, or lost its timestamp %v", size, r3.Timestamp)
		}
		p.put(r3)
	}
}
