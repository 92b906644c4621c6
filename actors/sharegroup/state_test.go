package sharegroup

import (
	"reflect"
	"testing"
)

func TestSnapshotRecordRoundTrip(t *testing.T) {
	tp := TopicPartition{Topic: [16]byte{1, 2, 3}, Partition: 7}
	s := Snapshot{Start: 42, Batches: []StateBatch{{42, 44, Acknowledged, 1}, {45, 45, Available, 3}, {46, 50, Archived, 5}}}
	g, gotTP, got, err := DecodeSnapshot(EncodeSnapshotKey("orders", tp), EncodeSnapshotValue(s))
	if err != nil || g != "orders" || gotTP != tp || !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip: %q %v %+v %v", g, gotTP, got, err)
	}
	if g, gotTP, got, err := DecodeSnapshot(EncodeSnapshotKey("orders", tp), nil); err != nil || g != "orders" || gotTP != tp || got.Batches != nil {
		t.Fatalf("tombstone: %q %v %+v %v", g, gotTP, got, err)
	}
}

// FuzzDecodeSnapshot: no record of the state topic, however damaged,
// panics the loader; what decodes encodes back to the same bytes.
func FuzzDecodeSnapshot(f *testing.F) {
	tp := TopicPartition{Topic: [16]byte{9}, Partition: 1}
	f.Add(EncodeSnapshotKey("g", tp), EncodeSnapshotValue(Snapshot{Start: 3, Batches: []StateBatch{{3, 9, Archived, 2}}}))
	f.Add(EncodeSnapshotKey("", tp), EncodeSnapshotValue(Snapshot{}))
	f.Add([]byte{0, 0, 0xff, 0xff}, []byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		g, tp, s, err := DecodeSnapshot(key, value)
		if err != nil || value == nil {
			return
		}
		if k := EncodeSnapshotKey(g, tp); string(k) != string(key) {
			t.Fatalf("key %x decoded and encoded to %x", key, k)
		}
		if _, _, again, err := DecodeSnapshot(key, EncodeSnapshotValue(s)); err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("value %+v does not round-trip: %+v %v", s, again, err)
		}
	})
}
