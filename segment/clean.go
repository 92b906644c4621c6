package segment

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/samsa-io/samsa/wire"
)

// Log compaction (cleanup.policy=compact), Kafka's log cleaner at the
// segment level. A cleaning has three steps so that the slow part runs
// off the partition's goroutine:
//
//  1. PrepareClean (the log's goroutine) takes a snapshot of the closed
//     segments that may be cleaned: every one wholly below the active
//     segment and below CleanOptions.UpTo (the last stable offset, the
//     min.compaction.lag.ms bound), with a reference on each file so
//     retention deleting one does not pull it from under the cleaner.
//  2. CleanJob.Run (any goroutine) builds the offset map of the dirty
//     section (from the cleaner checkpoint, FirstDirty, on) and writes
//     the cleaned segment groups as ".cleaned" files, fsynced.
//  3. CommitClean (the log's goroutine) checks that the segments are
//     still the ones the snapshot took (a truncation or retention in the
//     meantime abandons the job), swaps the files in (clean_swap.go) and
//     the new segments into the log. Readers see the old segments until
//     the swap and the new ones after it; a read in flight keeps its old
//     file open until released.
//
// What a cleaning keeps, batch by batch, from the log start to the end of
// the mapped dirty section (the whole log is rewritten every time, as in
// Kafka, since the clean section also loses keys updated since):
//
//   - a record whose key's latest offset (in the map) is at or before its
//     own, or whose key is not in the map; records without a key are
//     dropped (a compacted topic refuses them at produce);
//   - a tombstone (null value) until its batch's delete horizon has
//     passed: the first cleaning that keeps it stamps the batch with
//     now + delete.retention.ms (KIP-534: the baseTimestamp field holds
//     the horizon and attribute bit 0x40 says so; record timestamps are
//     rewritten as deltas from it, so they stay what they were);
//   - nothing of a transaction the aborted-transaction index says was
//     aborted;
//   - a COMMIT or ABORT marker while any record of its transaction is
//     kept before it; once none is, the marker gets a delete horizon too
//     and goes after it (with its aborted-transaction entry);
//   - batch headers: a batch keeps its base offset, last offset delta,
//     producer id, epoch and base sequence, so a producer's state rebuilt
//     from the log is the same; a batch that loses all its records is
//     dropped, unless it is its producer's last batch in the cleaned
//     range (Kafka keeps these too) or its group's last batch (so the
//     cleaned segment ends where the group did: clean_swap.go), which
//     stay as empty batches.
//
// Segments are cleaned in groups whose total size fits segment.bytes (and
// whose offsets fit the indexes' 32-bit relative offsets); each group
// becomes one segment named by the group's first base offset.

// ErrCleanStale: the log changed under a cleaning (truncated, or its
// segments deleted) between PrepareClean and CommitClean; the job was
// abandoned and its files removed. The next cleaning starts afresh.
var ErrCleanStale = errors.New("segment: the log changed while it was cleaned; the cleaning was abandoned")

// ErrCleanMapTooSmall: the offset map cannot hold the keys of even one
// batch of the dirty section (log.cleaner.dedupe.buffer.size too small).
var ErrCleanMapTooSmall = errors.New("segment: the cleaner's offset map cannot hold one batch's keys; raise log.cleaner.dedupe.buffer.size")

// CleanOptions configure one cleaning.
type CleanOptions struct {
	Now               int64 // ms, for delete horizons
	DeleteRetentionMs int64 // delete.retention.ms
	// FirstDirty is the cleaner checkpoint: offsets below it were cleaned
	// before (the map covers only the dirty section from here). Below
	// the log start (or -1) means the log start.
	FirstDirty int64
	// UpTo is the first offset that may not be cleaned (the last stable
	// offset, min.compaction.lag.ms); negative: only the active segment
	// bounds the cleaning. Only whole segments below it are cleaned.
	UpTo int64
	// MapBytes is the offset map's memory (log.cleaner.dedupe.buffer.size
	// shared among the cleaner threads); LoadFactor how full it may get
	// (log.cleaner.io.buffer.load.factor, default 0.9).
	MapBytes   int64
	LoadFactor float64
	// Throttle, if set, is called with each count of bytes read or
	// written and may block (log.cleaner.io.max.bytes.per.second).
	Throttle func(bytes int64)
	// Stop, if set, abandons the cleaning (ErrCleanStopped) when it is
	// closed: a broker shutting down does not wait for a long cleaning.
	Stop <-chan struct{}
}

