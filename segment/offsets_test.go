package segment

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
)

func TestOffsetForTimestamp(t *testing.T) {
	d := testDir(t, nil)
	l, _ := openLog(t, d, Config{SegmentBytes: 1500, IndexIntervalBytes: 200})
	// Batch i: 3 records with timestamps 1000+10i, +1, +2; one batch has
	// an out-of-order timestamp (the maximum).
	for i := range 20 {
		ts := int64(1000 + 10*i)
		if i == 7 {
			ts = 5000
		}
		mustAppend(t, l, makeBatch(3, 50, ts, uint64(i)), 0)
	}
	cases := []struct {
		ts         int64
		off, gotTs int64
		found      bool
	}{
		{EarliestTimestamp, 0, -1, true},
		{LatestTimestamp, 60, -1, true},
		{MaxTimestamp, 23, 5002, true}, // last record of batch 7 (offsets 21..23, 5000..5002)
		{0, 0, 1000, true},
		{1000, 0, 1000, true},
		{1001, 1, 1001, true},
		{1003, 3, 1010, true},
		{1061, 19, 1061, true}, // batch 6, record 1 (1060 has offset 18)
		{1069, 21, 5000, true}, // batch 7's 5000 is the first at or after 1069
		{1080, 21, 5000, true},
		{1190, 21, 5000, true}, // offset order: batch 7 comes first
		{5001, 22, 5001, true},
		{5000, 21, 5000, true},
		{5003, -1, -1, false},
	}
	for _, c := range cases {
		got, err := l.OffsetForTimestamp(c.ts)
		if err != nil || got.Found != c.found || got.Offset != c.off || got.Timestamp != c.gotTs {
			t.Errorf("ts %d: got %+v %v, want offset %d ts %d found %v", c.ts, got, err, c.off, c.gotTs, c.found)
		}
	}
	// The same answers after a clean restart (indexes read back from disk).
	d.Close()
	d2 := testDir(t, d.fs)
	l2, _ := openLog(t, d2, Config{})
	for _, c := range cases {
		got, err := l2.OffsetForTimestamp(c.ts)
		if err != nil || got.Offset != c.off {
			t.Errorf("after restart, ts %d: got %+v %v", c.ts, got, err)
		}
	}
	if _, err := l2.OffsetForTimestamp(-7); err == nil {
		t.Error("invalid timestamp accepted")
	}
}

