package idempotence

import (
	"bytes"
	"errors"
	"testing"

	"github.com/samsa-io/samsa/wire"
)

func hdr(pid int64, epoch int16, seq int32, records int32) *wire.BatchHeader {
	return &wire.BatchHeader{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq,
		LastOffsetDelta: records - 1, NumRecords: records}
}

// appendAt checks and records a batch, failing the test unless it is
// accepted for append.
func appendAt(t *testing.T, s *State, h *wire.BatchHeader, offset int64) {
	t.Helper()
	if c := s.Check(h); c.Verdict != Append {
		t.Fatalf("batch seq %d: verdict %v code %d (%s), want Append", h.BaseSequence, c.Verdict, c.Code, c.Reason)
	}
	s.Record(h, offset, 1000+offset)
}

func TestNonIdempotentBatchesAlwaysAppend(t *testing.T) {
	s := New()
	h := hdr(-1, -1, -1, 3)
	for range 3 {
		appendAt(t, s, h, 0)
	}
	if s.Len() != 0 {
		t.Fatalf("state remembers %d producers for non-idempotent batches", s.Len())
	}
}

func TestSequenceRules(t *testing.T) {
	s := New()
	appendAt(t, s, hdr(7, 0, 0, 10), 100) // seq 0-9, offsets 100-109
	appendAt(t, s, hdr(7, 0, 10, 5), 110) // seq 10-14

	// A retry of the first batch is a duplicate answered with its offsets.
	c := s.Check(hdr(7, 0, 0, 10))
	if c.Verdict != Duplicate || c.Prior.FirstOffset != 100 || c.Prior.LastOffset != 109 {
		t.Fatalf("retry of first batch: %+v, want Duplicate at 100-109", c)
	}
	// A gap is out of order.
	c = s.Check(hdr(7, 0, 16, 1))
	if c.Verdict != Reject || c.Code != codeOutOfOrderSequence {
		t.Fatalf("gap: %+v, want OUT_OF_ORDER_SEQUENCE_NUMBER", c)
	}
	// An overlap that is not an exact earlier batch is out of order too.
	c = s.Check(hdr(7, 0, 12, 5))
	if c.Verdict != Reject || c.Code != codeOutOfOrderSequence {
		t.Fatalf("overlap: %+v, want OUT_OF_ORDER_SEQUENCE_NUMBER", c)
	}
	// An old epoch is fenced.
	appendAt(t, s, hdr(7, 1, 0, 1), 115)
	c = s.Check(hdr(7, 0, 15, 1))
	if c.Verdict != Reject || c.Code != codeInvalidProducerEpoch {
		t.Fatalf("old epoch: %+v, want INVALID_PRODUCER_EPOCH", c)
	}
	// A new epoch must start at 0.
	c = s.Check(hdr(7, 2, 5, 1))
	if c.Verdict != Reject || c.Code != codeOutOfOrderSequence {
		t.Fatalf("new epoch at seq 5: %+v, want OUT_OF_ORDER_SEQUENCE_NUMBER", c)
	}
	// An unknown producer may start anywhere (KIP-360).
	appendAt(t, s, hdr(8, 3, 42, 1), 116)
}

func TestOnlyLastFiveBatchesAreDuplicates(t *testing.T) {
	s := New()
	for i := range int32(7) {
		appendAt(t, s, hdr(1, 0, i, 1), int64(i))
	}
	for i := range int32(7) {
		c := s.Check(hdr(1, 0, i, 1))
		wantDup := i >= 2
		if (c.Verdict == Duplicate) != wantDup {
			t.Errorf("seq %d: verdict %v, duplicate expected %v", i, c.Verdict, wantDup)
		}
		if wantDup && c.Prior.FirstOffset != int64(i) {
			t.Errorf("seq %d: prior offset %d", i, c.Prior.FirstOffset)
		}
	}
}

func TestSequenceWrapsAtInt32Max(t *testing.T) {
	s := New()
	appendAt(t, s, hdr(1, 0, 1<<31-2, 2), 0) // covers max-1 and max
	appendAt(t, s, hdr(1, 0, 0, 1), 2)
	if c := s.Check(hdr(1, 0, 2, 1)); c.Verdict != Reject {
		t.Fatalf("gap after wrap accepted: %+v", c)
	}
}

func TestTruncateForgetsBatches(t *testing.T) {
	s := New()
	appendAt(t, s, hdr(1, 0, 0, 5), 0)
	appendAt(t, s, hdr(1, 0, 5, 5), 5)
	appendAt(t, s, hdr(2, 0, 0, 5), 10)
	s.TruncateTo(5)
	if c := s.Check(hdr(1, 0, 5, 5)); c.Verdict != Append {
		t.Fatalf("batch at truncated offsets should append again: %+v", c)
	}
	if _, ok := s.Producer(2); ok {
		t.Fatal("producer 2 wrote only after the truncation point and should be forgotten")
	}
}

func TestExpire(t *testing.T) {
	s := New()
	s.Record(hdr(1, 0, 0, 1), 0, 1_000)
	s.Record(hdr(2, 0, 0, 1), 1, 50_000)
	if n := s.Expire(60_000, 30_000); n != 1 {
		t.Fatalf("expired %d producers, want 1", n)
	}
	if _, ok := s.Producer(1); ok {
		t.Fatal("producer 1 should have expired")
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	s := New()
	for i := range int32(8) {
		s.Record(hdr(int64(i%3), int16(i%2), i, 2), int64(i*2), int64(i))
	}
	b := s.Encode(16)
	got, err := Decode(b, 16)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Encode(16), b) {
		t.Fatal("decoded state encodes differently")
	}
	for id := range int64(3) {
		want, _ := s.Producer(id)
		have, _ := got.Producer(id)
		if want.Epoch != have.Epoch || len(want.Batches) != len(have.Batches) {
			t.Fatalf("producer %d: %+v, want %+v", id, have, want)
		}
	}
	// Every single-byte corruption is detected.
	for i := range b {
		bad := bytes.Clone(b)
		bad[i] ^= 0x5a
		if _, err := Decode(bad, 16); !errors.Is(err, ErrBadSnapshot) {
			t.Fatalf("corruption at byte %d not detected: %v", i, err)
		}
	}
}

func FuzzDecodeSnapshot(f *testing.F) {
	s := New()
	s.Record(hdr(1, 0, 0, 3), 0, 5)
	f.Add(s.Encode(3))
	f.Add([]byte{})
	// Kafka writes its entries in hash order and samsa in id order, so
	// what decodes need not re-encode to the same bytes; but its
	// re-encoding must decode to a state that encodes the same again.
	const at = 1 << 62
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := Decode(b, 3)
		if err != nil {
			return
		}
		once := st.Encode(at)
		again, err := Decode(once, at)
		if err != nil {
			t.Fatalf("a re-encoded snapshot does not decode: %v", err)
		}
		if !bytes.Equal(again.Encode(at), once) {
			t.Fatal("a re-encoded snapshot encodes differently after decoding")
		}
	})
}