// ErrCleanStopped: CleanOptions.Stop was closed during CleanJob.Run.
var ErrCleanStopped = errors.New("segment: cleaning stopped")

// CleanStats says what a cleaning did.
type CleanStats struct {
	Segments      int   // segments rewritten
	Groups        int   // segments they became
	BytesRead     int64 // the segments' bytes (read twice: map and rewrite)
	BytesWritten  int64 // the cleaned segments' bytes
	RecordsRead   int64
	RecordsKept   int64
	FirstDirty    int64 // where the dirty section began
	EndOffset     int64 // the cleaning covered [log start, EndOffset): the next FirstDirty
	MapFull       bool  // the offset map filled before the dirty section ended
	TombstonesCut int64 // tombstones past their delete horizon dropped
	AbortedCut    int64 // records of aborted transactions dropped
	MarkersCut    int64 // transaction markers dropped
}

// CleanJob is one cleaning in progress (see PrepareClean).
type CleanJob struct {
	l        *Log
	opts     CleanOptions
	segs     []*segment // the log's segments from its first, as of the snapshot
	sizes    []int64
	nexts    []int64 // each segment's next base offset
	txnLens  []int
	handles  []*handle
	aborted  map[int64][]AbortedTxn // by producer id, marker order
	entries  []AbortedTxn           // every aborted-transaction entry of segs
	segBytes int64
	interval int32
	dir      string

	groups []*cleanGroup
	ran    bool
	Stats  CleanStats
}

// cleanGroup is a run of consecutive segments cleaned into one.
type cleanGroup struct {
	first, n int      // segs[first : first+n]
	end      int64    // the next base offset after the group
	ns       *segment // the cleaned segment, with its final paths
	written  bool     // its .cleaned files exist
}

// PrepareClean snapshots the log for a cleaning (see CleanJob). It
// returns nil when there is nothing to clean: no closed segment below
// opts.UpTo, or no dirty offset in them. Owned by the log's goroutine.
func (l *Log) PrepareClean(opts CleanOptions) (*CleanJob, error) {
	if l.closed {
		return nil, ErrClosed
	}
	if err := l.fl.failure(); err != nil {
		return nil, err
	}
	bound := l.active().base
	if opts.UpTo >= 0 {
		bound = min(bound, opts.UpTo)
	}
	k := 0 // segments [0, k) are whole below bound
	for k < len(l.segs)-1 && l.segs[k+1].base <= bound {
		k++
	}
	first := max(opts.FirstDirty, l.logStart)
	if k == 0 || first >= l.segs[k].base {
		return nil, nil
	}
	opts.FirstDirty = first
	j := &CleanJob{l: l, opts: opts, segBytes: l.cfg.SegmentBytes, interval: l.cfg.IndexIntervalBytes, dir: l.path,
		aborted: map[int64][]AbortedTxn{}}
	for i := 0; i < k; i++ {
		s := l.segs[i]
		if err := s.txn.load(l.d.fs); err != nil {
			j.release()
			return nil, err
		}
		h, err := l.d.cache.acquire(s.logPath)
		if err != nil {
			j.release()
			return nil, err
		}
		j.segs = append(j.segs, s)
		j.sizes = append(j.sizes, s.size)
		j.nexts = append(j.nexts, l.segs[i+1].base)
		j.txnLens = append(j.txnLens, len(s.txn.entries))
		j.handles = append(j.handles, h)
		j.entries = append(j.entries, s.txn.entries...)
	}
	// Transactions aborted by a marker further on may have records here.
	abs, err := l.AbortedTxns(l.segs[0].base, l.segs[k].base)
	if err != nil {
		j.release()
		return nil, err
	}
	for _, a := range abs {
		j.aborted[a.ProducerID] = append(j.aborted[a.ProducerID], a)
	}
	return j, nil
}

