package segment

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
)

const activeLog = "/data/topic-0/00000000000000000000.log"

func TestCleanShutdownSkipsScanning(t *testing.T) {
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	l, _ := openLog(t, d, Config{SegmentBytes: 5000, IndexIntervalBytes: 400})
	batches := fillLog(t, l, 40)
	leo, size := l.LogEndOffset(), l.Size()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Stat("/data/" + CleanShutdownFile); err != nil {
		t.Fatal("no clean-shutdown marker after Close")
	}
	d = testDir(t, mem)
	if !d.StartedClean() {
		t.Fatal("directory not seen as cleanly shut down")
	}
	if _, err := mem.Stat("/data/" + CleanShutdownFile); err == nil {
		t.Fatal("marker not removed on open")
	}
	l, rep := openLog(t, d, Config{SegmentBytes: 5000, IndexIntervalBytes: 400})
	if !rep.Clean || rep.SegmentsScanned != 0 || rep.BytesScanned > 400+int64(len(batches[0])) {
		t.Fatalf("clean open scanned: %+v", rep)
	}
	if l.LogEndOffset() != leo || l.Size() != size || l.RecoveryPoint() != leo {
		t.Fatalf("clean open: leo %d/%d size %d/%d rp %d", l.LogEndOffset(), leo, l.Size(), size, l.RecoveryPoint())
	}
	got := readAll(t, l, 0)
	for i := range batches {
		if !equalBatches(got[i], batches[i]) {
			t.Fatalf("batch %d differs after clean reopen", i)
		}
	}
	// Appending continues densely.
	if r := mustAppend(t, l, makeBatch(1, 5, 1, 1), 1); r.FirstOffset != leo {
		t.Fatalf("append after reopen at %d, want %d", r.FirstOffset, leo)
	}
}

func TestUncleanOpenCutsTornTailAndReportsIt(t *testing.T) {
	mem, _, l := checkpointedLog(t, 5) // offsets 0..14, recovery point 15
	good := l.Size()
	// Two more batches, the second torn halfway.
	mustAppend(t, l, makeBatch(2, 20, 1, 7), 0)
	torn := makeBatch(4, 50, 1, 8)
	f, _ := mem.OpenReadWrite(activeLog)
	wire.SetBatchBaseOffset(torn, 17)
	size := l.Size()
	if _, err := f.WriteAt(torn[:len(torn)/2], size); err != nil {
		t.Fatal(err)
	}
	f.Close()

	d2 := testDir(t, mem) // no Close: unclean
	l2, rep := openLog(t, d2, Config{})
	if rep.Clean || rep.SegmentsScanned != 1 {
		t.Fatalf("report %+v", rep)
	}
	if rep.TruncatedBytes != int64(len(torn)/2) || rep.LostFromOffset != 17 || rep.LostToOffset != 20 {
		t.Fatalf("loss report %+v", rep)
	}
	if !rep.TornTail || rep.Lost() || !rep.Cut() {
		t.Fatalf("a half-written last batch is a torn tail, not loss: %+v", rep)
	}
	if l2.LogEndOffset() != 17 || l2.Size() != size || size <= good {
		t.Fatalf("after recovery: leo %d size %d", l2.LogEndOffset(), l2.Size())
	}
	if st, _ := mem.Stat(activeLog); st.Size != size {
		t.Fatalf("file not truncated: %d", st.Size)
	}
}

func TestCorruptionBeforeRecoveryPointIsAnError(t *testing.T) {
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	l, _ := openLog(t, d, Config{})
	fillLog(t, l, 5)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	// Flip a byte inside the second batch's records: below the recovery point.
	f, _ := mem.OpenReadWrite(activeLog)
	var b [1]byte
	if _, err := f.ReadAt(b[:], 500); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x55
	if _, err := f.WriteAt(b[:], 500); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d2 := testDir(t, mem)
	_, _, err := d2.Open("topic", 0, Config{})
	var ce *CorruptionError
	if !errors.Is(err, ErrCorruption) || !errors.As(err, &ce) || !errors.Is(err, wire.ErrBatchCRC) {
		t.Fatalf("err = %v", err)
	}
	if ce.Path != activeLog || ce.Offset != 3 {
		t.Fatalf("corruption error %+v", ce)
	}
	// Nothing was cut.
	if st, _ := mem.Stat(activeLog); st.Size != l.Size() {
		t.Fatalf("log cut from %d to %d bytes", l.Size(), st.Size)
	}
}

func TestCorruptionAfterCleanShutdownIsAnError(t *testing.T) {
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	l, _ := openLog(t, d, Config{})
	fillLog(t, l, 3)
	d.Close()
	f, _ := mem.OpenReadWrite(activeLog)
	if _, err := f.WriteAt([]byte{0xff, 0xff}, l.Size()-3); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, _, err := testDir(t, mem).Open("topic", 0, Config{})
	if !errors.Is(err, ErrCorruption) {
		t.Fatalf("err = %v", err)
	}
}

