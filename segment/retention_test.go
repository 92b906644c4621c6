package segment

import (
	"errors"
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
)

func TestRollBySizeAndTime(t *testing.T) {
	d := testDir(t, nil)
	l, _ := openLog(t, d, Config{SegmentBytes: 1000, SegmentMs: 60_000})
	fillLog(t, l, 6) // ~370 bytes each: two per segment
	segs := l.Segments()
	if len(segs) != 3 {
		t.Fatalf("%d segments, want 3", len(segs))
	}
	for i, s := range segs {
		if s.Size > 1000 || s.BaseOffset != int64(6*i) {
			t.Fatalf("segment %d: %+v", i, s)
		}
	}
	// Time: a segment whose first append is older than segment.ms rolls.
	l2, _, _ := d.Open("timed", 0, Config{SegmentMs: 60_000})
	mustAppend(t, l2, makeBatch(1, 10, 0, 1), 1_000)
	mustAppend(t, l2, makeBatch(1, 10, 0, 2), 60_999)
	if n := len(l2.Segments()); n != 1 {
		t.Fatalf("rolled early: %d segments", n)
	}
	mustAppend(t, l2, makeBatch(1, 10, 0, 3), 61_000)
	if segs := l2.Segments(); len(segs) != 2 || segs[1].BaseOffset != 2 {
		t.Fatalf("time roll: %+v", segs)
	}
	// Index files of the rolled segment exist with whole entries.
	st, err := d.fs.Stat(segs[0].Path[:len(segs[0].Path)-len(LogSuffix)] + TimeIndexSuffix)
	if err != nil || st.Size%timeEntrySize != 0 || st.Size == 0 {
		t.Fatalf("time index of rolled segment: %+v %v", st, err)
	}
}

func TestRetentionBySizeAndTimeKeepsActive(t *testing.T) {
	d := testDir(t, nil)
	l, _ := openLog(t, d, Config{SegmentBytes: 1000, RetentionBytes: 1500, RetentionMs: Unlimited})
	fillLog(t, l, 10) // 5 segments of ~740 bytes
	res, err := l.DeleteExpired(0)
	if err != nil {
		t.Fatal(err)
	}
	segs := l.Segments()
	if res.DeletedSegments != 3 || len(segs) != 2 || l.LogStartOffset() != segs[0].BaseOffset || res.LogStartOffset != segs[0].BaseOffset {
		t.Fatalf("size retention: %+v, segments %+v, start %d", res, segs, l.LogStartOffset())
	}
	if _, err := l.Read(ReadRequest{Offset: 0, MaxBytes: 10}); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below the log start: %v", err)
	}

	// Time: batches carry timestamps 1000+10i; retention.ms 100 at now=1200.
	l.SetConfig(Config{SegmentBytes: 1000, RetentionMs: 100, RetentionBytes: Unlimited})
	l2, _, _ := d.Open("timed", 0, Config{SegmentBytes: 1000, RetentionMs: 100})
	fillLog(t, l2, 10) // segment max timestamps 1012, 1032, ..., 1092
	res, err = l2.DeleteExpired(1170)
	if err != nil {
		t.Fatal(err)
	}
	// Expired: newest timestamp < 1070 → segments with max 1012..1052 (3 of them).
	if res.DeletedSegments != 3 || l2.LogStartOffset() != 18 {
		t.Fatalf("time retention: %+v, start %d", res, l2.LogStartOffset())
	}
	// Far in the future everything but the active segment goes.
	res, _ = l2.DeleteExpired(1 << 40)
	if len(l2.Segments()) != 1 || l2.LogEndOffset() != 30 {
		t.Fatalf("retention deleted the active segment: %+v", l2.Segments())
	}
}