// release gives back the snapshot's file references.
func (j *CleanJob) release() {
	for _, h := range j.handles {
		h.release()
	}
	j.handles = nil
}

// isAborted reports whether the transactional batch of pid at offset
// belongs to an aborted transaction.
func (j *CleanJob) isAborted(pid, offset int64) bool {
	for _, a := range j.aborted[pid] {
		if a.FirstOffset <= offset && offset < a.LastOffset {
			return true
		}
	}
	return false
}

// eachBatch calls fn with every batch of segs[i] in order; batch is valid
// during the call only.
func (j *CleanJob) eachBatch(i int, buf []byte, fn func(pos int64, h *wire.BatchHeader, batch []byte) error) ([]byte, error) {
	f, size := j.handles[i].f, j.sizes[i]
	pos := int64(0)
	for pos < size {
		n := min(int64(len(buf)), size-pos)
		m, err := f.ReadAt(buf[:n], pos)
		if int64(m) < n {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return buf, &CorruptionError{Path: j.segs[i].logPath, Position: pos, Offset: -1, Err: err}
		}
		if j.opts.Throttle != nil {
			j.opts.Throttle(n)
		}
		select {
		case <-j.opts.Stop: // a nil Stop never fires
			return buf, ErrCleanStopped
		default:
		}
		j.Stats.BytesRead += n
		chunk := buf[:n]
		off := int64(0)
		for off < n {
			rest := chunk[off:]
			if len(rest) < wire.BatchHeaderSize {
				if pos+off+int64(len(rest)) >= size {
					return buf, &CorruptionError{Path: j.segs[i].logPath, Position: pos + off, Offset: -1, Err: errShortHeader}
				}
				break // refill
			}
			h, _ := wire.ParseBatchHeader(rest)
			bs := h.Size()
			if h.Length < wire.BatchHeaderSize-wire.BatchLogOverhead || pos+off+bs > size {
				return buf, &CorruptionError{Path: j.segs[i].logPath, Position: pos + off, Offset: h.BaseOffset,
					Err: fmt.Errorf("%w (batch of %d bytes)", wire.ErrBatchLength, bs)}
			}
			if bs > int64(len(rest)) {
				if bs > int64(len(buf)) {
					buf = make([]byte, bs)
				}
				break // refill from this batch
			}
			if err := fn(pos+off, &h, rest[:bs]); err != nil {
				return buf, err
			}
			off += bs
		}
		pos += off
	}
	return buf, nil
}

// decompressLimit bounds a batch's decompressed records.
func decompressLimit(batch []byte) int { return max(64<<20, 32*len(batch)) }

// errMapFull stops the map build at a batch boundary.
var errMapFull = errors.New("offset map full")

