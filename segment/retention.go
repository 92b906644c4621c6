package segment

import (
	"fmt"

	"github.com/samsa-io/samsa/wire"
)

// RetentionResult says what a retention pass deleted.
type RetentionResult struct {
	DeletedSegments int
	DeletedBytes    int64
	LogStartOffset  int64
}

// DeleteExpired applies retention.ms and retention.bytes at time now (ms)
// and removes segments wholly below the log start offset. Only whole
// closed segments are deleted, oldest first, never the active one. A
// segment expires by time when its newest batch timestamp is older than
// retention.ms (a segment with no timestamps never does).
func (l *Log) DeleteExpired(now int64) (RetentionResult, error) {
	if l.closed {
		return RetentionResult{}, ErrClosed
	}
	var total int64
	for _, s := range l.segs {
		total += s.size
	}
	n := 0 // segments to delete from the front
	for n < len(l.segs)-1 {
		s := l.segs[n]
		if s.next <= l.logStart {
			total -= s.size
			n++
			continue
		}
		if l.cfg.RetentionBytes >= 0 && total-s.size >= l.cfg.RetentionBytes {
			total -= s.size
			n++
			continue
		}
		if l.cfg.RetentionMs >= 0 {
			if err := l.ensureLoaded(n); err != nil {
				return RetentionResult{}, err
			}
			if s.maxTs >= 0 && now-s.maxTs > l.cfg.RetentionMs {
				total -= s.size
				n++
				continue
			}
		}
		break
	}
	return l.deleteOldest(n)
}

// deleteOldest removes the first n segments and raises the log start
// offset to the base of the first one kept.
func (l *Log) deleteOldest(n int) (RetentionResult, error) {
	res := RetentionResult{LogStartOffset: l.logStart}
	if n == 0 {
		return res, nil
	}
	gone := l.segs[:n]
	l.segs = append([]*segment(nil), l.segs[n:]...)
	if l.segs[0].base > l.logStart {
		l.logStart = l.segs[0].base
	}
	res.LogStartOffset = l.logStart
	l.publish()
	if err := l.epochs.truncateFromStart(l.logStart); err != nil {
		return res, l.fail(err)
	}
	for _, s := range gone {
		res.DeletedSegments++
		res.DeletedBytes += s.size
		if err := l.removeSegmentFiles(s); err != nil {
			return res, l.fail(err)
		}
	}
	return res, nil
}

// DeleteRecordsBefore raises the log start offset to offset (DeleteRecords)
// and deletes the segments wholly below it. offset must not exceed the
// log end offset; a lower offset than the current start is a no-op. The
// new start is persisted with the next Dir.Checkpoint.
func (l *Log) DeleteRecordsBefore(offset int64) (RetentionResult, error) {
	if l.closed {
		return RetentionResult{}, ErrClosed
	}
	if offset > l.active().next {
		return RetentionResult{}, fmt.Errorf("%w: log start %d beyond log end %d", ErrOffsetOutOfRange, offset, l.active().next)
	}
	if offset <= l.logStart {
		return RetentionResult{LogStartOffset: l.logStart}, nil
	}
	l.logStart = offset
	l.publish()
	n := 0
	for n < len(l.segs)-1 && l.segs[n].next <= offset {
		n++
	}
	if n == 0 {
		if err := l.epochs.truncateFromStart(offset); err != nil {
			return RetentionResult{}, l.fail(err)
		}
		return RetentionResult{LogStartOffset: offset}, nil
	}
	return l.deleteOldest(n)
}

