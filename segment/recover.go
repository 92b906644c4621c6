package segment

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strings"

	"github.com/samsa-io/samsa/wire"
)

const scanBufSize = 1 << 20

// RecoveryReport says what opening a log found and did.
type RecoveryReport struct {
	Clean           bool  // a clean shutdown: no segment was scanned in full
	SegmentsScanned int   // segments read batch by batch
	BytesScanned    int64 // bytes read while scanning
	IndexesRebuilt  int   // segments whose indexes were rebuilt from the log
	// TruncatedBytes is every byte cut off: the torn or corrupt tail and
	// the whole segments deleted after it; 0 when nothing was cut.
	TruncatedBytes int64
	// LostFromOffset is the first offset no longer in the log (the new
	// log end offset) when bytes were cut, else -1. LostToOffset is the
	// last offset of what was cut: the largest of the offsets the damaged
	// batch claimed, of the valid batches found after it and of the
	// deleted segments' batches; -1 when none could be read.
	LostFromOffset  int64
	LostToOffset    int64
	DeletedSegments []int64 // base offsets of segments deleted after the cut
	Reason          string  // why the tail was cut
	// TornTail says that all that was cut is one incomplete write at the
	// end of the log: the damaged bytes were the last of the last segment
	// and no whole batch followed them. No fsync completed for them, so
	// under the group and always flush policies no producer was told they
	// were durable: nothing acknowledged was lost. (Under interval and
	// never, acknowledgements do not wait for fsync.)
	TornTail bool
}

// Cut reports whether recovery cut anything.
func (r *RecoveryReport) Cut() bool { return r.TruncatedBytes > 0 || len(r.DeletedSegments) > 0 }

// Lost reports whether recovery cut records that may have been
// acknowledged: anything but a torn tail.
func (r *RecoveryReport) Lost() bool { return r.Cut() && !r.TornTail }

// leftoverSuffixes are temporary files a crash may leave; they are
// deleted on open (".deleted", ".cleaned", ".swap" as Kafka names them).
var leftoverSuffixes = []string{".tmp", ".deleted", ".cleaned", ".swap"}