// buildMap fills m from the dirty section and returns the offset it
// stopped at: the end of the last cleanable segment, or the first batch
// whose keys did not fit.
func (j *CleanJob) buildMap(m *offsetMap, buf []byte) (end int64, outBuf []byte, err error) {
	end = j.nexts[len(j.segs)-1]
	var scratch []byte
	var rec wire.Record
	for i := range j.segs {
		if j.nexts[i] <= j.opts.FirstDirty {
			continue
		}
		buf, err = j.eachBatch(i, buf, func(_ int64, h *wire.BatchHeader, batch []byte) error {
			if h.LastOffset() < j.opts.FirstDirty || h.IsControl() || h.NumRecords == 0 {
				return nil
			}
			if h.IsTransactional() && j.isAborted(h.ProducerID, h.BaseOffset) {
				return nil // its records go; they must not hide earlier ones
			}
			if m.used+int(h.NumRecords) > m.maxUsed {
				end = h.BaseOffset
				return errMapFull
			}
			it, s, err := wire.NewBatchRecordIter(batch, scratch, decompressLimit(batch))
			scratch = s
			if err != nil {
				return &CorruptionError{Path: j.segs[i].logPath, Position: -1, Offset: h.BaseOffset, Err: err}
			}
			for it.Next(&rec) {
				if rec.Key != nil {
					m.put(rec.Key, h.BaseOffset+int64(rec.OffsetDelta))
				}
			}
			if err := it.Err(); err != nil {
				return &CorruptionError{Path: j.segs[i].logPath, Position: -1, Offset: h.BaseOffset, Err: err}
			}
			return nil
		})
		if errors.Is(err, errMapFull) {
			j.Stats.MapFull = true
			return end, buf, nil
		}
		if err != nil {
			return end, buf, err
		}
	}
	return end, buf, nil
}

// Run builds the offset map and writes the cleaned segments as
// ".cleaned" files, fsynced. It may run on any goroutine, once; the
// log's goroutine goes on serving meanwhile. On error the job's files are
// removed (Abort).
func (j *CleanJob) Run() (err error) {
	if j.ran {
		return errors.New("segment: CleanJob.Run called twice")
	}
	j.ran = true
	defer func() {
		if err != nil {
			j.Abort()
		}
	}()
	j.Stats.FirstDirty = j.opts.FirstDirty
	// The dirty section holds at most one key per offset: a map for that
	// many is enough, so a small dirty section (a coordinator's log) does
	// not cost the whole budget.
	lf := j.opts.LoadFactor
	if lf <= 0 || lf > 1 {
		lf = 0.9
	}
	offsets := j.nexts[len(j.segs)-1] - j.opts.FirstDirty
	need := (int64(float64(offsets)/lf) + 64) * offsetMapSlot
	m := newOffsetMap(min(j.opts.MapBytes, need), lf)
	buf := make([]byte, 1<<20)
	end, buf, err := j.buildMap(m, buf)
	if err != nil {
		return err
	}
	if end <= j.opts.FirstDirty {
		return ErrCleanMapTooSmall
	}
	j.Stats.EndOffset = end
	// The segments holding offsets below end are rewritten.
	last := 0
	for last < len(j.segs) && j.segs[last].base < end {
		last++
	}
	j.groupSegments(last)
	lastBatch, buf, err := j.producersLastBatches(last, buf)
	if err != nil {
		return err
	}
	st := &filterState{m: m, lastBatch: lastBatch, txnKept: map[int64]bool{}}
	for _, g := range j.groups {
		if buf, err = j.writeGroup(g, st, buf); err != nil {
			return err
		}
	}
	return nil
}

// groupSegments splits segs[:n] into groups that fit one segment.
func (j *CleanJob) groupSegments(n int) {
	for i := 0; i < n; {
		g := &cleanGroup{first: i, n: 1}
		size := j.sizes[i]
		for i+g.n < n {
			k := i + g.n
			if size+j.sizes[k] > j.segBytes || size+j.sizes[k] > math.MaxInt32 ||
				j.nexts[k]-1-j.segs[i].base > math.MaxUint32 {
				break
			}
			size += j.sizes[k]
			g.n++
		}
		g.end = j.nexts[i+g.n-1]
		j.groups = append(j.groups, g)
		i += g.n
	}
}

