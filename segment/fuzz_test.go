package segment

import (
	"bytes"
	"errors"
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
)

// FuzzAppendValidation feeds arbitrary bytes to Append: it must never
// panic; a rejected append leaves the log unchanged, an accepted one reads
// back byte for byte (offsets and epoch rewritten).
func FuzzAppendValidation(f *testing.F) {
	one := makeBatch(2, 10, 5, 1)
	f.Add(one)
	f.Add(append(append([]byte(nil), one...), makeBatch(1, 3, 9, 2)...))
	f.Add(one[:40])
	bad := append([]byte(nil), one...)
	bad[wire.BatchCRCPos] ^= 1
	f.Add(bad)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := testDir(t, nil)
		l, _ := openLog(t, d, Config{MaxMessageBytes: 4096, FlushPolicy: FlushNever})
		mustAppend(t, l, makeBatch(1, 1, 1, 1), 0)
		in := append([]byte(nil), b...)
		res, err := l.Append(in, 9, 0)
		if err != nil {
			var be *BatchError
			if !errors.Is(err, ErrNoBatches) && !errors.As(err, &be) && !errors.Is(err, ErrRecordTooLarge) {
				t.Fatalf("untyped rejection: %v", err)
			}
			if l.LogEndOffset() != 1 {
				t.Fatalf("rejected append moved the log end to %d", l.LogEndOffset())
			}
			return
		}
		got, next, err := l.ReadBytes(ReadRequest{Offset: 1, MaxBytes: 1 << 30, MaxOffset: -1})
		if err != nil || next != res.LogEndOffset || !bytes.Equal(got, in) {
			t.Fatalf("accepted append reads back differently (err %v)", err)
		}
		// Only the header fields outside the CRC changed.
		for p := 0; p < len(in); {
			ph := must(wire.ParseBatchHeader(in[p:]))
			h, err := wire.ValidateBatch(in[p : p+int(ph.Size())])
			if err != nil || h.LeaderEpoch != 9 {
				t.Fatalf("stored batch invalid: %v", err)
			}
			p += int(h.Size())
		}
	})
}

// FuzzRecovery opens a log whose active segment and index hold arbitrary
// bytes, cleanly or not: it must never panic, and when it opens, every
// read returns whole valid batches with increasing offsets.
func FuzzRecovery(f *testing.F) {
	a := makeBatch(2, 10, 5, 1)
	b := makeBatch(3, 20, 7, 2)
	wire.SetBatchBaseOffset(b, 2)
	two := append(append([]byte(nil), a...), b...)
	f.Add(two, []byte{}, false)
	f.Add(two[:len(two)-7], []byte{0, 0, 0, 1, 0, 0, 0, 0}, false)
	f.Add(two, []byte{0, 0, 0, 4, 0, 0, 0, byte(len(a))}, true)
	f.Add([]byte("garbage that is not a batch at all, long enough for a header........"), []byte{}, true)
	f.Fuzz(func(t *testing.T, logBytes, idxBytes []byte, clean bool) {
		mem := vfs.NewMemFS()
		if err := mem.MkdirAll("/data/topic-0"); err != nil {
			t.Fatal(err)
		}
		if err := vfs.WriteFileAtomic(mem, activeLog, logBytes); err != nil {
			t.Fatal(err)
		}
		if err := vfs.WriteFileAtomic(mem, "/data/topic-0/"+SegmentName(0, IndexSuffix), idxBytes); err != nil {
			t.Fatal(err)
		}
		if clean {
			if err := vfs.WriteFileAtomic(mem, "/data/"+CleanShutdownFile, []byte("{}")); err != nil {
				t.Fatal(err)
			}
		}
		d, err := OpenDir("/data", Options{FS: mem, Logger: quietLogger})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		l, rep, err := d.Open("topic", 0, Config{})
		if err != nil {
			if !errors.Is(err, ErrCorruption) && !errors.Is(err, ErrUnsupportedFormat) {
				t.Fatalf("open failed with an untyped error: %v", err)
			}
			return
		}
		if rep.Clean && rep.Cut() {
			t.Fatalf("clean open cut data: %+v", rep)
		}
		prev := int64(-1)
		for off := l.LogStartOffset(); off < l.LogEndOffset(); {
			data, next, err := l.ReadBytes(ReadRequest{Offset: off, MaxBytes: 1 << 20, MaxOffset: -1, MinOneBatch: true})
			if err != nil {
				t.Fatalf("read at %d: %v", off, err)
			}
			for len(data) > 0 {
				h, err := wire.ParseBatchHeader(data)
				if err != nil || h.Size() > int64(len(data)) {
					t.Fatal("partial batch returned")
				}
				if _, err := wire.ValidateBatch(data[:h.Size()]); err != nil {
					t.Fatalf("invalid batch returned: %v", err)
				}
				if h.BaseOffset <= prev {
					t.Fatalf("offsets not increasing: %d after %d", h.BaseOffset, prev)
				}
				prev = h.LastOffset()
				data = data[h.Size():]
			}
			if next <= off {
				t.Fatalf("no progress at %d", off)
			}
			off = next
		}
		if _, err := l.Append(makeBatch(1, 1, 1, 1), 0, 0); err != nil {
			t.Fatalf("append after recovery: %v", err)
		}
	})
}