func TestMissingAndDamagedIndexesAreRebuilt(t *testing.T) {
	cfg := Config{SegmentBytes: 3000, IndexIntervalBytes: 300}
	mem, d, l, batches := filledLog(t, cfg, 30, 3)
	segs := l.Segments()
	d.Close()
	idx0 := strings.TrimSuffix(segs[0].Path, LogSuffix) + IndexSuffix
	idx1 := strings.TrimSuffix(segs[1].Path, LogSuffix) + IndexSuffix
	want, _ := vfs.ReadFile(mem, idx1)
	if len(want) == 0 {
		t.Fatal("empty index for a full segment")
	}
	// Index 0 goes missing; index 1 gets a malformed size.
	mem.Remove(idx0)
	if err := vfs.WriteFileAtomic(mem, idx1, []byte{0, 0, 0, 9, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	d = testDir(t, mem)
	_, rep := openLog(t, d, cfg)
	if rep.IndexesRebuilt != 2 {
		t.Fatalf("report %+v", rep)
	}
	got, _ := vfs.ReadFile(mem, idx1)
	if !equalBatches(got, want) {
		t.Fatal("rebuilt index differs from the original")
	}
	// An index whose entry is off by one still serves correct reads: entries
	// are only starting points of a scan.
	d.Close()
	bad := make([]byte, len(want))
	copy(bad, want)
	bad[3] ^= 1 // change a relative offset: no longer increasing or pointing right
	if err := vfs.WriteFileAtomic(mem, idx1, bad); err != nil {
		t.Fatal(err)
	}
	d = testDir(t, mem)
	l, _ = openLog(t, d, cfg)
	all := readAll(t, l, 0)
	if len(all) != len(batches) {
		t.Fatalf("read %d batches, want %d", len(all), len(batches))
	}
}

func TestUncleanOpenDeletesSegmentsAfterAGap(t *testing.T) {
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	l, _ := openLog(t, d, Config{SegmentBytes: 2000})
	fillLog(t, l, 12)
	segs := l.Segments()
	if len(segs) < 3 {
		t.Fatalf("%d segments", len(segs))
	}
	// Cut the middle of segment 1 as a lost write would; segment 2 then
	// starts after a hole and must go. A lost write lies above the
	// recovery point: the rolls' checkpoints (done once Flush returns)
	// go, as after a crash before any checkpoint.
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := mem.Remove("/data/" + RecoveryPointFile); err != nil {
		t.Fatal(err)
	}
	f, _ := mem.OpenReadWrite(segs[1].Path)
	if err := f.Truncate(segs[1].Size - 100); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d2 := testDir(t, mem)
	l2, rep := openLog(t, d2, Config{SegmentBytes: 2000})
	if len(rep.DeletedSegments) != len(segs)-2 || l2.LogEndOffset() >= segs[1].NextOffset {
		t.Fatalf("report %+v, leo %d", rep, l2.LogEndOffset())
	}
	readAll(t, l2, 0)
}

func TestLeftoverFilesRemoved(t *testing.T) {
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	l, _ := openLog(t, d, Config{})
	fillLog(t, l, 2)
	d.Close()
	for _, n := range []string{"leader-epoch-checkpoint.tmp", "00000000000000000099.index", "00000000000000000007.log.deleted"} {
		if err := vfs.WriteFileAtomic(mem, "/data/topic-0/"+n, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	d = testDir(t, mem)
	openLog(t, d, Config{})
	names, _ := mem.List("/data/topic-0")
	for _, n := range names {
		if strings.Contains(n, "tmp") || strings.Contains(n, "99") || strings.Contains(n, "deleted") {
			t.Fatalf("leftover %s not removed: %v", n, names)
		}
	}
}

// flipByte inverts one byte of a file (a bit of rot or a torn sector).
func flipByte(t *testing.T, fs vfs.FS, path string, pos int64) {
	t.Helper()
	f, err := fs.OpenReadWrite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [1]byte
	if _, err := f.ReadAt(b[:], pos); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x55
	if _, err := f.WriteAt(b[:], pos); err != nil {
		t.Fatal(err)
	}
}

// A crash that tears the last write off the log end cuts bytes no
// producer was told were durable: the report says so (TornTail, not
// Lost) and the log line is not a warning. Damage followed by whole
// batches is loss, reported up to the last offset cut, with a warning.
func TestRecoveryTellsATornTailFromLoss(t *testing.T) {
	mem, _, l := checkpointedLog(t, 5) // offsets 0..14, recovery point 15
	b := fillLog(t, l, 3)              // offsets 15..23, one size
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	size, bsize := l.Size(), int64(len(b[0]))

	torn := mem.CrashClone(nil)
	f, _ := torn.OpenReadWrite(activeLog)
	if err := f.Truncate(size - bsize/2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	logger, lines := captureLog()
	_, rep := openLog(t, testDirLog(t, torn, logger), Config{})
	if !rep.TornTail || rep.Lost() || rep.LostFromOffset != 21 || rep.LostToOffset != 23 || rep.TruncatedBytes != bsize-bsize/2 {
		t.Fatalf("torn last write: %+v", rep)
	}
	if out := lines.String(); strings.Contains(out, "level=WARN") || !strings.Contains(out, "incomplete write") {
		t.Fatalf("torn last write logged as:\n%s", out)
	}

	rot := mem.CrashClone(nil)
	flipByte(t, rot, activeLog, size-2*bsize+100) // inside offsets 18..20; 21..23 stay whole
	logger, lines = captureLog()
	_, rep = openLog(t, testDirLog(t, rot, logger), Config{})
	if rep.TornTail || !rep.Lost() || rep.LostFromOffset != 18 || rep.LostToOffset != 23 || rep.TruncatedBytes != 2*bsize {
		t.Fatalf("damage before whole batches: %+v", rep)
	}
	if out := lines.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "to_offset=23") {
		t.Fatalf("loss logged as:\n%s", out)
	}
}

// With no recovery point every segment is scanned; one corrupt batch in
// an early segment cuts it and deletes every later segment, and the
// report (and log line) must cover all of that, not only the offsets the
// corrupt batch claimed.
func TestRecoveryReportsTheWholeRangeItCut(t *testing.T) {
	cfg := Config{SegmentBytes: 2000, IndexIntervalBytes: 300}
	mem, _, l, b := filledLog(t, cfg, 40, 5) // 3 offsets a batch, one size
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	segs := l.Segments()
	leo, size, bsize := l.LogEndOffset(), l.Size(), int64(len(b[0]))
	// The recovery point goes missing (as if deleted by hand).
	mem.Remove("/data/" + RecoveryPointFile)
	if err := mem.SyncDir("/data"); err != nil {
		t.Fatal(err)
	}
	crashed := mem.CrashClone(nil)
	flipByte(t, crashed, segs[1].Path, bsize+100) // the second batch of segment 1
	logger, lines := captureLog()
	l2, rep := openLog(t, testDirLog(t, crashed, logger), cfg)
	from := segs[1].BaseOffset + 3
	if rep.LostFromOffset != from || rep.LostToOffset != leo-1 || l2.LogEndOffset() != from {
		t.Fatalf("cut offsets %d..%d, want %d..%d (report %+v)", rep.LostFromOffset, rep.LostToOffset, from, leo-1, rep)
	}
	if rep.TruncatedBytes != size-l2.Size() || len(rep.DeletedSegments) != len(segs)-2 || rep.TornTail || !rep.Lost() {
		t.Fatalf("cut %d bytes, %d segments; want %d, %d (report %+v)", rep.TruncatedBytes, len(rep.DeletedSegments), size-l2.Size(), len(segs)-2, rep)
	}
	want := fmt.Sprintf("bytes=%d from_offset=%d to_offset=%d deleted_segments=%d", rep.TruncatedBytes, from, leo-1, len(segs)-2)
	if out := lines.String(); !strings.Contains(out, want) {
		t.Fatalf("log does not say %q:\n%s", want, out)
	}
}

// A roll writes the recovery checkpoint once the rolled segment is
// fsynced, so a crash long before the next periodic checkpoint rescans
// the active segment only, not every segment since the last one.
func TestRollCheckpointsTheRecoveryPoint(t *testing.T) {
	cfg := Config{SegmentBytes: 2000, FlushPolicy: FlushNever}
	mem, _, l, _ := filledLog(t, cfg, 30, 4) // no Checkpoint call
	if err := l.Flush(); err != nil {        // the rolls' fsyncs, and what follows them, are done
		t.Fatal(err)
	}
	segs := l.Segments()
	active := segs[len(segs)-1].BaseOffset
	ck, err := vfs.ReadFile(mem, "/data/"+RecoveryPointFile)
	if err != nil {
		t.Fatalf("no recovery checkpoint after %d rolls: %v", len(segs)-1, err)
	}
	rps, err := parseOffsetCheckpoint(ck)
	if rp := rps[TopicPartition{"topic", 0}]; err != nil || rp < active {
		t.Fatalf("recovery checkpoint %q (%v): below the active segment's base %d", ck, err, active)
	}
	_, rep := openLog(t, testDir(t, mem.CrashClone(nil)), cfg)
	if rep.SegmentsScanned != 1 {
		t.Fatalf("a crash after the rolls scanned %d segments: %+v", rep.SegmentsScanned, rep)
	}
}

// Rebuilding a closed segment's missing index is logged, not only counted.
func TestMissingIndexRebuildIsLogged(t *testing.T) {
	cfg := Config{SegmentBytes: 2000}
	mem, d, l, _ := filledLog(t, cfg, 12, 3)
	old := l.Segments()[1]
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := mem.Remove(strings.TrimSuffix(old.Path, LogSuffix) + IndexSuffix); err != nil {
		t.Fatal(err)
	}
	logger, lines := captureLog()
	if _, rep := openLog(t, testDirLog(t, mem, logger), cfg); rep.IndexesRebuilt != 1 {
		t.Fatalf("report %+v", rep)
	}
	if out := lines.String(); !strings.Contains(out, "rebuilding them from the log") || !strings.Contains(out, fmt.Sprintf("segment=%d", old.BaseOffset)) {
		t.Fatalf("no log line for the rebuilt index:\n%s", out)
	}
}