// producersLastBatches finds each producer's last batch in segs[:n].
func (j *CleanJob) producersLastBatches(n int, buf []byte) (map[int64]int64, []byte, error) {
	out := map[int64]int64{}
	var hb [wire.BatchHeaderSize]byte
	for i := 0; i < n; i++ {
		f := j.handles[i].f
		for pos := int64(0); pos < j.sizes[i]; {
			h, err := readHeader(f, pos, &hb)
			if err != nil {
				return nil, buf, &CorruptionError{Path: j.segs[i].logPath, Position: pos, Offset: -1, Err: err}
			}
			if h.ProducerID >= 0 {
				out[h.ProducerID] = h.BaseOffset
			}
			pos += h.Size()
		}
	}
	return out, buf, nil
}

// Abort removes the job's files and gives back its references. Safe to
// call more than once and from any goroutine once Run has returned.
func (j *CleanJob) Abort() {
	fsys := j.l.d.fs
	for _, g := range j.groups {
		if g.ns == nil {
			continue
		}
		for _, p := range g.paths() {
			_ = fsys.Remove(p + CleanedSuffix) // absent when never written
		}
		g.written = false
	}
	j.release()
}

// CleanedSuffix and SwapSuffix name the cleaner's temporary files
// (Kafka's names): a cleaned segment is written as "<base>.log.cleaned"
// (and its indexes likewise), renamed to ".swap" when it is complete,
// and to its final name once the segments it replaces are gone.
const (
	CleanedSuffix = ".cleaned"
	SwapSuffix    = ".swap"
)

// paths are the group's final file names, the log file last.
func (g *cleanGroup) paths() []string {
	return []string{g.ns.idxPath, g.ns.timePath, g.ns.txn.path, g.ns.logPath}
}

// writeGroup writes one group's cleaned segment.
func (j *CleanJob) writeGroup(g *cleanGroup, st *filterState, buf []byte) ([]byte, error) {
	fsys := j.l.d.fs
	base := j.segs[g.first].base
	g.ns = newSegment(j.dir, base)
	g.ns.loaded = true
	f, err := fsys.Create(g.ns.logPath + CleanedSuffix)
	if err != nil {
		return buf, err
	}
	g.written = true
	defer f.Close()
	var out []byte
	var pos int64
	flush := func() error {
		if len(out) == 0 {
			return nil
		}
		if _, err := f.WriteAt(out, pos); err != nil {
			return err
		}
		if j.opts.Throttle != nil {
			j.opts.Throttle(int64(len(out)))
		}
		pos += int64(len(out))
		j.Stats.BytesWritten += int64(len(out))
		out = out[:0]
		return nil
	}
	var entries []AbortedTxn
	// The group's last batch, kept at least as an empty batch: the
	// cleaned segment then ends where the group did, so a recovery that
	// finishes the swap removes every old segment of the group (see
	// clean_swap.go), and a reader's next offset steps over the gap.
	var lastHdr [wire.BatchHeaderSize]byte
	var last wire.BatchHeader
	haveLast, lastKept := false, false
	for i := g.first; i < g.first+g.n; i++ {
		j.Stats.Segments++
		buf, err = j.eachBatch(i, buf, func(_ int64, h *wire.BatchHeader, batch []byte) error {
			at := pos + int64(len(out))
			var kept []byte
			var ferr error
			kept, ferr = st.filter(j, h, batch)
			if ferr != nil {
				return &CorruptionError{Path: j.segs[i].logPath, Position: -1, Offset: h.BaseOffset, Err: ferr}
			}
			copy(lastHdr[:], batch)
			last, haveLast, lastKept = *h, true, kept != nil
			if kept == nil {
				return nil
			}
			out = append(out, kept...)
			g.ns.track(h.LastOffset(), h.MaxTimestamp, at, int64(len(kept)), j.interval)
			if len(out) >= 1<<20 {
				return flush()
			}
			return nil
		})
		if err != nil {
			return buf, err
		}
		// Entries whose marker the group kept stay; so do those whose
		// marker lies past the group (written just before a roll).
		for _, e := range j.segs[i].txn.entries {
			if e.LastOffset >= g.end || !st.markerCut[e.LastOffset] {
				entries = append(entries, e)
			}
		}
	}
	if haveLast && !lastKept {
		e := st.empty(&last, lastHdr[:])
		at := pos + int64(len(out))
		out = append(out, e...)
		g.ns.track(last.LastOffset(), last.MaxTimestamp, at, int64(len(e)), j.interval)
	}
	if err := flush(); err != nil {
		return buf, err
	}
	g.ns.size, g.ns.next = pos, g.end
	g.ns.appendTimeEntry()
	g.ns.txn.entries, g.ns.txn.loaded, g.ns.txn.exists = entries, true, true
	if err := f.Sync(); err != nil {
		return buf, err
	}
	j.Stats.Groups++
	if err := writeWhole(fsys, g.ns.idxPath+CleanedSuffix, g.ns.idx.encode()); err != nil {
		return buf, err
	}
	if err := writeWhole(fsys, g.ns.timePath+CleanedSuffix, g.ns.tidx.encode()); err != nil {
		return buf, err
	}
	tb := make([]byte, len(entries)*abortedTxnSize)
	for k, a := range entries {
		encodeAbortedTxn(tb[k*abortedTxnSize:], a)
	}
	return buf, writeWhole(fsys, g.ns.txn.path+CleanedSuffix, tb)
}

