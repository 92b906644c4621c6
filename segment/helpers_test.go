package segment

import (
	"bytes"
	"encoding/binary"
	"io"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
)

// makeBatch builds a valid uncompressed RecordBatch v2 with n records whose
// values are valueSize bytes derived from seed; record i has timestamp
// ts+i. The base offset is 0, as a producer sends it.
func makeBatch(n, valueSize int, ts int64, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	var recs []byte
	for i := range n {
		var rec []byte
		rec = append(rec, 0) // attributes
		rec = binary.AppendVarint(rec, int64(i))
		rec = binary.AppendVarint(rec, int64(i))
		rec = binary.AppendVarint(rec, -1) // null key
		rec = binary.AppendVarint(rec, int64(valueSize))
		for range valueSize {
			rec = append(rec, byte(rng.IntN(256)))
		}
		rec = binary.AppendVarint(rec, 0) // headers
		recs = binary.AppendVarint(recs, int64(len(rec)))
		recs = append(recs, rec...)
	}
	b := make([]byte, wire.BatchHeaderSize, wire.BatchHeaderSize+len(recs))
	be := binary.BigEndian
	be.PutUint32(b[wire.BatchLengthPos:], uint32(wire.BatchHeaderSize-wire.BatchLogOverhead+len(recs)))
	be.PutUint32(b[wire.BatchLeaderEpochPos:], 0xffffffff)
	b[wire.BatchMagicPos] = 2
	be.PutUint32(b[wire.BatchLastOffsetDeltaPos:], uint32(n-1))
	be.PutUint64(b[wire.BatchBaseTimestampPos:], uint64(ts))
	be.PutUint64(b[wire.BatchMaxTimestampPos:], uint64(ts+int64(n-1)))
	be.PutUint64(b[wire.BatchProducerIDPos:], 0xffffffffffffffff)
	be.PutUint16(b[wire.BatchProducerEpochPos:], 0xffff)
	be.PutUint32(b[wire.BatchBaseSequencePos:], 0xffffffff)
	be.PutUint32(b[wire.BatchRecordCountPos:], uint32(n))
	b = append(b, recs...)
	be.PutUint32(b[wire.BatchCRCPos:], wire.CRC32C(b[wire.BatchAttributesPos:]))
	return b
}

// testDir opens a Dir on a fresh MemFS (or the given one).
func testDir(t testing.TB, fs vfs.FS) *Dir {
	t.Helper()
	if fs == nil {
		fs = vfs.NewMemFS()
	}
	d, err := OpenDir("/data", Options{FS: fs, FlushWorkers: 2, Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func openLog(t testing.TB, d *Dir, cfg Config) (*Log, RecoveryReport) {
	t.Helper()
	l, rep, err := d.Open("topic", 0, cfg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return l, rep
}

func mustAppend(t testing.TB, l *Log, b []byte, now int64) AppendResult {
	t.Helper()
	r, err := l.Append(b, 1, now)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return r
}

// readAll reads every batch of the log from offset and returns them split.
func readAll(t testing.TB, l *Log, from int64) [][]byte {
	t.Helper()
	var out [][]byte
	for off := from; off < l.LogEndOffset(); {
		b, next, err := l.ReadBytes(ReadRequest{Offset: off, MaxBytes: 1 << 20, MaxOffset: -1, MinOneBatch: true})
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		if next <= off {
			t.Fatalf("read at %d made no progress", off)
		}
		for len(b) > 0 {
			h, err := wire.ParseBatchHeader(b)
			if err != nil {
				t.Fatalf("read returned a partial batch: %v", err)
			}
			if _, err := wire.ValidateBatch(b[:h.Size()]); err != nil {
				t.Fatalf("read returned a corrupt batch at offset %d: %v", h.BaseOffset, err)
			}
			out = append(out, b[:h.Size()])
			b = b[h.Size():]
		}
		off = next
	}
	return out
}

func equalBatches(a, b []byte) bool { return bytes.Equal(a, b) }

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// requireBatches fails the test unless the log, read from offset from,
// holds exactly want; what says when (for the message).
func requireBatches(t testing.TB, l *Log, from int64, want [][]byte, what string) {
	t.Helper()
	got := readAll(t, l, from)
	if len(got) != len(want) {
		t.Fatalf("%s: read %d batches, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !equalBatches(got[i], want[i]) {
			t.Fatalf("%s: batch %d differs", what, i)
		}
	}
}