func TestDeleteRecordsBefore(t *testing.T) {
	d := testDir(t, nil)
	l, _ := openLog(t, d, Config{SegmentBytes: 1000})
	fillLog(t, l, 10)
	res, err := l.DeleteRecordsBefore(7)
	if err != nil || l.LogStartOffset() != 7 || res.DeletedSegments != 1 {
		t.Fatalf("delete records: %+v %v start %d", res, err, l.LogStartOffset())
	}
	// Reading from the new start returns the batch holding it (offsets 6..8).
	_, err = l.Read(ReadRequest{Offset: 6, MaxBytes: 100})
	if !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below start: %v", err)
	}
	b, _, err := l.ReadBytes(ReadRequest{Offset: 7, MaxBytes: 1, MinOneBatch: true, MaxOffset: -1})
	h, _ := wire.ParseBatchHeader(b)
	if err != nil || h.BaseOffset != 6 {
		t.Fatalf("read at new start: %v base %d", err, h.BaseOffset)
	}
	if _, err := l.DeleteRecordsBefore(31); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("beyond the end: %v", err)
	}
	if got, _ := l.OffsetForTimestamp(EarliestTimestamp); got.Offset != 7 {
		t.Fatalf("earliest = %+v", got)
	}
	// The new start survives a clean restart through the checkpoint.
	d.Close()
	d2 := testDir(t, d.fs)
	l2, _ := openLog(t, d2, Config{SegmentBytes: 1000})
	if l2.LogStartOffset() != 7 {
		t.Fatalf("log start after restart: %d", l2.LogStartOffset())
	}
	ck, _ := vfs.ReadFile(d.fs, "/data/"+LogStartFile)
	if string(ck) != "0\n1\ntopic 0 7\n" {
		t.Fatalf("log-start checkpoint %q", ck)
	}
}

func TestTruncateTo(t *testing.T) {
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	l, _ := openLog(t, d, Config{SegmentBytes: 1000, IndexIntervalBytes: 100})
	batches := fillLog(t, l, 10) // offsets 0..29, 3 per batch
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	// Truncating into the middle of a batch removes the whole batch.
	end, err := l.TruncateTo(10)
	if err != nil || end != 9 || l.LogEndOffset() != 9 {
		t.Fatalf("truncate: end %d err %v leo %d", end, err, l.LogEndOffset())
	}
	if l.RecoveryPoint() != 9 {
		t.Fatalf("recovery point %d", l.RecoveryPoint())
	}
	ck, _ := vfs.ReadFile(mem, "/data/"+RecoveryPointFile)
	if string(ck) != "0\n1\ntopic 0 9\n" {
		t.Fatalf("recovery checkpoint not lowered: %q", ck)
	}
	got := readAll(t, l, 0)
	if len(got) != 3 {
		t.Fatalf("%d batches left", len(got))
	}
	// Appends continue at the cut, and the truncation is durable.
	r := mustAppend(t, l, makeBatch(2, 10, 1, 99), 0)
	if r.FirstOffset != 9 {
		t.Fatalf("append after truncation at %d", r.FirstOffset)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	d2 := testDir(t, mem.CrashClone(nil))
	l2, rep := openLog(t, d2, Config{})
	if l2.LogEndOffset() != 11 || rep.Cut() {
		t.Fatalf("after crash: leo %d %+v", l2.LogEndOffset(), rep)
	}
	if got := readAll(t, l2, 0); !equalBatches(got[2], batches[2]) {
		t.Fatal("kept batch differs")
	}
	// Below the log start: refused.
	if _, err := l.DeleteRecordsBefore(3); err != nil {
		t.Fatal(err)
	}
	if _, err := l.TruncateTo(1); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("truncate below start: %v", err)
	}
	// Waiters for truncated offsets learn it.
	gone := make(chan error, 1)
	l.SetConfig(Config{FlushPolicy: FlushGroup})
	l.fl.mu.Lock()
	l.fl.waiters = append(l.fl.waiters, waiter{offset: 10, fn: func(err error) { gone <- err }})
	l.fl.mu.Unlock()
	if _, err := l.TruncateTo(9); err != nil {
		t.Fatal(err)
	}
	if err := <-gone; !errors.Is(err, ErrTruncated) {
		t.Fatalf("waiter got %v", err)
	}
}

