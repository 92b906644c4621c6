package segment

import (
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
)

// appendOnes appends n one-record batches and returns the last offset.
func appendOnes(t *testing.T, l *Log, n int) int64 {
	t.Helper()
	var last int64
	for i := range n {
		r := mustAppend(t, l, makeBatch(1, 100, 1000, uint64(i)), 1000)
		last = r.LastOffset
	}
	return last
}

func abortedAt(pid, first, last int64) AbortedTxn {
	return AbortedTxn{ProducerID: pid, FirstOffset: first, LastOffset: last, LastStableOffset: last + 1}
}

func TestAbortedTxnsAcrossSegmentsAndRestarts(t *testing.T) {
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	cfg := Config{SegmentBytes: 1 << 10} // a few batches a segment
	l, _ := openLog(t, d, cfg)
	appendOnes(t, l, 5)
	if err := l.AddAbortedTxn(abortedAt(1, 0, 4)); err != nil {
		t.Fatal(err)
	}
	if err := l.AddAbortedTxn(abortedAt(1, 0, 4)); err != nil { // a replay's repeat
		t.Fatal(err)
	}
	appendOnes(t, l, 19)
	// The second abort's entry is written before its marker is appended;
	// a third entry for the same marker (a replay) is not added again.
	last := l.LogEndOffset()
	if err := l.AddAbortedTxn(abortedAt(2, 6, last)); err != nil {
		t.Fatal(err)
	}
	appendOnes(t, l, 1)
	if err := l.AddAbortedTxn(abortedAt(2, 6, last)); err != nil {
		t.Fatal(err)
	}
	if len(l.Segments()) < 3 {
		t.Fatalf("%d segments, want several", len(l.Segments()))
	}
	check := func(what string, l *Log, from, upTo int64, want ...int64) {
		t.Helper()
		got, err := l.AbortedTxns(from, upTo)
		if err != nil {
			t.Fatal(err)
		}
		var pids []int64
		for _, a := range got {
			pids = append(pids, a.ProducerID)
		}
		if len(pids) != len(want) {
			t.Fatalf("%s: aborted %v, want producers %v", what, pids, want)
		}
		for i := range want {
			if pids[i] != want[i] {
				t.Fatalf("%s: aborted %v, want producers %v", what, pids, want)
			}
		}
	}
	check("from the start", l, 0, 10, 1, 2)
	check("after the first abort", l, 5, 10, 2)
	check("before the second began", l, 0, 6, 1)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = testDir(t, mem)
	l, _ = openLog(t, d, cfg)
	check("after a restart", l, 0, last+1, 1, 2)

	// A follower truncating below the second marker loses its entry.
	if _, err := l.TruncateTo(last); err != nil {
		t.Fatal(err)
	}
	check("after truncation", l, 0, last+1, 1)
	if err := l.AddAbortedTxn(abortedAt(3, 0, last+5)); err == nil {
		t.Fatal("an entry past the log end was accepted")
	}
}

// The entry is durable before its marker: a crash that loses the marker
// leaves an entry recovery must drop.
func TestAbortedTxnWhoseMarkerDidNotSurvive(t *testing.T) {
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	l, _ := openLog(t, d, Config{FlushPolicy: FlushNever})
	appendOnes(t, l, 3)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	kept := abortedAt(1, 0, 2)
	if err := l.AddAbortedTxn(kept); err != nil {
		t.Fatal(err)
	}
	appendOnes(t, l, 1) // the transaction's record, never fsynced
	// The entry goes first, then its marker (never fsynced either).
	if err := l.AddAbortedTxn(abortedAt(2, 3, l.LogEndOffset())); err != nil {
		t.Fatal(err)
	}
	appendOnes(t, l, 1)
	crashed := mem.CrashClone(nil) // only synced bytes survive
	d2 := testDir(t, crashed)
	l2, _ := openLog(t, d2, Config{FlushPolicy: FlushNever})
	if end := l2.LogEndOffset(); end != 3 {
		t.Fatalf("log end %d after the crash, want 3", end)
	}
	got, err := l2.AbortedTxns(0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != kept {
		t.Fatalf("aborted after the crash: %+v, want only %+v", got, kept)
	}
}
