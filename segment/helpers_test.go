package segment

import (
	"bytes"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
)

// makeBatch builds a valid uncompressed RecordBatch v2 with n records whose
// values are valueSize bytes derived from seed; record i has timestamp
// ts+i. The base offset is 0, as a producer sends it.
func makeBatch(n, valueSize int, ts int64, seed uint64) []byte {
	deltas := make([]int64, n)
	for i := range deltas {
		deltas[i] = int64(i)
	}
	return makeBatchTs(ts, deltas, valueSize, seed)
}

// makeBatchTs is makeBatch with record i's timestamp ts+deltas[i].
func makeBatchTs(ts int64, deltas []int64, valueSize int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	recs := make([]batchtest.Record, len(deltas))
	for i := range recs {
		v := make([]byte, valueSize)
		for j := range v {
			v[j] = byte(rng.IntN(256))
		}
		recs[i] = batchtest.Record{Value: v, Timestamp: ts + deltas[i]}
	}
	return batchtest.Build(recs, batchtest.BaseTimestamp(ts))
}

// testDir opens a Dir on a fresh MemFS (or the given one).
func testDir(t testing.TB, fs vfs.FS) *Dir { t.Helper(); return testDirLog(t, fs, quietLogger) }

// testDirLog is testDir logging to logger.
func testDirLog(t testing.TB, fs vfs.FS, logger *slog.Logger) *Dir {
	t.Helper()
	if fs == nil {
		fs = vfs.NewMemFS()
	}
	d, err := OpenDir("/data", Options{FS: fs, FlushWorkers: 2, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// logLines collects what a logger writes, for tests that check a log
// line was (or was not) written. Flush goroutines may log: it locks.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *logLines) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

// String is everything logged so far, one line per record.
func (c *logLines) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// captureLog returns a logger (every level) and what it writes.
func captureLog() (*slog.Logger, *logLines) {
	c := &logLines{}
	return slog.New(slog.NewTextHandler(c, &slog.HandlerOptions{Level: slog.LevelDebug})), c
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

// filledLog opens a log with cfg on a fresh MemFS, appends n batches
// (fillLog) and requires at least minSegs segments.
func filledLog(t *testing.T, cfg Config, n, minSegs int) (*vfs.MemFS, *Dir, *Log, [][]byte) {
	t.Helper()
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	l, _ := openLog(t, d, cfg)
	batches := fillLog(t, l, n)
	if got := len(l.Segments()); got < minSegs {
		t.Fatalf("%d segments, want at least %d", got, minSegs)
	}
	return mem, d, l, batches
}

// checkpointedLog opens a log on a fresh MemFS with n batches (fillLog)
// fsynced and below the recovery-point checkpoint.
func checkpointedLog(t *testing.T, n int) (*vfs.MemFS, *Dir, *Log) {
	t.Helper()
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	l, _ := openLog(t, d, Config{})
	fillLog(t, l, n)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	return mem, d, l
}
