package segment

import (
	"fmt"
	"math"

	"github.com/samsa-io/samsa/wire"
)

// AppendResult is what an append assigned.
type AppendResult struct {
	FirstOffset   int64 // base offset of the first batch
	LastOffset    int64 // last offset of the last batch
	LogAppendTime int64 // the time stamped into the batches, or -1 (CreateTime)
	LogEndOffset  int64 // the log end offset after the append
}

// Append appends one or more concatenated RecordBatch v2 as the leader:
// all batches are validated before any byte is written (all or nothing),
// then each gets its base offset and leaderEpoch written into its header
// in place (batches is modified; the CRC does not cover these fields),
// and the bytes go to the active segment verbatim. With LogAppendTime
// configured, the batches are stamped with now (and their CRC
// recomputed). now is the broker's time in milliseconds; it also drives
// segment.ms rolls.
//
// An invalid batch yields a *BatchError wrapping a wire.ErrBatch* error or
// ErrRecordTooLarge, and leaves the log unchanged. Durability is reported
// separately by WhenDurable.
func (l *Log) Append(batches []byte, leaderEpoch int32, now int64) (AppendResult, error) {
	return l.append(batches, true, leaderEpoch, now)
}

// AppendReplicated appends batches fetched from the leader as they are:
// offsets and leader epochs are kept, and must continue the log (the
// first base offset at or after the log end offset, increasing). The
// leader epoch cache learns the epochs of the batches.
func (l *Log) AppendReplicated(batches []byte, now int64) (AppendResult, error) {
	return l.append(batches, false, -1, now)
}

func (l *Log) append(b []byte, assign bool, epoch int32, now int64) (AppendResult, error) {
	if l.closed {
		return AppendResult{}, ErrClosed
	}
	if err := l.fl.failure(); err != nil {
		return AppendResult{}, err
	}
	hdrs, err := splitBatches(b, l.cfg.MaxMessageBytes, !assign, l.scratch[:0])
	l.scratch = hdrs[:0]
	if err != nil {
		return AppendResult{}, err
	}
	if int64(len(b)) > l.cfg.SegmentBytes {
		return AppendResult{}, fmt.Errorf("%w: %d bytes in one append, segment.bytes is %d", ErrRecordTooLarge, len(b), l.cfg.SegmentBytes)
	}
	leo := l.active().next
	res := AppendResult{LogAppendTime: -1}
	if l.cfg.LogAppendTime {
		res.LogAppendTime = now
	}
	if assign {
		next := leo
		for i, pos := 0, 0; i < len(hdrs); i++ {
			h := &hdrs[i]
			batch := b[pos : pos+int(h.size)]
			wire.SetBatchBaseOffset(batch, next)
			wire.SetBatchLeaderEpoch(batch, epoch)
			if l.cfg.LogAppendTime {
				wire.SetBatchLogAppendTime(batch, now)
				h.maxTimestamp = now
			}
			h.baseOffset, h.leaderEpoch = next, epoch
			next = h.lastOffset() + 1
			pos += int(h.size)
		}
	} else {
		next := leo
		for i := range hdrs {
			if hdrs[i].baseOffset < next {
				return AppendResult{}, fmt.Errorf("%w: batch %d starts at offset %d, expected at least %d", ErrBadOffsets, i, hdrs[i].baseOffset, next)
			}
			next = hdrs[i].lastOffset() + 1
		}
	}
	res.FirstOffset, res.LastOffset = hdrs[0].baseOffset, hdrs[len(hdrs)-1].lastOffset()
	if l.shouldRoll(len(b), len(hdrs), res.FirstOffset, res.LastOffset, now) {
		if err := l.roll(res.FirstOffset, now); err != nil {
			return AppendResult{}, err
		}
	}
	if assign {
		// Every batch carries the same epoch: only the first can start it.
		if _, err := l.epochs.assign(epoch, res.FirstOffset); err != nil {
			return AppendResult{}, l.fail(err)
		}
	} else {
		for i := range hdrs {
			if _, err := l.epochs.assign(hdrs[i].leaderEpoch, hdrs[i].baseOffset); err != nil {
				return AppendResult{}, l.fail(err)
			}
		}
	}
	s := l.active()
	h := s.h
	if !h.tryAcquire() {
		// Not opened yet by this segment, or the cache let it go.
		if h, err = l.d.cache.acquire(s.logPath); err != nil {
			return AppendResult{}, l.fail(err)
		}
		s.h = h
	}
	defer h.release()
	if end := s.size + int64(len(b)); end > s.reservedTo {
		l.d.reserve.ahead(s, h.f, end)
	}
	if _, err := h.f.WriteAt(b, s.size); err != nil {
		// Undo a partial write so the log stays a sequence of whole
		// batches. Whatever n says: os.File.WriteAt reports 0 when a
		// short pwrite is followed by a failing one, so bytes may have
		// landed even then. If the truncation fails too, the file holds
		// junk past the log end and the log cannot be trusted.
		if terr := h.f.Truncate(s.size); terr != nil {
			return AppendResult{}, l.fail(fmt.Errorf("write failed (%v), then truncate failed: %w", err, terr))
		}
		s.reservedTo = 0 // the truncation gave back every reserved block
		return AppendResult{}, fmt.Errorf("segment: append to %s: %w", s.logPath, err)
	}
	if s.size == 0 {
		s.rollBase = now
	}
	pos := s.size
	if s.tail == nil {
		s.tail = new(batchTail)
	}
	for i := range hdrs {
		h := &hdrs[i]
		s.track(h.lastOffset(), h.maxTimestamp, pos, h.size, l.cfg.IndexIntervalBytes)
		s.tail.add(batchSpan{base: h.baseOffset, last: h.lastOffset(), pos: pos, size: h.size})
		pos += h.size
	}
	res.LogEndOffset = s.next
	// What publish would store, without summing every segment's size: an
	// append changes only the end offset and adds its bytes (a roll above
	// added an empty segment or replaced an empty one).
	l.pubLogEnd.Store(s.next)
	l.pubSize.Store(l.pubSize.Load() + int64(len(b)))
	switch l.cfg.FlushPolicy {
	case FlushNever:
		// Nothing to record: fsynced on roll and close (see flusher.wrote).
	case FlushAlways:
		l.fl.wrote(h, s.next)
		if err := l.fl.flush(); err != nil {
			return res, err
		}
	default:
		l.fl.wrote(h, s.next)
	}
	return res, nil
}