// A truncation at or past the end cuts nothing but drops the epochs that
// start at the end without a batch (a leader that appended nothing in
// its epoch): a follower must not name them as its last fetched epoch.
func TestTruncateToEndDropsEmptyEpochs(t *testing.T) {
	d := testDir(t, nil)
	l, _ := openLog(t, d, Config{})
	fillLog(t, l, 2) // epoch 1 from fillLog's batches
	end := l.LogEndOffset()
	if err := l.AssignEpoch(4, end); err != nil {
		t.Fatal(err)
	}
	if got, err := l.TruncateTo(end + 10); err != nil || got != end {
		t.Fatalf("truncate past the end: %d %v", got, err)
	}
	if e := l.LatestEpoch(); e == 4 {
		t.Fatalf("latest epoch %d after the truncation, want the last batch's", e)
	}
	if got := l.Epochs(); len(got) == 0 || got[len(got)-1][1] >= end {
		t.Fatalf("epochs %v", got)
	}
}

func TestAppendReplicatedKeepsOffsetsAndEpochs(t *testing.T) {
	d := testDir(t, nil)
	leader, _ := openLog(t, d, Config{})
	fillLog(t, leader, 3)
	if err := leader.AssignEpoch(5, leader.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, leader, makeBatch(2, 10, 1, 1), 0) // epoch 1 from mustAppend: ignored, 5 is newer
	r, _ := leader.Append(makeBatch(2, 10, 1, 2), 7, 0)
	data, _, _ := leader.ReadBytes(ReadRequest{Offset: 0, MaxBytes: 1 << 20, MaxOffset: -1})
	follower, _, _ := d.Open("follower", 0, Config{})
	fr, err := follower.AppendReplicated(data, 0)
	if err != nil || fr.FirstOffset != 0 || fr.LastOffset != r.LastOffset {
		t.Fatalf("replicated append: %+v %v", fr, err)
	}
	got, _, _ := follower.ReadBytes(ReadRequest{Offset: 0, MaxBytes: 1 << 20, MaxOffset: -1})
	if !equalBatches(got, data) {
		t.Fatal("replica differs from the leader")
	}
	if e, end := follower.EndOffsetForEpoch(1); e != 1 || end != 11 { // epoch 7 starts at 11
		t.Fatalf("EndOffsetForEpoch(1) = %d, %d", e, end)
	}
	if e, end := follower.EndOffsetForEpoch(7); e != 7 || end != follower.LogEndOffset() {
		t.Fatalf("EndOffsetForEpoch(7) = %d, %d", e, end)
	}
	// Replaying the same batches does not continue the log.
	if _, err := follower.AppendReplicated(data, 0); !errors.Is(err, ErrBadOffsets) {
		t.Fatalf("replay: %v", err)
	}
}

// Deleting a partition (DeleteTopics) on a full disk succeeds: removing
// files needs no space, and the checkpoints it cannot rewrite keep stale
// entries that a partition created later under the same name ignores.
func TestRemoveOnAFullDisk(t *testing.T) {
	mem := vfs.NewMemFS()
	efs := vfs.NewErrorFS(mem, true)
	d := testDir(t, efs)
	l, _ := openLog(t, d, Config{})
	fillLog(t, l, 5)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Checkpoint(); err != nil { // the partition's recovery point is 15 on disk
		t.Fatal(err)
	}
	efs.SetFault(vfs.NoSpaceAfter(0))
	if err := d.Remove("topic", 0); err != nil {
		t.Fatalf("remove on a full disk: %v", err)
	}
	if _, err := mem.Stat("/data/topic-0"); err == nil {
		t.Fatal("partition directory still there")
	}
	efs.SetFault(nil)
	// The next start reads the stale checkpoint; the topic is created again.
	d2 := testDir(t, mem.CrashClone(nil))
	l2, rep, err := d2.Open("topic", 0, Config{})
	if err != nil || l2.LogEndOffset() != 0 || l2.LogStartOffset() != 0 || rep.Cut() {
		t.Fatalf("a new log under a deleted one's name: %v %+v", err, rep)
	}
	mustAppend(t, l2, makeBatch(1, 5, 1, 1), 0)
}