// TruncateTo removes every record at or after offset (a follower
// diverging from its leader). A batch holding offset is removed whole, so
// the new log end offset, which is returned, may be below offset. The
// truncation is durable when TruncateTo returns. Waiters for removed
// offsets get ErrTruncated. offset must be at least the log start offset.
func (l *Log) TruncateTo(offset int64) (int64, error) {
	if l.closed {
		return 0, ErrClosed
	}
	if err := l.fl.failure(); err != nil {
		return 0, err
	}
	if offset >= l.active().next {
		// Nothing to cut, but an epoch the log has no batch of may start
		// at its end (this replica led, recorded its epoch, appended
		// nothing): it goes, as in Kafka, or the follower would name it as
		// its last fetched epoch and the leader would send it back here
		// forever.
		if err := l.epochs.truncateFromEnd(l.active().next); err != nil {
			return 0, l.fail(err)
		}
		return l.active().next, nil
	}
	if offset < l.logStart {
		return 0, fmt.Errorf("%w: truncate to %d below log start %d", ErrOffsetOutOfRange, offset, l.logStart)
	}
	// Find the cut: segment i, byte position pos, new end offset.
	i := l.segmentFor(offset)
	if err := l.ensureLoaded(i); err != nil {
		return 0, err
	}
	s := l.segs[i]
	h, err := l.d.cache.acquire(s.logPath)
	if err != nil {
		return 0, l.fail(err)
	}
	defer h.release()
	var pos int64
	var hdr batchSpan
	var found bool
	if err := l.withIndexCheck(i, func() (err error) {
		pos, hdr, found, err = s.locate(h.f, offset)
		return err
	}); err != nil {
		return 0, err
	}
	var newEnd int64
	if found {
		newEnd = min(offset, hdr.base)
	} else {
		pos, newEnd = s.size, s.next
	}

	fl := l.fl
	fl.lockFlush()
	defer fl.flushMu.Unlock()
	// Finish the fsyncs owed for data that stays, lower the recovery
	// point on disk before any byte goes, then cut.
	if _, err := fl.runOps(fl.takePending()); err != nil {
		return 0, fl.finish(-1, err, -1)
	}
	fl.mu.Lock()
	fl.durable = min(fl.durable, newEnd)
	fl.mu.Unlock()
	fl.dropWaitersFrom(newEnd)
	lowerStart := newEnd < l.logStart
	if lowerStart {
		// The batch holding the log start straddles the cut: the start
		// moves down with it, durably before new offsets can reuse it.
		l.logStart = newEnd
		l.pubLogStart.Store(newEnd)
	}
	if err := l.d.checkpointIfAbove(l.tp, newEnd, lowerStart); err != nil {
		return 0, fl.finish(-1, err, -1)
	}
	for _, later := range l.segs[i+1:] {
		if err := l.removeSegmentFiles(later); err != nil {
			return 0, fl.finish(-1, err, -1)
		}
	}
	l.segs = l.segs[:i+1]
	if err := h.f.Truncate(pos); err != nil {
		return 0, fl.finish(-1, err, -1)
	}
	s.reservedTo = 0 // the truncation gave back every reserved block
	l.trimSegment(s, h, pos, newEnd)
	l.publish()
	if err := l.truncateTxnIndex(newEnd); err != nil {
		return 0, fl.finish(-1, err, -1)
	}
	if err := l.epochs.truncateFromEnd(newEnd); err != nil {
		return 0, fl.finish(-1, err, -1)
	}
	l.truncateCleanerCheckpoint(newEnd) // clean_checkpoint.go
	if err := h.f.Sync(); err != nil {
		return 0, fl.finish(-1, err, -1)
	}
	if err := l.d.fs.SyncDir(l.path); err != nil {
		return 0, fl.finish(-1, err, -1)
	}
	return newEnd, fl.finish(-1, nil, newEnd)
}

// trimSegment makes s, cut at byte pos with end offset next, the active
// segment again: indexes trimmed, max timestamp recomputed from the last
// index entry on.
func (l *Log) trimSegment(s *segment, h *handle, pos, next int64) {
	s.size, s.next = pos, next
	s.idx = s.idx.truncate(pos)
	if next > s.base {
		s.tidx = s.tidx.truncate(uint32(next - s.base))
	} else {
		s.tidx = s.tidx[:0]
	}
	s.maxTs, s.maxTsOffset = -1, -1
	if n := len(s.tidx); n > 0 {
		s.maxTs, s.maxTsOffset = s.tidx[n-1].ts, s.base+int64(s.tidx[n-1].rel)
	}
	from := int64(0)
	if n := len(s.idx); n > 0 {
		from = int64(s.idx[n-1].pos)
	}
	var hb [wire.BatchHeaderSize]byte
	var since int64
	for p := from; p < pos; {
		hdr, err := readHeader(h.f, p, &hb)
		if err != nil {
			break // the bytes were valid a moment ago; a read error shows up on the next read
		}
		if hdr.MaxTimestamp > s.maxTs {
			s.maxTs, s.maxTsOffset = hdr.MaxTimestamp, hdr.LastOffset()
		}
		since += hdr.Size()
		p += hdr.Size()
	}
	s.sinceIndex = since
	s.rollBase = -1
	if s.size > 0 {
		if hdr, err := readHeader(h.f, 0, &hb); err == nil {
			s.rollBase = hdr.MaxTimestamp
		}
	}
}