// openLog loads (and if needed recovers) the log in dir. recoveryPoint is
// -1 when the checkpoint has no entry, logStart likewise.
func (d *Dir) openLog(tp TopicPartition, dir string, cfg Config, clean bool, recoveryPoint, logStart int64) (*Log, RecoveryReport, error) {
	rep := RecoveryReport{Clean: clean, LostFromOffset: -1, LostToOffset: -1}
	l := &Log{d: d, tp: tp, path: dir, cfg: cfg.withDefaults()}
	// A cleaning's swap a crash interrupted after its commit point is
	// finished first (clean_swap.go); uncommitted ones are leftovers.
	if err := d.completeSwaps(dir); err != nil {
		return nil, rep, err
	}
	names, err := d.fs.List(dir)
	if err != nil {
		return nil, rep, err
	}
	var bases []int64
	logs, txnIndexes := map[int64]bool{}, map[int64]bool{}
	for _, n := range names {
		if b, ok := parseSegmentName(n, LogSuffix); ok {
			bases = append(bases, b)
			logs[b] = true
		}
	}
	for _, n := range names {
		stale := false
		for _, suf := range leftoverSuffixes {
			stale = stale || strings.HasSuffix(n, suf)
		}
		if b, ok := parseSegmentName(n, IndexSuffix); ok && !logs[b] {
			stale = true
		}
		if b, ok := parseSegmentName(n, TimeIndexSuffix); ok && !logs[b] {
			stale = true
		}
		if b, ok := parseSegmentName(n, TxnIndexSuffix); ok {
			if logs[b] {
				txnIndexes[b] = true
			} else {
				stale = true
			}
		}
		if stale {
			if err := d.fs.Remove(dir + "/" + n); err != nil {
				return nil, rep, err
			}
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	for _, b := range bases {
		s := newSegment(dir, b)
		st, err := d.fs.Stat(s.logPath)
		if err != nil {
			return nil, rep, err
		}
		s.size = st.Size
		s.txn.exists = txnIndexes[b]
		l.segs = append(l.segs, s)
	}
	if err := l.checkFormats(clean, recoveryPoint); err != nil {
		return nil, rep, err
	}
	var epochsLost error
	if l.epochs, epochsLost, err = loadEpochCache(d.fs, dir+"/"+LeaderEpochFile); err != nil {
		return nil, rep, err
	}
	if len(l.segs) == 0 {
		if err := l.createFirstSegment(max(logStart, 0)); err != nil {
			return nil, rep, err
		}
		rep.Clean = true
	} else {
		for i := 0; i+1 < len(l.segs); i++ {
			l.segs[i].next = l.segs[i+1].base // trusted until scanned
		}
		if clean {
			err = l.loadClean(&rep)
		} else {
			err = l.recover(recoveryPoint, &rep)
		}
		if err != nil {
			return nil, rep, err
		}
	}
	end := l.active().next
	// Aborted transactions whose markers did not survive go too (their
	// entries were made durable before the markers were).
	if err := l.truncateTxnIndex(end); err != nil {
		return nil, rep, err
	}
	if recoveryPoint > end {
		return nil, rep, &CorruptionError{Path: dir, Position: -1, Offset: end,
			Err: fmt.Errorf("log ends at offset %d but offsets below %d were durable", end, recoveryPoint)}
	}
	l.logStart = l.segs[0].base
	if logStart > l.logStart {
		l.logStart = min(logStart, end)
	}
	l.fl = newFlusher(d.fs, d.clock, d.pool, l.cfg, end, d.gatherMax)
	l.fl.onRolled = d.checkpointAfterRoll
	l.fl.onFlush = d.onFlush
	if epochsLost != nil && end > l.logStart {
		// Left empty, the cache would take the next leader's epoch as
		// starting at the log end, and OffsetForLeaderEpoch would send
		// followers to truncate by a wrong boundary.
		msg, level := "segment: leader-epoch-checkpoint damaged; rebuilding it from the batch headers", slog.LevelWarn
		if errors.Is(epochsLost, fs.ErrNotExist) {
			msg, level = "segment: leader-epoch-checkpoint missing; rebuilding it from the batch headers", slog.LevelInfo
		}
		d.logger.Log(context.Background(), level, msg, "partition", tp.String(), "err", epochsLost)
		if err := l.epochs.rebuildFrom(l, l.logStart); err != nil {
			l.fl.close()
			return nil, rep, err
		}
	}
	if err := l.epochs.truncateFromEnd(end); err != nil {
		l.fl.close()
		return nil, rep, err
	}
	if err := l.epochs.truncateFromStart(l.logStart); err != nil {
		l.fl.close()
		return nil, rep, err
	}
	l.publish()
	return l, rep, nil
}

func (l *Log) createFirstSegment(base int64) error {
	s := newSegment(l.path, base)
	if err := l.createSegmentFiles(s); err != nil {
		return err
	}
	s.loaded = true
	l.segs = []*segment{s}
	return l.d.fs.SyncDir(l.path)
}

// createSegmentFiles creates the three files of a new segment. The
// directory entries become durable with the next directory fsync.
func (l *Log) createSegmentFiles(s *segment) error {
	f, err := l.d.fs.Create(s.logPath)
	if err != nil {
		return err
	}
	s.h = l.d.cache.adopt(s.logPath, f)
	s.h.release()
	for _, p := range []string{s.idxPath, s.timePath} {
		f, err := l.d.fs.Create(p)
		if err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// indexFilesPlausible checks what can be checked of a closed segment's
// index files without reading them: present, whole entries.
func (l *Log) indexFilesPlausible(s *segment) bool {
	st, err := l.d.fs.Stat(s.idxPath)
	if err != nil || st.Size%offsetEntrySize != 0 || (st.Size == 0 && s.size > int64(l.cfg.IndexIntervalBytes)+maxBatchGuess) {
		return false
	}
	st, err = l.d.fs.Stat(s.timePath)
	return err == nil && st.Size%timeEntrySize == 0
}

// maxBatchGuess bounds how far past index.interval.bytes a segment may
// grow without an index entry (one batch).
const maxBatchGuess = 16 << 20

// checkClosedIndexes rebuilds the indexes of closed segments [0, upTo)
// whose files are missing or malformed; full checks happen on first use.
func (l *Log) checkClosedIndexes(upTo int, rep *RecoveryReport) error {
	for i := 0; i < upTo; i++ {
		if l.indexFilesPlausible(l.segs[i]) {
			continue
		}
		l.d.logger.Warn("segment: index files missing or malformed; rebuilding them from the log",
			"partition", l.tp.String(), "segment", l.segs[i].base)
		if err := l.rebuildClosed(i); err != nil {
			return err
		}
		rep.IndexesRebuilt++
	}
	return nil
}

// loadClean opens a log after a clean shutdown: indexes are trusted, and
// only the active segment's tail after its last index entry is read, so
// the cost does not depend on the log's size.
func (l *Log) loadClean(rep *RecoveryReport) error {
	last := len(l.segs) - 1
	if err := l.checkClosedIndexes(last, rep); err != nil {
		return err
	}
	s := l.segs[last]
	h, err := l.d.cache.acquire(s.logPath)
	if err != nil {
		return err
	}
	defer h.release()
	from := int64(0)
	err = s.loadIndexes(l.d.fs, -1)
	if n := len(s.idx); err == nil && n > 0 {
		// The scan starts at the last entry's batch: it must be the
		// batch the entry names, or the index cannot be trusted.
		e := s.idx[n-1]
		var hb [wire.BatchHeaderSize]byte
		hdr, herr := readHeader(h.f, int64(e.pos), &hb)
		if herr != nil {
			err = s.badHeader(int64(e.pos), herr)
		} else {
			err = s.named(&hdr, e)
		}
		if err == nil {
			from = int64(e.pos)
			s.idx = s.idx[:n-1] // the scan re-adds it
			s.sinceIndex = int64(l.cfg.IndexIntervalBytes)
			s.next = hdr.BaseOffset
		} else if !errors.Is(err, errIndexMismatch) {
			return err
		}
	}
	if err != nil {
		l.d.logger.Warn("segment: rebuilding damaged index", "partition", l.tp.String(), "segment", s.base, "err", err)
		s.idx, s.tidx, s.maxTs, s.maxTsOffset = nil, nil, -1, -1
		rep.IndexesRebuilt++
	}
	size := s.size
	s.size = from
	res, _ := s.scan(h.f, from, size, l.cfg.IndexIntervalBytes, make([]byte, min(scanBufSize, 64<<10)))
	rep.BytesScanned += res.bytesRead
	if res.stopErr != nil {
		return &CorruptionError{Path: s.logPath, Position: res.validSize, Offset: s.next, Err: res.stopErr}
	}
	s.loaded = true
	return l.readRollBase(h, s)
}

// readRollBase sets the active segment's segment.ms reference from its
// first batch (as Kafka does after a restart).
func (l *Log) readRollBase(h *handle, s *segment) error {
	if s.size == 0 {
		return nil
	}
	var hb [wire.BatchHeaderSize]byte
	hdr, err := readHeader(h.f, 0, &hb)
	if err != nil {
		return &CorruptionError{Path: s.logPath, Position: 0, Offset: s.base, Err: err}
	}
	s.rollBase = hdr.MaxTimestamp
	return nil
}

// recover opens a log after an unclean shutdown. Segments from the one
// holding the recovery point (and always the active one) are scanned
// batch by batch; the first invalid byte at or after the recovery point
// ends the log (the tail is cut and reported, later segments deleted);
// an invalid byte before it is a CorruptionError.
func (l *Log) recover(recoveryPoint int64, rep *RecoveryReport) error {
	first := 0
	if recoveryPoint >= 0 {
		first = min(l.segmentFor(recoveryPoint), len(l.segs)-1)
	}
	if err := l.checkClosedIndexes(first, rep); err != nil {
		return err
	}
	buf := make([]byte, scanBufSize)
	var scanned []*segment
	for i := first; i < len(l.segs); i++ {
		s := l.segs[i]
		h, err := l.d.cache.acquire(s.logPath)
		if err != nil {
			return err
		}
		fileSize := s.size
		s.idx, s.tidx, s.next, s.size, s.sinceIndex, s.maxTs, s.maxTsOffset = nil, nil, s.base, 0, 0, -1, -1
		var res scanResult
		res, buf = s.scan(h.f, 0, fileSize, l.cfg.IndexIntervalBytes, buf)
		rep.SegmentsScanned++
		rep.BytesScanned += res.bytesRead
		rep.IndexesRebuilt++
		s.loaded = true
		if err := l.readRollBase(h, s); err != nil && res.validSize > 0 {
			h.release()
			return err
		}
		nb := l.nextBase(i)
		cut := res.stopErr != nil || (nb >= 0 && s.next != nb)
		if !cut {
			h.release()
			scanned = append(scanned, s)
			continue
		}
		if s.next < recoveryPoint {
			h.release()
			err := res.stopErr
			if err == nil {
				err = fmt.Errorf("segment ends at offset %d, the next starts at %d", s.next, nb)
			}
			return &CorruptionError{Path: s.logPath, Position: res.validSize, Offset: s.next, Err: err}
		}
		rep.LostFromOffset = s.next
		rep.TruncatedBytes += fileSize - res.validSize
		if res.stopErr != nil {
			rep.Reason = res.stopErr.Error()
			if hd := res.stopHdr; hd != nil && hd.Magic == 2 && hd.BaseOffset >= s.next && hd.LastOffset() >= hd.BaseOffset {
				rep.LostToOffset = hd.LastOffset()
			}
			// Whole batches after the damage make it corruption inside
			// the log, not a write the crash tore off its end.
			var found int
			var last int64
			found, last, _, err = findBatches(h.f, res.validSize+1, fileSize, maxCandidateBatch(l.cfg), buf)
			if err != nil {
				h.release()
				return err
			}
			rep.LostToOffset = max(rep.LostToOffset, last)
			rep.TornTail = found == 0 && i == len(l.segs)-1
		} else {
			rep.Reason = fmt.Sprintf("segment %d ends at offset %d but the next segment starts at %d", s.base, s.next, nb)
		}
		if fileSize > res.validSize {
			if err := h.f.Truncate(res.validSize); err != nil {
				h.release()
				return err
			}
		}
		h.release()
		scanned = append(scanned, s)
		later := l.segs[i+1:]
		for j := len(later) - 1; j >= 0; j-- {
			// The newest readable segment holds the last offset cut.
			if last := lastOffsetIn(l.d.fs, later[j], l.nextBase(i+1+j)); last >= 0 {
				rep.LostToOffset = max(rep.LostToOffset, last)
				break
			}
		}
		for _, ls := range later {
			rep.DeletedSegments = append(rep.DeletedSegments, ls.base)
			rep.TruncatedBytes += ls.size
			if err := l.removeSegmentFiles(ls); err != nil {
				return err
			}
		}
		l.segs = l.segs[:i+1]
		break
	}
	switch attrs := []any{"partition", l.tp.String(), "bytes", rep.TruncatedBytes, "from_offset", rep.LostFromOffset,
		"to_offset", rep.LostToOffset, "deleted_segments", len(rep.DeletedSegments), "reason", rep.Reason}; {
	case rep.Lost():
		l.d.logger.Warn("segment: recovery cut the log; records there may have been acknowledged", attrs...)
	case rep.TornTail:
		l.d.logger.Info("segment: recovery cut an incomplete write off the log end (never fsynced)", attrs...)
	}
	// What survived a crash may still sit only in the page cache: make it
	// durable before it counts as below the recovery point.
	for j, s := range scanned {
		if j < len(scanned)-1 || s != l.active() {
			s.appendTimeEntry()
			if err := s.writeIndexes(l.d.fs); err != nil {
				return err
			}
		}
		h, err := l.d.cache.acquire(s.logPath)
		if err != nil {
			return err
		}
		err = h.f.Sync()
		h.release()
		if err != nil {
			return err
		}
	}
	return l.d.fs.SyncDir(l.path)
}

// removeSegmentFiles deletes a segment's files; open handles stay valid
// for the readers that hold them.
func (l *Log) removeSegmentFiles(s *segment) error {
	l.d.cache.forget(s.logPath)
	for _, p := range []string{s.logPath, s.idxPath, s.timePath, s.txn.path} {
		if err := l.d.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
