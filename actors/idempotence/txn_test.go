package idempotence

import (
	"errors"
	"testing"

	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
)

func txnHdr(pid int64, epoch int16, seq int32, records int32) *wire.BatchHeader {
	h := hdr(pid, epoch, seq, records)
	h.Attributes |= wire.AttrTransactional
	return h
}

func TestTransactionsOpenAndClose(t *testing.T) {
	s := New()
	if _, ok := s.FirstUnstableOffset(); ok {
		t.Fatal("an empty state has an open transaction")
	}
	appendAt(t, s, txnHdr(1, 0, 0, 2), 10) // producer 1 opens at 10
	appendAt(t, s, txnHdr(2, 0, 0, 1), 12) // producer 2 opens at 12
	appendAt(t, s, txnHdr(1, 0, 2, 1), 13) // still open at 10
	if first, ok := s.FirstUnstableOffset(); !ok || first != 10 {
		t.Fatalf("first unstable %d %v, want 10", first, ok)
	}
	if c := s.Check(hdr(1, 0, 3, 1)); c.Verdict != Reject || c.Code != codeInvalidTxnState {
		t.Fatalf("a plain batch inside a transaction: %+v, want INVALID_TXN_STATE", c)
	}
	done, ok := s.RecordMarker(1, 0, Marker{Commit: false, CoordinatorEpoch: 4}, 14, 2000)
	if !ok || done != (CompletedTxn{ProducerID: 1, FirstOffset: 10, LastOffset: 14, Aborted: true}) {
		t.Fatalf("marker ended %+v %v", done, ok)
	}
	if first, ok := s.FirstUnstableOffset(); !ok || first != 12 {
		t.Fatalf("first unstable after 1's abort: %d %v, want 12", first, ok)
	}
	if _, ok := s.RecordMarker(1, 0, Marker{Commit: false, CoordinatorEpoch: 4}, 15, 2000); ok {
		t.Fatal("a repeated marker ended a transaction again")
	}
	if c := s.CheckMarker(1, 0, Marker{CoordinatorEpoch: 3}); c.Code != codeCoordinatorFenced {
		t.Fatalf("marker from an older coordinator: %+v", c)
	}
	if _, ok := s.RecordMarker(2, 0, Marker{Commit: true, CoordinatorEpoch: 4}, 16, 2000); !ok {
		t.Fatal("2's commit ended nothing")
	}
	if _, ok := s.FirstUnstableOffset(); ok || s.OpenTransactions() != 0 {
		t.Fatal("transactions still open after both markers")
	}
}

// A marker at a bumped epoch (the coordinator fenced the producer) moves
// the producer to it, so its old epoch is refused.
func TestFencingMarker(t *testing.T) {
	s := New()
	appendAt(t, s, txnHdr(1, 0, 0, 1), 0)
	if c := s.CheckMarker(1, 1, Marker{}); c.Verdict != Append {
		t.Fatalf("fencing marker refused: %+v", c)
	}
	s.RecordMarker(1, 1, Marker{}, 1, 0)
	if c := s.Check(txnHdr(1, 0, 1, 1)); c.Code != codeInvalidProducerEpoch {
		t.Fatalf("the fenced epoch writes: %+v", c)
	}
	if c := s.CheckMarker(1, 0, Marker{}); c.Code != codeInvalidProducerEpoch {
		t.Fatalf("a marker of the fenced epoch: %+v", c)
	}
}

func TestOpenTransactionsSurviveSnapshotsAndExpiry(t *testing.T) {
	s := New()
	appendAt(t, s, txnHdr(7, 2, 0, 1), 40)
	s.RecordMarker(8, 0, Marker{Commit: true, CoordinatorEpoch: 9}, 41, 1000)
	got, err := Decode(s.Encode(42), 42)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if first, ok := got.FirstUnstableOffset(); !ok || first != 40 {
		t.Fatalf("after a snapshot: first unstable %d %v, want 40", first, ok)
	}
	if p, _ := got.Producer(8); p.CoordinatorEpoch != 9 {
		t.Fatalf("coordinator epoch %d after a snapshot, want 9", p.CoordinatorEpoch)
	}
	if n := got.Expire(1<<40, 1); n != 1 {
		t.Fatalf("expired %d producers, want 1 (the one with a transaction open stays)", n)
	}
	got.TruncateTo(40)
	if _, ok := got.FirstUnstableOffset(); ok {
		t.Fatal("a transaction whose first batch was truncated away is still open")
	}
}

func TestVersion1SnapshotsStillDecode(t *testing.T) {
	// Version 1 as it was written: one producer (id 5, epoch 1, last
	// timestamp 9) with no batches, taken at offset 3.
	b := []byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1,
		0, 0, 0, 0, 0, 0, 0, 5, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9, 0}
	putCRC(b)
	s, err := Decode(b, 3)
	if err != nil {
		t.Fatalf("decode v1: %v", err)
	}
	if _, err := Decode(b, 4); !errors.Is(err, ErrBadSnapshot) {
		t.Fatalf("a samsa v1 snapshot taken at 3 but named 4 decoded: %v", err)
	}
	if p, ok := s.Producer(5); !ok || p.Epoch != 1 || p.TxnFirstOffset != -1 {
		t.Fatalf("producer 5: %+v %v", p, ok)
	}
}

func putCRC(b []byte) {
	c := wire.CRC32C(b[6:])
	b[2], b[3], b[4], b[5] = byte(c>>24), byte(c>>16), byte(c>>8), byte(c)
}

func TestMarkerRecords(t *testing.T) {
	for _, m := range []Marker{{Commit: true, CoordinatorEpoch: 3}, {Commit: false, CoordinatorEpoch: 0}} {
		key, value := MarkerRecord(m)
		batch := batchtest.Build([]batchtest.Record{{Key: key, Value: value}},
			batchtest.Producer(1, 0, -1), batchtest.Attributes(wire.AttrControl|wire.AttrTransactional))
		got, err := ParseMarker(batch)
		if err != nil || got != m {
			t.Fatalf("marker %+v came back %+v, %v", m, got, err)
		}
	}
	bad := batchtest.Build([]batchtest.Record{{Key: []byte{0, 0, 0, 7}, Value: make([]byte, 6)}}, batchtest.Attributes(wire.AttrControl))
	if _, err := ParseMarker(bad); err == nil {
		t.Fatal("control type 7 parsed")
	}
}

func TestMarkerBatchIsAValidControlBatch(t *testing.T) {
	b := MarkerBatch(9, 3, Marker{Commit: true, CoordinatorEpoch: 2}, 1234)
	h, err := wire.ValidateBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	if !h.IsControl() || !h.IsTransactional() || h.ProducerID != 9 || h.ProducerEpoch != 3 || h.NumRecords != 1 || h.MaxTimestamp != 1234 {
		t.Fatalf("header %+v", h)
	}
	m, err := ParseMarker(b)
	if err != nil || !m.Commit || m.CoordinatorEpoch != 2 {
		t.Fatalf("marker %+v %v", m, err)
	}
}
