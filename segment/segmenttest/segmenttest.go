package segmenttest

import (
	"io"
	"log/slog"
	"testing"

	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
)

// Log opens the log of partition partition of topic "t" on a temporary
// directory, flush policy never and a silent logger, and closes it and
// its directory when t ends.
func Log(t testing.TB, partition int32) *segment.Log {
	t.Helper()
	d, err := segment.OpenDir(t.TempDir(), segment.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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

// AppendBatches appends count batches of n records of valueSize-byte
// values (batchtest.Sized) at leader epoch 0 and returns each batch's
// size on disk.
func AppendBatches(t testing.TB, l *segment.Log, count, n, valueSize int) []int64 {
	t.Helper()
	var sizes []int64
	for range count {
		b := batchtest.Sized(n, valueSize)
		if _, err := l.Append(b, 0, 0); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, int64(len(b)))
	}
	return sizes
}

// BatchOffsets lists the base offsets of the batches in a read, in
// order; nil for a nil result.
func BatchOffsets(t testing.TB, res *segment.ReadResult) []int64 {
	t.Helper()
	if res == nil {
		return nil
	}
	chunks := make([]wire.Chunk, len(res.Regions))
	for i, r := range res.Regions {
		chunks[i] = r.Chunk()
	}
	raw, err := (&wire.Response{Chunks: chunks}).AppendTo(nil)
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
