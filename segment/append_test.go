package segment

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"

	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
)

func TestAppendAssignsOffsetsAndReadsBack(t *testing.T) {
	d := testDir(t, nil)
	l, rep := openLog(t, d, Config{IndexIntervalBytes: 256})
	if !rep.Clean || l.LogEndOffset() != 0 {
		t.Fatalf("fresh log: %+v leo=%d", rep, l.LogEndOffset())
	}
	var want [][]byte
	for i := range 50 {
		b := makeBatch(1+i%5, 40, int64(1000+i*10), uint64(i))
		r := mustAppend(t, l, b, 5000)
		if r.FirstOffset != r.LogEndOffset-int64(1+i%5) || r.LastOffset != r.LogEndOffset-1 || r.LogAppendTime != -1 {
			t.Fatalf("append %d: %+v", i, r)
		}
		h, _ := wire.ParseBatchHeader(b)
		if h.BaseOffset != r.FirstOffset || h.LeaderEpoch != 1 {
			t.Fatalf("header not stamped in place: %+v", h)
		}
		want = append(want, b)
	}
	requireBatches(t, l, 0, want, "after 50 appends")
	if len(l.active().idx) == 0 {
		t.Fatal("no offset index entries after 50 appends with a 256-byte interval")
	}
	// A read from the middle of a batch returns that whole batch.
	mid := want[10]
	h, _ := wire.ParseBatchHeader(mid)
	b, _, err := l.ReadBytes(ReadRequest{Offset: h.LastOffset(), MaxBytes: int64(len(mid)), MaxOffset: -1})
	if err != nil || !equalBatches(b, mid) {
		t.Fatalf("mid-batch read: %v, %d bytes", err, len(b))
	}
}

func TestAppendMultipleBatchesAllOrNothing(t *testing.T) {
	d := testDir(t, nil)
	l, _ := openLog(t, d, Config{})
	good := makeBatch(3, 10, 1, 1)
	bad := makeBatch(2, 10, 1, 2)
	bad[len(bad)-1] ^= 0xff // breaks the CRC
	set := append(append([]byte(nil), good...), bad...)
	_, err := l.Append(set, 0, 0)
	var be *BatchError
	if !errors.As(err, &be) || be.Index != 1 || !errors.Is(err, wire.ErrBatchCRC) {
		t.Fatalf("err = %v", err)
	}
	if l.LogEndOffset() != 0 || l.Size() != 0 {
		t.Fatalf("log changed by a rejected append: leo=%d size=%d", l.LogEndOffset(), l.Size())
	}
	set = append(append([]byte(nil), good...), makeBatch(2, 10, 1, 3)...)
	r := mustAppend(t, l, set, 0)
	if r.FirstOffset != 0 || r.LastOffset != 4 || r.LogEndOffset != 5 {
		t.Fatalf("result %+v", r)
	}
}

func TestAppendRejectsBadBatches(t *testing.T) {
	lie := makeBatch(1, 10, 1, 1)
	lie[wire.BatchLengthPos+3] += 50 // the length field claims more than there is
	magic := makeBatch(1, 10, 1, 1)
	magic[wire.BatchMagicPos] = 1
	crc := makeBatch(1, 10, 1, 1)
	crc[wire.BatchCRCPos] ^= 1
	empty := makeBatch(1, 10, 1, 1)[:wire.BatchHeaderSize]
	empty[wire.BatchLengthPos+3] = byte(wire.BatchHeaderSize - wire.BatchLogOverhead)
	empty[wire.BatchRecordCountPos+3] = 0
	empty[wire.BatchLastOffsetDeltaPos] = 0xff
	empty[wire.BatchLastOffsetDeltaPos+1] = 0xff
	empty[wire.BatchLastOffsetDeltaPos+2] = 0xff
	empty[wire.BatchLastOffsetDeltaPos+3] = 0xff
	batchtest.Reseal(empty)
	count := makeBatch(3, 10, 1, 1)
	count[wire.BatchLastOffsetDeltaPos+3] = 5
	batchtest.Reseal(count)
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"nothing", nil, ErrNoBatches},
		{"short", make([]byte, 20), wire.ErrBatchTooShort},
		{"lying length", lie, wire.ErrBatchLength},
		{"magic", magic, wire.ErrBatchMagic},
		{"crc", crc, wire.ErrBatchCRC},
		{"empty batch", empty, wire.ErrBatchEmpty},
		{"record count", count, wire.ErrBatchRecordCount},
		{"too large", makeBatch(10, 200, 1, 1), ErrRecordTooLarge},
	}
	d := testDir(t, nil)
	l, _ := openLog(t, d, Config{MaxMessageBytes: 1000})
	mustAppend(t, l, makeBatch(2, 5, 1, 9), 0)
	before, _, _ := l.ReadBytes(ReadRequest{Offset: 0, MaxBytes: 1 << 20, MaxOffset: -1})
	for _, c := range cases {
		_, err := l.Append(c.b, 0, 0)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
		if l.LogEndOffset() != 2 || l.Size() != int64(len(before)) {
			t.Errorf("%s: log changed: leo=%d size=%d", c.name, l.LogEndOffset(), l.Size())
		}
	}
	after, _, _ := l.ReadBytes(ReadRequest{Offset: 0, MaxBytes: 1 << 20, MaxOffset: -1})
	if !equalBatches(before, after) {
		t.Fatal("log content changed by rejected appends")
	}
}