func TestEpochCache(t *testing.T) {
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	l, _ := openLog(t, d, Config{})
	if e, o := l.EndOffsetForEpoch(0); e != -1 || o != -1 {
		t.Fatalf("empty cache: %d %d", e, o)
	}
	for _, a := range []struct {
		batch []byte
		epoch int32
	}{
		{makeBatch(3, 1, 0, 1), 2}, // epoch 2 at 0
		{makeBatch(3, 1, 0, 2), 2},
		{makeBatch(3, 1, 0, 3), 4}, // epoch 4 at 6
		{makeBatch(3, 1, 0, 4), 6}, // epoch 6 at 9
	} {
		if _, err := l.Append(a.batch, a.epoch, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		req, epoch int32
		end        int64
	}{
		{1, 1, 0}, {2, 2, 6}, {3, 2, 6}, {4, 4, 9}, {5, 4, 9}, {6, 6, 12}, {7, -1, -1},
	} {
		if e, o := l.EndOffsetForEpoch(c.req); e != c.epoch || o != c.end {
			t.Errorf("EndOffsetForEpoch(%d) = %d, %d; want %d, %d", c.req, e, o, c.epoch, c.end)
		}
	}
	ck, _ := vfs.ReadFile(mem, "/data/topic-0/"+LeaderEpochFile)
	if string(ck) != "0\n3\n2 0\n4 6\n6 9\n" {
		t.Fatalf("leader-epoch-checkpoint %q", ck)
	}
	if _, err := l.TruncateTo(10); err != nil { // removes the batch 9..11: epoch 6 goes
		t.Fatal(err)
	}
	if got := l.Epochs(); len(got) != 2 || got[1] != [2]int64{4, 6} {
		t.Fatalf("after truncation %v", got)
	}
	if _, err := l.DeleteRecordsBefore(4); err != nil {
		t.Fatal(err)
	}
	if got := l.Epochs(); len(got) != 2 || got[0] != [2]int64{2, 4} {
		t.Fatalf("after raising the start %v", got)
	}
	d.Close()
	l2, _ := openLog(t, testDir(t, mem), Config{})
	if l2.LatestEpoch() != 4 || len(l2.Epochs()) != 2 || l2.LogStartOffset() != 4 {
		t.Fatalf("after restart %v", l2.Epochs())
	}
}

func TestCheckpointFormat(t *testing.T) {
	m := map[TopicPartition]int64{{"b", 1}: 7, {"a", 10}: 3, {"a", 2}: 0}
	enc := encodeOffsetCheckpoint(m)
	if string(enc) != "0\n3\na 2 0\na 10 3\nb 1 7\n" {
		t.Fatalf("encoded %q", enc)
	}
	back, err := parseOffsetCheckpoint(enc)
	if err != nil || len(back) != 3 || back[TopicPartition{"a", 10}] != 3 {
		t.Fatalf("parsed %v %v", back, err)
	}
	for _, bad := range []string{"", "1\n0\n", "0\n2\na 0 1\n", "0\n1\na x 1\n", "0\n1\na 0 -4\n", "0\n1\na 0\n"} {
		if _, err := parseOffsetCheckpoint([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	if _, err := parseEpochCheckpoint([]byte("0\n2\n3 10\n2 20\n")); err == nil {
		t.Error("accepted decreasing epochs")
	}
}

// Garbage in either offset checkpoint costs what the file saves (a
// shorter recovery scan, the raised log start) and nothing more: the
// directory opens, says what it ignored, and the logs recover in full.
func TestDamagedOffsetCheckpointsAreIgnoredWithAWarning(t *testing.T) {
	cfg := Config{SegmentBytes: 2000}
	mem, d, l, batches := filledLog(t, cfg, 12, 3)
	if _, err := l.DeleteRecordsBefore(5); err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	segs := l.Segments()
	crashed := mem.CrashClone(nil) // unclean: the recovery point would matter
	for _, f := range []string{RecoveryPointFile, LogStartFile} {
		if err := vfs.WriteFileAtomic(crashed, "/data/"+f, []byte("0\n5\nthis is not\n")); err != nil {
			t.Fatal(err)
		}
	}
	logger, lines := captureLog()
	l2, rep := openLog(t, testDirLog(t, crashed, logger), cfg)
	if rep.Clean || rep.SegmentsScanned != len(segs) || rep.Cut() {
		t.Fatalf("without a recovery point every segment is scanned: %+v", rep)
	}
	if l2.LogStartOffset() != 0 || l2.LogEndOffset() != l.LogEndOffset() {
		t.Fatalf("log [%d, %d), want [0, %d)", l2.LogStartOffset(), l2.LogEndOffset(), l.LogEndOffset())
	}
	requireBatches(t, l2, 0, batches, "after ignoring both checkpoints")
	for _, f := range []string{RecoveryPointFile, LogStartFile} {
		if out := lines.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, f) {
			t.Fatalf("no warning naming %s:\n%s", f, out)
		}
	}
}

// leader-epoch-checkpoint is a cache of what the batch headers say: a
// damaged one must not take the partition offline, and a missing one must
// not come back as "the current epoch starts at the log end".
func TestLeaderEpochCheckpointRebuiltFromBatches(t *testing.T) {
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	cfg := Config{SegmentBytes: 300}
	l, _ := openLog(t, d, cfg)
	for i, epoch := range []int32{0, 0, 3, 3, 5, 5, 5} {
		if _, err := l.Append(makeBatch(2, 40, 1, uint64(i)), epoch, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.DeleteRecordsBefore(3); err != nil { // inside epoch 0's second batch
		t.Fatal(err)
	}
	want := l.Epochs()
	if len(want) != 3 || want[0] != [2]int64{0, 3} || want[2] != [2]int64{5, 8} {
		t.Fatalf("epochs %v", want)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	ckPath := "/data/topic-0/" + LeaderEpochFile
	good, _ := vfs.ReadFile(mem, ckPath)
	for _, damage := range []struct {
		what  string
		apply func() error
	}{
		{"garbage", func() error { return vfs.WriteFileAtomic(mem, ckPath, []byte("0\n2\n7 x\n")) }},
		{"deleted", func() error { return mem.Remove(ckPath) }},
	} {
		if err := damage.apply(); err != nil {
			t.Fatal(err)
		}
		logger, lines := captureLog()
		d := testDirLog(t, mem, logger)
		l, _, err := d.Open("topic", 0, cfg)
		if err != nil {
			t.Fatalf("%s leader-epoch-checkpoint: %v", damage.what, err)
		}
		if got := l.Epochs(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s leader-epoch-checkpoint: rebuilt %v, want %v", damage.what, got, want)
		}
		if err := l.AssignEpoch(5, l.LogEndOffset()); err != nil { // what a leader does on open
			t.Fatal(err)
		}
		if e, end := l.EndOffsetForEpoch(3); e != 3 || end != 8 {
			t.Fatalf("%s: EndOffsetForEpoch(3) = %d, %d", damage.what, e, end)
		}
		if got, _ := vfs.ReadFile(mem, ckPath); !equalBatches(got, good) {
			t.Fatalf("%s: file %q after the rebuild, want %q", damage.what, got, good)
		}
		if !strings.Contains(lines.String(), "rebuilding it from the batch headers") {
			t.Fatalf("%s: no log line:\n%s", damage.what, lines)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCheckpointsAreAtomic(t *testing.T) {
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	l, _ := openLog(t, d, Config{})
	fillLog(t, l, 2)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	// Every crash point during the next checkpoint leaves old or new content.
	fillLog(t, l, 1)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	var images []*vfs.MemFS
	mem.SetFault(func(op vfs.Op, name string, size int) (int, error) {
		images = append(images, mem.CrashClone(nil))
		return 0, nil
	})
	if err := d.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	mem.SetFault(nil)
	images = append(images, mem.CrashClone(nil))
	for i, img := range images {
		b, err := vfs.ReadFile(img, "/data/"+RecoveryPointFile)
		if err != nil || (string(b) != "0\n1\ntopic 0 6\n" && string(b) != "0\n1\ntopic 0 9\n") {
			t.Fatalf("crash image %d: %q %v", i, b, err)
		}
	}
	if b, _ := vfs.ReadFile(images[len(images)-1], "/data/"+RecoveryPointFile); !strings.Contains(string(b), " 9\n") {
		t.Fatalf("final checkpoint %q", b)
	}
}

func TestDirRemoveAndPartitions(t *testing.T) {
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	l, _ := openLog(t, d, Config{})
	fillLog(t, l, 3)
	l2, _, _ := d.Open("other-topic", 3, Config{})
	fillLog(t, l2, 1)
	parts, err := d.Partitions()
	if err != nil || len(parts) != 2 || parts[0] != (TopicPartition{"other-topic", 3}) {
		t.Fatalf("partitions %v %v", parts, err)
	}
	res, _ := l.Read(ReadRequest{Offset: 0, MaxBytes: 1 << 20, MaxOffset: -1})
	if err := d.Remove("topic", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Stat("/data/topic-0"); err == nil {
		t.Fatal("partition directory survived Remove")
	}
	buf := make([]byte, res.Bytes)
	if _, err := res.Regions[0].File.ReadAt(buf, 0); err != nil {
		t.Fatalf("region of a removed partition: %v", err)
	}
	res.Release()
	if _, err := l.Append(makeBatch(1, 1, 1, 1), 0, 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("append to a removed log: %v", err)
	}
	ck, _ := vfs.ReadFile(mem, "/data/"+RecoveryPointFile)
	if strings.Contains(string(ck), "topic 0") {
		t.Fatalf("removed partition still checkpointed: %q", ck)
	}
	// Reopening creates a fresh, empty log.
	l3, _ := openLog(t, d, Config{})
	if l3.LogEndOffset() != 0 {
		t.Fatalf("recreated log ends at %d", l3.LogEndOffset())
	}
	if _, _, err := d.Open("topic", 0, Config{}); !errors.Is(err, ErrAlreadyOpen) {
		t.Fatalf("double open: %v", err)
	}
}

func TestConfigDefaultsAndPolicyNames(t *testing.T) {
	c := DefaultConfig()
	if c.SegmentBytes != 1<<30 || c.IndexIntervalBytes != 4096 || c.SegmentIndexBytes != 10<<20 ||
		c.MaxMessageBytes != 1048588 || c.FlushPolicy != FlushGroup || c.RetentionBytes != Unlimited ||
		c.RetentionMs != 7*24*3600*1000 {
		t.Fatalf("defaults %+v", c)
	}
	for _, n := range []string{"always", "group", "interval", "never"} {
		p, err := ParseFlushPolicy(n)
		if err != nil || p.String() != n {
			t.Fatalf("%s: %v %v", n, p, err)
		}
	}
	if _, err := ParseFlushPolicy("sometimes"); err == nil {
		t.Fatal("unknown policy accepted")
	}
	// Live config: a smaller max.message.bytes applies to the next append.
	d := testDir(t, nil)
	l, _ := openLog(t, d, Config{})
	mustAppend(t, l, makeBatch(1, 500, 1, 1), 0)
	l.SetConfig(Config{MaxMessageBytes: 100})
	if _, err := l.Append(makeBatch(1, 500, 1, 1), 0, 0); !errors.Is(err, ErrRecordTooLarge) {
		t.Fatalf("after lowering max.message.bytes: %v", err)
	}
	if l.Config().MaxMessageBytes != 100 || l.Config().SegmentBytes != DefaultSegmentBytes {
		t.Fatalf("config %+v", l.Config())
	}
}

// ListOffsets MAX_TIMESTAMP answers the record with the largest
// timestamp, wherever it sits in its batch (the index knows only the
// batch, by its last offset), also after the indexes come back from disk
// and when the log start is inside that batch.
func TestMaxTimestampInsideItsBatch(t *testing.T) {
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	l, _ := openLog(t, d, Config{IndexIntervalBytes: 100})
	mustAppend(t, l, makeBatch(3, 20, 1000, 1), 0)                          // 0..2
	mustAppend(t, l, makeBatchTs(2000, []int64{5, 90, 3, 40}, 20, 2), 0)    // 3..6, max 2090 at 4
	mustAppend(t, l, makeBatchTs(1500, []int64{0, 1, 2}, 20, 3), 0)         // 7..9
	mustAppend(t, l, makeBatchTs(1900, []int64{0, 100, 190, 50}, 20, 4), 0) // 10..13, max 2090 at 12: later
	check := func(l *Log, what string, off, ts int64) {
		t.Helper()
		got, err := l.OffsetForTimestamp(MaxTimestamp)
		if err != nil || !got.Found || got.Offset != off || got.Timestamp != ts {
			t.Fatalf("%s: MAX_TIMESTAMP = %+v %v, want offset %d timestamp %d", what, got, err, off, ts)
		}
	}
	check(l, "live", 4, 2090)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	l, _ = openLog(t, testDir(t, mem), Config{IndexIntervalBytes: 100})
	check(l, "after a clean restart", 4, 2090)
	if _, err := l.DeleteRecordsBefore(5); err != nil {
		t.Fatal(err)
	}
	check(l, "with the log start past it", 12, 2090)
}