// shouldRoll decides whether an append of size bytes and n batches with
// offsets first..last starts a new segment.
func (l *Log) shouldRoll(size, n int, first, last int64, now int64) bool {
	s := l.active()
	if s.size == 0 {
		return first != s.base // a replicated gap: a segment's base is its first offset
	}
	return s.size+int64(size) > l.cfg.SegmentBytes ||
		s.size+int64(size) > math.MaxInt32 ||
		(s.rollBase >= 0 && now-s.rollBase >= l.cfg.SegmentMs) ||
		int64(len(s.idx)+n)*offsetEntrySize > int64(l.cfg.SegmentIndexBytes) ||
		int64(len(s.tidx)+n)*timeEntrySize > int64(l.cfg.SegmentIndexBytes) ||
		last-s.base > math.MaxInt32
}

// Roll closes the active segment and starts a new one at the log end
// offset (no-op when the active segment is empty).
func (l *Log) Roll(now int64) error {
	if l.closed {
		return ErrClosed
	}
	if l.active().size == 0 {
		return nil
	}
	return l.roll(l.active().next, now)
}

// roll starts a segment at base. The old segment's indexes are written
// and fsynced now; its data and the directory are fsynced by the flusher
// (whatever the policy) before the recovery point passes them.
func (l *Log) roll(base int64, now int64) error {
	old := l.active()
	if old.size == 0 {
		// An empty active segment is simply replaced.
		if err := l.removeSegmentFiles(old); err != nil {
			return l.fail(err)
		}
		l.segs = l.segs[:len(l.segs)-1]
	} else {
		old.tail = nil // reads of a closed segment use its index
		old.appendTimeEntry()
		if err := old.writeIndexes(l.d.fs); err != nil {
			return l.fail(err)
		}
	}
	s := newSegment(l.path, base)
	s.loaded, s.rollBase = true, now
	if err := l.createSegmentFiles(s); err != nil {
		return l.fail(err)
	}
	l.segs = append(l.segs, s)
	if old.size == 0 {
		l.fl.rolled(nil, base, l.path)
		return nil
	}
	h, err := l.d.cache.acquire(old.logPath)
	if err != nil {
		return l.fail(err)
	}
	l.giveBackReserved(old, h)
	l.fl.rolled(h, base, l.path)
	h.release()
	return nil
}