func TestAppendLogAppendTime(t *testing.T) {
	d := testDir(t, nil)
	l, _ := openLog(t, d, Config{LogAppendTime: true})
	b := makeBatch(2, 5, 100, 1)
	r := mustAppend(t, l, b, 777)
	if r.LogAppendTime != 777 {
		t.Fatalf("log append time %d", r.LogAppendTime)
	}
	h, err := wire.ValidateBatch(b)
	if err != nil || h.MaxTimestamp != 777 || h.Attributes&wire.AttrTimestampLogTime == 0 {
		t.Fatalf("batch not stamped: %+v %v", h, err)
	}
}

func TestAppendOutOfSpaceAndTornWriteLeaveLogUnchanged(t *testing.T) {
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	l, _ := openLog(t, d, Config{FlushPolicy: FlushNever})
	mustAppend(t, l, makeBatch(2, 10, 1, 1), 0)
	before, _, _ := l.ReadBytes(ReadRequest{Offset: 0, MaxBytes: 1 << 20, MaxOffset: -1})
	used := func() int64 {
		var n int64
		for _, p := range []string{"/data/topic-0/" + LeaderEpochFile, activeLog} {
			st, _ := mem.Stat(p)
			n += st.Size
		}
		return n
	}
	mem.SetCapacity(used() + 100) // room for part of the next batch only
	_, err := l.Append(makeBatch(3, 100, 1, 2), 1, 0)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on a full disk: %v", err)
	}
	check := func(what string) {
		t.Helper()
		after, _, err := l.ReadBytes(ReadRequest{Offset: 0, MaxBytes: 1 << 20, MaxOffset: -1})
		if err != nil || !equalBatches(before, after) || l.LogEndOffset() != 2 {
			t.Fatalf("%s changed the log: leo %d, err %v", what, l.LogEndOffset(), err)
		}
		if st, _ := mem.Stat(activeLog); st.Size != int64(len(before)) {
			t.Fatalf("%s left %d bytes in the file, want %d", what, st.Size, len(before))
		}
	}
	check("ENOSPC")
	mem.SetCapacity(0)
	mem.SetFault(func(op vfs.Op, name string, size int) (int, error) {
		if op == vfs.OpWrite && strings.HasSuffix(name, LogSuffix) {
			return size / 2, vfs.ErrInjected
		}
		return 0, nil
	})
	if _, err := l.Append(makeBatch(3, 100, 1, 3), 1, 0); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("torn write: %v", err)
	}
	check("a torn write")
	mem.SetFault(nil)
	if r := mustAppend(t, l, makeBatch(1, 10, 1, 4), 0); r.FirstOffset != 2 {
		t.Fatalf("append after the failures at %d", r.FirstOffset)
	}
	if l.Failure() != nil {
		t.Fatalf("log failed: %v", l.Failure())
	}
}

// A full disk as the operating system presents it: os.File.WriteAt
// reports n == 0 from a write that put part of its bytes down before the
// disk filled, so the append must undo the write without trusting n.
// Junk left past the log end would make the next clean open refuse the
// log (no reservation here, so nothing else trims the file) and a crash
// recovery report never-acknowledged bytes as lost.
func TestAppendOnFullDiskReportingZeroLeavesNoJunk(t *testing.T) {
	mem := vfs.NewMemFS()
	efs := vfs.NewErrorFS(mem, true)
	open := func(fs vfs.FS) *Dir {
		d, err := OpenDir("/data", Options{FS: fs, FlushWorkers: 1, Logger: quietLogger, ReserveBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := open(efs)
	l, _ := openLog(t, d, Config{})
	want := fillLog(t, l, 3)
	size := l.Size()
	big := makeBatch(10, 200, 1, 9)
	efs.SetFault(vfs.NoSpaceAfter(int64(len(big) / 2)))
	for i := range 3 {
		if _, err := l.Append(big, 1, 0); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("append %d on a full disk: %v", i, err)
		}
		if st, _ := mem.Stat(activeLog); st.Size != size {
			t.Fatalf("rejected append %d left %d bytes past the log end", i, st.Size-size)
		}
	}
	efs.SetFault(nil)
	small := makeBatch(1, 10, 1, 10)
	mustAppend(t, l, small, 0) // shorter than the junk a partial write would leave
	want = append(want, small)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}

	// A crash now: what was fsynced is whole batches, nothing to cut.
	_, rep := openLog(t, open(mem.CrashClone(nil)), Config{})
	if rep.TruncatedBytes != 0 || rep.LostFromOffset != -1 {
		t.Fatalf("recovery after a crash cut bytes no append wrote: %+v", rep)
	}
	// A clean restart opens the log as it was.
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	l2, _ := openLog(t, open(mem), Config{})
	requireBatches(t, l2, 0, want, "after a clean restart")
}
