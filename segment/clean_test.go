package segment

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
)

// cleanRec is one record as the model knows it.
type cleanRec struct {
	key, value []byte // value nil: a tombstone
	ts         int64
}

// cleanModel is everything a test appended, by offset.
type cleanModel struct {
	recs    map[int64]cleanRec
	latest  map[string]int64 // key -> offset of its latest record
	aborted map[int64]bool   // offsets of records of aborted transactions
}

func newCleanModel() *cleanModel {
	return &cleanModel{recs: map[int64]cleanRec{}, latest: map[string]int64{}, aborted: map[int64]bool{}}
}

// appendKeyed appends one batch of recs and records them in the model.
func (m *cleanModel) appendKeyed(t testing.TB, l *Log, now int64, recs []batchtest.Record, opts ...batchtest.Option) AppendResult {
	t.Helper()
	res := mustAppend(t, l, batchtest.Build(recs, opts...), now)
	for i, r := range recs {
		off := res.FirstOffset + int64(i)
		m.recs[off] = cleanRec{key: r.Key, value: r.Value, ts: r.Timestamp}
		m.latest[string(r.Key)] = off
	}
	return res
}

// readRecords reads every record of the log, checking each batch as a
// stored one, offsets increasing and batches in order.
func readRecords(t testing.TB, l *Log) (offsets []int64, recs []cleanRec, headers []wire.BatchHeader) {
	t.Helper()
	prev := int64(-1)
	var scratch []byte
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
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
				t.Fatalf("partial batch: %v", err)
			}
			batch := b[:h.Size()]
			if _, err := wire.ValidateStoredBatch(batch); err != nil {
				t.Fatalf("batch at %d: %v", h.BaseOffset, err)
			}
			if h.BaseOffset <= prev {
				t.Fatalf("batch at %d after offset %d", h.BaseOffset, prev)
			}
			headers = append(headers, h)
			if !h.IsControl() {
				it, s, err := wire.NewBatchRecordIter(batch, scratch, 1<<26)
				scratch = s
				if err != nil {
					t.Fatal(err)
				}
				var r wire.Record
				for it.Next(&r) {
					o := h.BaseOffset + int64(r.OffsetDelta)
					if o <= prev || o > h.LastOffset() {
						t.Fatalf("record at %d in batch %d..%d after %d", o, h.BaseOffset, h.LastOffset(), prev)
					}
					prev = o
					offsets = append(offsets, o)
					recs = append(recs, cleanRec{key: bytes.Clone(r.Key), value: cloneNil(r.Value), ts: h.BaseTimestamp + r.TimestampDelta})
				}
				if err := it.Err(); err != nil {
					t.Fatal(err)
				}
			}
			prev = h.LastOffset()
			b = b[h.Size():]
		}
		off = next
	}
	return offsets, recs, headers
}

func cloneNil(b []byte) []byte {
	if b == nil {
		return nil
	}
	return bytes.Clone(b)
}

// checkAgainst checks what the log holds against the model: every record
// is the one appended at its offset (timestamp included), none of an
// aborted transaction once cleaned, and every key's latest record is
// there (a tombstone may be gone, and then the key entirely). It returns
// the offsets present.
func (m *cleanModel) checkAgainst(t testing.TB, l *Log, what string) map[int64]bool {
	t.Helper()
	offs, recs, _ := readRecords(t, l)
	present := map[int64]bool{}
	keys := map[string]bool{}
	for i, o := range offs {
		want, ok := m.recs[o]
		if !ok {
			t.Fatalf("%s: record at offset %d was never appended", what, o)
		}
		if !bytes.Equal(want.key, recs[i].key) || !bytes.Equal(want.value, recs[i].value) || (want.value == nil) != (recs[i].value == nil) || want.ts != recs[i].ts {
			t.Fatalf("%s: record at %d is %q=%q@%d, appended %q=%q@%d", what, o, recs[i].key, recs[i].value, recs[i].ts, want.key, want.value, want.ts)
		}
		present[o] = true
		keys[string(want.key)] = true
	}
	for k, o := range m.latest {
		if m.aborted[o] {
			continue
		}
		if !present[o] && (m.recs[o].value != nil || keys[k]) {
			t.Fatalf("%s: key %q lost its latest record (offset %d)", what, k, o)
		}
	}
	return present
}

