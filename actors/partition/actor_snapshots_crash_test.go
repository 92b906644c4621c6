package partition

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/idempotence"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
)

// quiet discards what the crash test's partitions log.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// snapshotDir is where the crash test's data directory lives on its MemFS.
const snapshotDir = "/data"

// openSnapshotPartition opens partition t-0 of a data directory on fs the
// way the actor does on Started: the log (recovered if need be), then the
// producer state from its newest usable snapshot plus the log after it.
func openSnapshotPartition(t *testing.T, fs vfs.FS) (*partitionActor, *segment.Dir) {
	t.Helper()
	dir, err := segment.OpenDir(snapshotDir, segment.Options{FS: fs, Logger: quiet, ReserveBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	// Small segments: the producer state is snapshotted every segment's
	// worth of appends (Core.Appended), so the run writes many, and rolls
	// between them. Flush policy never: snapshots are fsynced while the
	// log's tail is not, so a crash can leave a snapshot past the log end.
	l, _, err := dir.Open("t", 0, segment.Config{SegmentBytes: 2048, FlushPolicy: segment.FlushNever})
	if err != nil {
		t.Fatal(err)
	}
	// The test's clock: the batches are stamped testNow, and a real clock
	// would expire their producers (a day old) in the snapshots.
	now := func() time.Time { return time.UnixMilli(testNow) }
	p := &partitionActor{plog: l, dir: dir, log: quiet, now: now, spec: metadata.PartitionSpec{Topic: "t"}}
	producers, snapAt := p.loadProducers(testNow)
	p.core, _ = NewCore(defaultRules(t), producers, snapAt, l.LogStartOffset(), testNow, p.logState())
	return p, dir
}

// replayAll is the producer state the whole log implies: what a broker
// without any snapshot would rebuild.
func replayAll(t *testing.T, l *segment.Log) *idempotence.State {
	t.Helper()
	s := idempotence.New()
	if err := l.ScanBatches(0, func(h *wire.BatchHeader) error {
		if h.ProducerID >= 0 {
			s.Record(h, h.BaseOffset, h.MaxTimestamp)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestProducerStateCrashAtEveryStep produces idempotent batches of three
// producers through the partition (snapshots written as the core asks,
// old ones removed) and crashes at every filesystem operation, in every
// fate of the unsynced bytes. After each crash the partition opens and
// its producer state (newest usable snapshot plus replay) must be exactly
// what the surviving log implies: no producer, sequence or offset from a
// snapshot the log no longer backs, none missing that the log holds.
func TestProducerStateCrashAtEveryStep(t *testing.T) {
	mem := vfs.NewMemFS()
	p, dir := openSnapshotPartition(t, mem)
	seq := map[int64]int32{}
	var images []vfs.CrashImage
	mem.CrashPoints([]uint64{1, 2}, func() {
		for i := range 60 {
			pid := int64(1 + i%3)
			out := &kmsg.ProduceResponseTopicPartition{}
			p.produce(&ProduceRequest{Records: batchtest.Plain(2, testNow, batchtest.Producer(pid, 0, seq[pid])), Version: 9, Acks: -1, Out: out})
			if out.ErrorCode != 0 {
				t.Fatalf("produce %d: code %d", i, out.ErrorCode)
			}
			seq[pid] += 2
		}
	}, func(img vfs.CrashImage) { images = append(images, img) })
	if snaps := Snapshots(mem, p.plog.Path()); len(snaps) == 0 {
		t.Fatal("the run wrote no producer-state snapshot; the test exercises nothing")
	}
	p.plog.Close()
	dir.Close()

	for _, img := range images {
		t.Run(fmt.Sprintf("point%d/seed%d", img.Point, img.Seed), func(t *testing.T) {
			q, d := openSnapshotPartition(t, img.FS)
			defer d.Close()
			defer q.plog.Close()
			end := q.plog.LogEndOffset()
			got, want := q.core.Producers().Encode(end), replayAll(t, q.plog).Encode(end)
			if !bytes.Equal(got, want) {
				t.Fatalf("crash %s: producer state after reopening differs from the log's (log end %d, snapshots %v)",
					img.Where, end, Snapshots(img.FS, q.plog.Path()))
			}
		})
	}
}
