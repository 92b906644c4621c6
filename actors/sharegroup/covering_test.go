package sharegroup

import (
	"bytes"
	"testing"

	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/segment/segmenttest"
)

// batchesCovering answers the batches that hold acquired offsets: one
// stretch of them without a copy, scattered ones copied together.
func TestBatchesCovering(t *testing.T) {
	l := segmenttest.Log(t, 0)
	sizes := segmenttest.AppendBatches(t, l, 3, 10, 20) // offsets 0-9, 10-19, 20-29
	data, _, err := l.ReadBytes(segment.ReadRequest{Offset: 0, MaxBytes: 1 << 20, MaxOffset: -1})
	if err != nil {
		t.Fatal(err)
	}
	b1, b2 := int(sizes[0]), int(sizes[1])

	got := batchesCovering(data, []AcquiredRun{{First: 5, Last: 12}})
	if !bytes.Equal(got, data[:b1+b2]) || &got[0] != &data[0] {
		t.Fatalf("offsets 5-12: %d bytes (shared %v), want the first two batches (%d bytes) as they are", len(got), len(got) > 0 && &got[0] == &data[0], b1+b2)
	}
	got = batchesCovering(data, []AcquiredRun{{First: 12, Last: 12}, {First: 25, Last: 29}})
	if want := data[b1:]; !bytes.Equal(got, want) {
		t.Fatalf("offsets 12 and 25-29: %d bytes, want the last two batches (%d)", len(got), len(want))
	}
	got = batchesCovering(data, []AcquiredRun{{First: 0, Last: 0}, {First: 29, Last: 29}})
	want := append(append([]byte(nil), data[:b1]...), data[b1+b2:]...)
	if !bytes.Equal(got, want) {
		t.Fatalf("offsets 0 and 29: %d bytes, want the first and last batches copied together (%d)", len(got), len(want))
	}
	if got := batchesCovering(data, []AcquiredRun{{First: 40, Last: 45}}); got != nil {
		t.Fatalf("offsets past the data: %d bytes, want none", len(got))
	}
}