// cleanCfg is a small-segment log config for cleaning tests.
var cleanCfg = Config{SegmentBytes: 4000, IndexIntervalBytes: 256, RetentionMs: Unlimited, RetentionBytes: Unlimited}

// rounds appends n rounds of keys key-0..key-(keys-1), batches of per
// records, values naming the round.
func (m *cleanModel) rounds(t testing.TB, l *Log, n, keys, per int, now int64, opts ...batchtest.Option) {
	for r := range n {
		for k := 0; k < keys; k += per {
			var recs []batchtest.Record
			for i := k; i < min(k+per, keys); i++ {
				recs = append(recs, batchtest.Record{Key: fmt.Appendf(nil, "key-%d", i), Value: fmt.Appendf(nil, "round-%d-%d", r, i), Timestamp: now})
			}
			m.appendKeyed(t, l, now, recs, opts...)
		}
	}
}

func (m *cleanModel) tombstones(t testing.TB, l *Log, from, to int, now int64) {
	var recs []batchtest.Record
	for i := from; i < to; i++ {
		recs = append(recs, batchtest.Record{Key: fmt.Appendf(nil, "key-%d", i), Timestamp: now})
	}
	m.appendKeyed(t, l, now, recs)
}

func TestCleanKeepsLatestRecordOfEveryKey(t *testing.T) {
	for _, codec := range []int{wire.CodecNone, wire.CodecLZ4, wire.CodecZstd} {
		t.Run(fmt.Sprint("codec", codec), func(t *testing.T) {
			mem := vfs.NewMemFS()
			d := testDir(t, mem)
			l, _ := openLog(t, d, cleanCfg)
			m := newCleanModel()
			var opts []batchtest.Option
			if codec != wire.CodecNone {
				opts = append(opts, batchtest.Compression(codec, wire.Compress))
			}
			now := int64(1_000_000)
			m.rounds(t, l, 20, 100, 7, now, opts...)
			m.tombstones(t, l, 0, 10, now)
			m.rounds(t, l, 1, 5, 5, now) // something after the tombstones, then a roll
			if err := l.Roll(now); err != nil {
				t.Fatal(err)
			}
			before := l.Size()
			st, err := l.Clean(CleanOptions{Now: now, DeleteRetentionMs: 1000, FirstDirty: -1, UpTo: -1, MapBytes: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			if st.EndOffset != l.active().base || st.MapFull {
				t.Fatalf("cleaned to %d (map full %v), want the active segment's base %d", st.EndOffset, st.MapFull, l.active().base)
			}
			present := m.checkAgainst(t, l, "after cleaning")
			if len(present) != 100 {
				t.Fatalf("%d records kept, want one per key (100, 10 of them tombstones)", len(present))
			}
			if l.Size() >= before/5 {
				t.Fatalf("log is %d bytes after cleaning, %d before", l.Size(), before)
			}
			// The tombstones stay until their horizon, then go.
			if _, err := l.Clean(CleanOptions{Now: now + 999, DeleteRetentionMs: 1000, FirstDirty: st.EndOffset, UpTo: -1, MapBytes: 1 << 20}); err != nil {
				t.Fatal(err)
			}
			if n := len(m.checkAgainst(t, l, "before the horizon")); n != 100 {
				t.Fatalf("%d records before the delete horizon, want 100", n)
			}
			m.rounds(t, l, 1, 1, 1, now) // a dirty record, so the next cleaning runs
			if err := l.Roll(now); err != nil {
				t.Fatal(err)
			}
			st, err = l.Clean(CleanOptions{Now: now + 1001, DeleteRetentionMs: 1000, FirstDirty: st.EndOffset, UpTo: -1, MapBytes: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			// key-0..4 were written again after their tombstones.
			if st.TombstonesCut != 5 {
				t.Fatalf("%d tombstones cut after the horizon, want 5", st.TombstonesCut)
			}
			if n := len(m.checkAgainst(t, l, "after the horizon")); n != 95 {
				t.Fatalf("%d records after the delete horizon, want 95", n)
			}
			// What the cleaning wrote survives a clean reopen and a scan.
			want, _, _ := readRecords(t, l)
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			for _, img := range []*vfs.MemFS{mem, mem.CrashClone(nil)} {
				d2 := testDir(t, img)
				l2, rep := openLog(t, d2, cleanCfg)
				if rep.Cut() {
					t.Fatalf("reopen cut the log: %+v", rep)
				}
				got, _, _ := readRecords(t, l2)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("reopened log holds offsets %v, want %v", got, want)
				}
				m.checkAgainst(t, l2, "reopened")
				d2.Close()
			}
		})
	}
}

// TestCleanMapBudget: a map too small for the dirty section cleans what
// it covers, and the next cleaning goes on from there.
func TestCleanMapBudget(t *testing.T) {
	d := testDir(t, nil)
	l, _ := openLog(t, d, cleanCfg)
	m := newCleanModel()
	now := int64(1000)
	m.rounds(t, l, 10, 200, 10, now)
	if err := l.Roll(now); err != nil {
		t.Fatal(err)
	}
	first := int64(-1)
	for pass := 0; ; pass++ {
		st, err := l.Clean(CleanOptions{Now: now, FirstDirty: first, UpTo: -1, MapBytes: 300 * offsetMapSlot})
		if err != nil {
			t.Fatal(err)
		}
		if st.EndOffset < 0 {
			break
		}
		if st.EndOffset <= first || pass > 50 {
			t.Fatalf("pass %d made no progress from %d", pass, first)
		}
		first = st.EndOffset
		m.checkAgainst(t, l, fmt.Sprint("pass ", pass))
	}
	if n := len(m.checkAgainst(t, l, "done")); n != 200 {
		t.Fatalf("%d records, want 200", n)
	}
}

// controlBatch is a transaction marker of pid (commit or abort).
func controlBatch(pid int64, commit bool, now int64) []byte {
	typ := byte(0)
	if commit {
		typ = 1
	}
	return batchtest.Build([]batchtest.Record{{Key: []byte{0, 0, 0, typ}, Value: []byte{0, 0, 0, 0, 0, 7}, Timestamp: now}},
		batchtest.Producer(pid, 0, -1), batchtest.Attributes(wire.AttrControl|wire.AttrTransactional))
}

// TestCleanTransactions: records of an aborted transaction go, committed
// ones are cleaned like any, markers stay while their transaction has
// records and then until their horizon; producers' last batches keep
// their headers.
func TestCleanTransactions(t *testing.T) {
	d := testDir(t, nil)
	l, _ := openLog(t, d, cleanCfg)
	m := newCleanModel()
	now := int64(5000)
	txn := func(pid int64, seq int32, commit bool, keys ...int) {
		var recs []batchtest.Record
		for _, k := range keys {
			recs = append(recs, batchtest.Record{Key: fmt.Appendf(nil, "key-%d", k), Value: fmt.Appendf(nil, "txn-%d-%d", pid, seq), Timestamp: now})
		}
		res := m.appendKeyed(t, l, now, recs, batchtest.Producer(pid, 0, seq), batchtest.Attributes(wire.AttrTransactional))
		if !commit {
			for o := res.FirstOffset; o <= res.LastOffset; o++ {
				m.aborted[o] = true
			}
			if err := l.AddAbortedTxn(AbortedTxn{ProducerID: pid, FirstOffset: res.FirstOffset, LastOffset: l.LogEndOffset(), LastStableOffset: l.LogEndOffset()}); err != nil {
				t.Fatal(err)
			}
		}
		mustAppend(t, l, controlBatch(pid, commit, now), now)
	}
	m.rounds(t, l, 3, 20, 5, now)
	txn(7, 0, false, 1, 2, 3)    // aborted: key-1..3 keep their round values
	txn(8, 0, true, 4, 5)        // committed: the latest for key-4, key-5
	m.rounds(t, l, 1, 3, 3, now) // key-0..2 again, plain
	if err := l.Roll(now); err != nil {
		t.Fatal(err)
	}
	st, err := l.Clean(CleanOptions{Now: now, DeleteRetentionMs: 100, FirstDirty: -1, UpTo: -1, MapBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if st.AbortedCut != 3 {
		t.Fatalf("%d aborted records cut, want 3", st.AbortedCut)
	}
	present := m.checkAgainst(t, l, "cleaned")
	for o := range m.aborted {
		if present[o] {
			t.Fatalf("aborted record at %d kept", o)
		}
	}
	_, _, hdrs := readRecords(t, l)
	markers := 0
	for _, h := range hdrs {
		if h.IsControl() {
			markers++
		}
	}
	if markers != 2 {
		t.Fatalf("%d markers after the first cleaning, want both", markers)
	}
	abs, err := l.AbortedTxns(0, l.LogEndOffset())
	if err != nil || len(abs) != 1 {
		t.Fatalf("aborted transactions after cleaning: %v %v", abs, err)
	}
	// Past the horizon the abort marker goes (its transaction has no
	// record left) with its index entry, but it is producer 7's last
	// batch... so it stays; the commit marker stays (its records do).
	m.rounds(t, l, 1, 1, 1, now)
	if err := l.Roll(now); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Clean(CleanOptions{Now: now + 200, DeleteRetentionMs: 100, FirstDirty: st.EndOffset, UpTo: -1, MapBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	m.checkAgainst(t, l, "past the horizon")
	_, _, hdrs = readRecords(t, l)
	pids := map[int64]int{}
	for _, h := range hdrs {
		if h.ProducerID >= 0 {
			pids[h.ProducerID]++
		}
	}
	if pids[7] == 0 || pids[8] == 0 {
		t.Fatalf("a producer's last batch went: batches by producer %v", pids)
	}
}

// TestCleanRespectsUpTo: nothing at or after UpTo (the last stable
// offset) is touched, and a log with nothing dirty below it is left alone.
func TestCleanRespectsUpTo(t *testing.T) {
	d := testDir(t, nil)
	l, _ := openLog(t, d, cleanCfg)
	m := newCleanModel()
	m.rounds(t, l, 10, 50, 5, 1)
	if err := l.Roll(1); err != nil {
		t.Fatal(err)
	}
	segs := l.Segments()
	upTo := segs[len(segs)/2].BaseOffset
	st, err := l.Clean(CleanOptions{Now: 1, FirstDirty: -1, UpTo: upTo, MapBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if st.EndOffset > upTo {
		t.Fatalf("cleaned up to %d, past %d", st.EndOffset, upTo)
	}
	present := m.checkAgainst(t, l, "cleaned")
	for o := range m.recs {
		if o >= upTo && !present[o] {
			t.Fatalf("record at %d (at or after UpTo %d) removed", o, upTo)
		}
	}
	if j, err := l.PrepareClean(CleanOptions{FirstDirty: st.EndOffset, UpTo: st.EndOffset}); err != nil || j != nil {
		t.Fatalf("a log with nothing dirty below the bound: job %v, %v", j, err)
	}
}

// TestCleanStale: a truncation between the snapshot and the commit
// abandons the cleaning, removing its files.
func TestCleanStale(t *testing.T) {
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	l, _ := openLog(t, d, cleanCfg)
	m := newCleanModel()
	m.rounds(t, l, 10, 50, 5, 1)
	if err := l.Roll(1); err != nil {
		t.Fatal(err)
	}
	j, err := l.PrepareClean(CleanOptions{Now: 1, FirstDirty: -1, UpTo: -1, MapBytes: 1 << 20})
	if err != nil || j == nil {
		t.Fatal(j, err)
	}
	if err := j.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.TruncateTo(l.Segments()[1].BaseOffset); err != nil {
		t.Fatal(err)
	}
	if _, err := l.CommitClean(j); err != ErrCleanStale {
		t.Fatalf("commit after a truncation: %v, want ErrCleanStale", err)
	}
	names, _ := mem.List(l.Path())
	for _, n := range names {
		if bytes.HasSuffix([]byte(n), []byte(CleanedSuffix)) || bytes.HasSuffix([]byte(n), []byte(SwapSuffix)) {
			t.Fatalf("%s left behind", n)
		}
	}
}

// TestCleanCrashPoints crashes a cleaning (and the second one, which
// removes tombstones) at every filesystem operation, with every fate of
// unsynced data a seed gives, and recovers from each image: the log holds
// either what it held before the cleaning or what the cleaning made,
// never a record that was not appended, never an older record than the
// key's latest missing... and opens without a cut.
func TestCleanCrashPoints(t *testing.T) {
	for _, tc := range []struct {
		name    string
		horizon bool
	}{{"first", false}, {"past-horizon", true}} {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMemFS()
			d := testDir(t, mem)
			l, _ := openLog(t, d, cleanCfg)
			m := newCleanModel()
			now := int64(1000)
			m.rounds(t, l, 8, 60, 6, now, batchtest.Producer(3, 0, 0))
			m.tombstones(t, l, 0, 6, now)
			m.rounds(t, l, 1, 6, 6, now)
			if err := l.Roll(now); err != nil {
				t.Fatal(err)
			}
			opts := CleanOptions{Now: now, DeleteRetentionMs: 10, FirstDirty: -1, UpTo: -1, MapBytes: 1 << 20}
			if tc.horizon {
				st, err := l.Clean(opts)
				if err != nil {
					t.Fatal(err)
				}
				m.rounds(t, l, 1, 3, 3, now)
				if err := l.Roll(now); err != nil {
					t.Fatal(err)
				}
				opts.Now, opts.FirstDirty = now+100, st.EndOffset
			}
			if err := l.Flush(); err != nil {
				t.Fatal(err)
			}
			before := m.checkAgainst(t, l, "before")
			var cuts []int64 // where a group may start: the segments' bases
			for _, sg := range l.Segments() {
				cuts = append(cuts, sg.BaseOffset)
			}
			cuts = append(cuts, l.LogEndOffset())
			var images []vfs.CrashImage
			var cleanErr error
			mem.CrashPoints([]uint64{1, 2}, func() { _, cleanErr = l.Clean(opts) }, func(img vfs.CrashImage) { images = append(images, img) })
			if cleanErr != nil {
				t.Fatal(cleanErr)
			}
			after := m.checkAgainst(t, l, "after")
			if len(after) >= len(before) {
				t.Fatalf("cleaning kept %d of %d records", len(after), len(before))
			}
			sawOld, sawNew, sawSome := 0, 0, 0
			for _, img := range images {
				what := fmt.Sprintf("crash at point %d (%s, seed %d)", img.Point, img.Where, img.Seed)
				d2, err := OpenDir("/data", Options{FS: img.FS, FlushWorkers: 1, Logger: quietLogger})
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				l2, rep, err := d2.Open("topic", 0, cleanCfg)
				if err != nil {
					t.Fatalf("%s: open: %v", what, err)
				}
				if rep.Lost() {
					t.Fatalf("%s: recovery cut the log: %+v", what, rep)
				}
				got := m.checkAgainst(t, l2, what)
				// Groups are swapped one at a time, oldest first: the log
				// is the cleaned groups up to a group boundary and the old
				// ones after it, never part of a group.
				switch {
				case sameSet(got, before):
					sawOld++
				case sameSet(got, after):
					sawNew++
				case cutBetween(got, before, after, cuts):
					sawSome++
				default:
					t.Fatalf("%s: %d records, not the %d before the cleaning, nor the %d after it, nor cleaned groups up to a segment boundary and old ones after", what, len(got), len(before), len(after))
				}
				names, _ := img.FS.List(l2.Path())
				for _, n := range names {
					if bytes.HasSuffix([]byte(n), []byte(CleanedSuffix)) || bytes.HasSuffix([]byte(n), []byte(SwapSuffix)) {
						t.Fatalf("%s: %s left after recovery", what, n)
					}
				}
				// The recovered log cleans again to the same result.
				if _, err := l2.Clean(opts); err != nil {
					t.Fatalf("%s: cleaning again: %v", what, err)
				}
				if got := m.checkAgainst(t, l2, what+", cleaned again"); !sameSet(got, after) {
					t.Fatalf("%s: cleaned again holds %d records, want %d", what, len(got), len(after))
				}
				d2.Close()
			}
			if sawOld == 0 || sawNew == 0 {
				t.Fatalf("crash images: %d old, %d new; the test does not cover the swap", sawOld, sawNew)
			}
			t.Logf("%d crash images: %d before the cleaning's swaps, %d after them all, %d with the first groups swapped", len(images), sawOld, sawNew, sawSome)
		})
	}
}

// cutBetween reports whether got is after below some cut and before from
// it on.
func cutBetween(got, before, after map[int64]bool, cuts []int64) bool {
	for _, c := range cuts {
		want := map[int64]bool{}
		for o := range after {
			if o < c {
				want[o] = true
			}
		}
		for o := range before {
			if o >= c {
				want[o] = true
			}
		}
		if sameSet(got, want) {
			return true
		}
	}
	return false
}

// subset reports whether every key of a is in b.
func subset(a, b map[int64]bool) bool {
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func sameSet(a, b map[int64]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// TestOffsetMap checks the map's latest-wins rule and its budget.
func TestOffsetMap(t *testing.T) {
	m := newOffsetMap(100*offsetMapSlot, 0.5)
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[string]int64{}
	for off := int64(0); ; off++ {
		k := fmt.Sprint(rng.IntN(60))
		if !m.put([]byte(k), off) {
			if _, ok := want[k]; ok {
				t.Fatalf("put of a known key refused")
			}
			break
		}
		want[k] = off
	}
	if len(want) != 48 {
		t.Fatalf("map took %d keys, want 48 (97 slots, the prime below 100, at 0.5)", len(want))
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got := m.get([]byte(k)); got != want[k] {
			t.Fatalf("key %s: %d, want %d", k, got, want[k])
		}
	}
	if m.get([]byte("absent")) != -1 {
		t.Fatal("absent key found")
	}
}

// TestCleanerCheckpoint: Kafka's offset-checkpoint format, atomically
// rewritten, read back after a reopen.
func TestCleanerCheckpoint(t *testing.T) {
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	if err := d.SetCleanerCheckpoint(TopicPartition{"a", 0}, 42); err != nil {
		t.Fatal(err)
	}
	if err := d.SetCleanerCheckpoint(TopicPartition{"__consumer_offsets", 3}, 7); err != nil {
		t.Fatal(err)
	}
	b, err := vfs.ReadFile(mem, "/data/"+CleanerCheckpointFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := "0\n2\n__consumer_offsets 3 7\na 0 42\n"; string(b) != want {
		t.Fatalf("checkpoint file:\n%s\nwant:\n%s", b, want)
	}
	d.Close()
	d2 := testDir(t, mem.CrashClone(nil))
	v, ok, err := d2.CleanerCheckpoint(TopicPartition{"a", 0})
	if err != nil || !ok || v != 42 {
		t.Fatalf("read back %d %v %v", v, ok, err)
	}
	if err := d2.SetCleanerCheckpoint(TopicPartition{"a", 0}, -1); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := d2.CleanerCheckpoint(TopicPartition{"a", 0}); ok {
		t.Fatal("entry not removed")
	}
}

// TestCleanReadersAcrossTheSwap: a read taken before the swap stays
// readable (byte-identical) after it, and reads after it, from any offset
// of the old log, return the cleaned batches without an error or a gap a
// reader should not see: the next batch at or after the offset asked for.
func TestCleanReadersAcrossTheSwap(t *testing.T) {
	d := testDir(t, nil)
	l, _ := openLog(t, d, cleanCfg)
	m := newCleanModel()
	m.rounds(t, l, 10, 40, 4, 1)
	if err := l.Roll(1); err != nil {
		t.Fatal(err)
	}
	end := l.LogEndOffset()
	var held []*ReadResult
	var heldBytes [][]byte
	for off := int64(0); off < end; off += 37 {
		res, err := l.Read(ReadRequest{Offset: off, MaxBytes: 3000, MaxOffset: -1, MinOneBatch: true})
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, res)
		b, _, err := l.ReadBytes(ReadRequest{Offset: off, MaxBytes: 3000, MaxOffset: -1, MinOneBatch: true})
		if err != nil {
			t.Fatal(err)
		}
		heldBytes = append(heldBytes, b)
	}
	j, err := l.PrepareClean(CleanOptions{Now: 1, FirstDirty: -1, UpTo: -1, MapBytes: 1 << 20})
	if err != nil || j == nil {
		t.Fatal(j, err)
	}
	if err := j.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.CommitClean(j); err != nil {
		t.Fatal(err)
	}
	for i, res := range held {
		var got []byte
		for _, r := range res.Regions {
			b := make([]byte, r.Length)
			if _, err := r.File.ReadAt(b, r.Position); err != nil {
				t.Fatalf("read %d held across the swap: %v", i, err)
			}
			got = append(got, b...)
		}
		res.Release()
		if !bytes.Equal(got, heldBytes[i]) {
			t.Fatalf("read %d held across the swap changed", i)
		}
	}
	offs, _, _ := readRecords(t, l)
	for off := int64(0); off < end; off++ {
		b, next, err := l.ReadBytes(ReadRequest{Offset: off, MaxBytes: 1 << 20, MaxOffset: -1, MinOneBatch: true})
		if err != nil {
			t.Fatalf("read at %d after the swap: %v", off, err)
		}
		if next <= off {
			t.Fatalf("read at %d after the swap made no progress (next %d)", off, next)
		}
		// The first record returned at or after off is the first kept one.
		i := sort.Search(len(offs), func(i int) bool { return offs[i] >= off })
		for len(b) > 0 { // empty batches (a group's last, kept) first
			h, err := wire.ParseBatchHeader(b)
			if err != nil || h.NumRecords > 0 {
				break
			}
			b = b[h.Size():]
		}
		if i < len(offs) && len(b) > 0 {
			h, err := wire.ParseBatchHeader(b)
			if err != nil || h.LastOffset() < offs[i] || h.BaseOffset > offs[i] {
				t.Fatalf("read at %d after the swap starts with batch %d..%d, want the one holding %d", off, h.BaseOffset, h.LastOffset(), offs[i])
			}
		}
	}
}

// TestCleanFailures fails each filesystem operation of a cleaning in
// turn (a write torn in half, a failed fsync, rename or remove): the
// cleaning reports the error, and the log, reopened from the disk as it
// was left, holds what it held before or what the cleaning made, with
// no temporary file left.
func TestCleanFailures(t *testing.T) {
	for n := 0; ; n++ {
		mem := vfs.NewMemFS()
		d := testDir(t, mem)
		l, _ := openLog(t, d, cleanCfg)
		m := newCleanModel()
		m.rounds(t, l, 6, 40, 5, 1)
		m.tombstones(t, l, 0, 4, 1)
		m.rounds(t, l, 1, 4, 4, 1)
		if err := l.Roll(1); err != nil {
			t.Fatal(err)
		}
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
		before := m.checkAgainst(t, l, "before")
		fault, seen := vfs.FailNth(n)
		mem.SetFault(fault)
		_, err := l.Clean(CleanOptions{Now: 1, DeleteRetentionMs: 10, FirstDirty: -1, UpTo: -1, MapBytes: 1 << 20})
		mem.SetFault(nil)
		if seen() <= n {
			if err != nil {
				t.Fatalf("no operation failed, yet the cleaning failed: %v", err)
			}
			t.Logf("failed each of %d operations in turn", n)
			return
		}
		what := fmt.Sprintf("operation %d failed", n)
		if err == nil {
			t.Fatalf("%s: the cleaning reported no error", what)
		}
		if l.Failure() == nil {
			// The failure came before the swap: the log goes on unchanged.
			if got := m.checkAgainst(t, l, what); !sameSet(got, before) {
				t.Fatalf("%s: the live log changed", what)
			}
		}
		d.Close() // unclean when the log failed
		d2 := testDir(t, mem)
		l2, rep := openLog(t, d2, cleanCfg)
		if rep.Lost() {
			t.Fatalf("%s: reopening cut the log: %+v", what, rep)
		}
		got := m.checkAgainst(t, l2, what+", reopened")
		if !subset(got, before) {
			t.Fatalf("%s: reopened log holds records it did not have", what)
		}
		names, _ := mem.List(l2.Path())
		for _, nm := range names {
			if bytes.HasSuffix([]byte(nm), []byte(CleanedSuffix)) || bytes.HasSuffix([]byte(nm), []byte(SwapSuffix)) {
				t.Fatalf("%s: %s left after reopening", what, nm)
			}
		}
		d2.Close()
	}
}

// TestAppendReplicatedCompactedBatch: a follower takes the leader's
// cleaned batches (fewer records than their offset range, or none) as
// they are; a leader's append refuses them.
func TestAppendReplicatedCompactedBatch(t *testing.T) {
	d := testDir(t, nil)
	l, _ := openLog(t, d, cleanCfg)
	m := newCleanModel()
	m.rounds(t, l, 1, 20, 5, 1, batchtest.Producer(9, 0, 0))
	m.tombstones(t, l, 0, 2, 1) // the first batch loses key-0 and key-1
	if err := l.Roll(1); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Clean(CleanOptions{Now: 1, DeleteRetentionMs: 100, FirstDirty: -1, UpTo: -1, MapBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	var cleaned []byte
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		b, next, err := l.ReadBytes(ReadRequest{Offset: off, MaxBytes: 1 << 20, MaxOffset: -1, MinOneBatch: true})
		if err != nil {
			t.Fatal(err)
		}
		cleaned = append(cleaned, b...)
		off = next
	}
	h, _ := wire.ParseBatchHeader(cleaned)
	if h.NumRecords == h.LastOffsetDelta+1 {
		t.Fatalf("the first cleaned batch (%d records, last delta %d) lost nothing; the test needs one that did", h.NumRecords, h.LastOffsetDelta)
	}
	f, _ := openLog(t, testDir(t, nil), cleanCfg)
	if _, err := f.AppendReplicated(bytes.Clone(cleaned), 1); err != nil {
		t.Fatalf("a follower refuses the leader's cleaned batches: %v", err)
	}
	m.checkAgainst(t, f, "follower")
	if _, err := f.Append(bytes.Clone(cleaned[:h.Size()]), 1, 1); err == nil {
		t.Fatal("a leader's append took a batch with fewer records than its offset range")
	}
}

// TestCleanStop: a closed Stop abandons the cleaning, leaving the log and
// no file behind.
func TestCleanStop(t *testing.T) {
	mem := vfs.NewMemFS()
	d := testDir(t, mem)
	l, _ := openLog(t, d, cleanCfg)
	m := newCleanModel()
	m.rounds(t, l, 5, 40, 5, 1)
	if err := l.Roll(1); err != nil {
		t.Fatal(err)
	}
	before := m.checkAgainst(t, l, "before")
	stop := make(chan struct{})
	close(stop)
	if _, err := l.Clean(CleanOptions{Now: 1, FirstDirty: -1, UpTo: -1, MapBytes: 1 << 20, Stop: stop}); err != ErrCleanStopped {
		t.Fatalf("cleaning with Stop closed: %v, want ErrCleanStopped", err)
	}
	if got := m.checkAgainst(t, l, "after"); !sameSet(got, before) {
		t.Fatal("a stopped cleaning changed the log")
	}
	names, _ := mem.List(l.Path())
	for _, n := range names {
		if bytes.HasSuffix([]byte(n), []byte(CleanedSuffix)) {
			t.Fatalf("%s left behind", n)
		}
	}
}

// TestCleanerCheckpointFollowsTruncationAndRemoval: a truncation lowers
// the log's entry to the new end; removing the log drops it.
func TestCleanerCheckpointFollowsTruncationAndRemoval(t *testing.T) {
	d := testDir(t, nil)
	l, _ := openLog(t, d, cleanCfg)
	m := newCleanModel()
	m.rounds(t, l, 4, 20, 5, 1)
	tp := l.TopicPartition()
	if err := d.SetCleanerCheckpoint(tp, 70); err != nil {
		t.Fatal(err)
	}
	if _, err := l.TruncateTo(50); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := d.CleanerCheckpoint(tp); !ok || v > 50 {
		t.Fatalf("cleaner checkpoint %d (%v) after truncating to 50", v, ok)
	}
	if err := d.Remove(tp.Topic, tp.Partition); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := d.CleanerCheckpoint(tp); ok {
		t.Fatal("a removed log keeps its cleaner checkpoint entry")
	}
}