// Clean runs a whole cleaning on the log's goroutine (PrepareClean, Run,
// CommitClean): for tests and tools; the broker runs Run elsewhere.
func (l *Log) Clean(opts CleanOptions) (CleanStats, error) {
	j, err := l.PrepareClean(opts)
	if err != nil || j == nil {
		return CleanStats{EndOffset: -1}, err
	}
	if err := j.Run(); err != nil {
		return j.Stats, err
	}
	return l.CommitClean(j)
}

// Dirty reports the log's cleanable bytes for the dirtiest-log choice:
// the bytes of closed segments wholly below upTo (negative: no bound but
// the active segment), split at firstDirty into the clean section's and
// the dirty section's (a segment holding firstDirty counts as dirty).
// Owned by the log's goroutine.
func (l *Log) Dirty(firstDirty, upTo int64) (clean, dirty int64) {
	bound := l.active().base
	if upTo >= 0 {
		bound = min(bound, upTo)
	}
	firstDirty = max(firstDirty, l.logStart)
	for i := 0; i+1 < len(l.segs) && l.segs[i+1].base <= bound; i++ {
		if l.segs[i+1].base <= firstDirty {
			clean += l.segs[i].size
		} else {
			dirty += l.segs[i].size
		}
	}
	return clean, dirty
}

// FirstSegmentAfter is the base offset of the first closed segment
// holding a record at or after ts (ms) by its max timestamp: the
// min.compaction.lag.ms bound (records newer than now-lag may not be
// cleaned). -1 when every closed segment is older. Owned by the log's
// goroutine.
func (l *Log) FirstSegmentAfter(ts int64) (int64, error) {
	for i := 0; i+1 < len(l.segs); i++ {
		if err := l.ensureLoaded(i); err != nil {
			return -1, err
		}
		if l.segs[i].maxTs >= ts {
			return l.segs[i].base, nil
		}
	}
	return -1, nil
}

// OldestDirtyTimestamp is the smallest max timestamp among the closed
// segments at or after firstDirty (for max.compaction.lag.ms: a log whose
// dirty records are that old is cleaned whatever its dirty ratio), or -1
// if there is none. Owned by the log's goroutine.
func (l *Log) OldestDirtyTimestamp(firstDirty int64) (int64, error) {
	oldest := int64(-1)
	for i := 0; i+1 < len(l.segs); i++ {
		if l.segs[i+1].base <= firstDirty {
			continue
		}
		if err := l.ensureLoaded(i); err != nil {
			return -1, err
		}
		if ts := l.segs[i].maxTs; ts >= 0 && (oldest < 0 || ts < oldest) {
			oldest = ts
		}
	}
	return oldest, nil
}
