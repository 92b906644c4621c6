package segment

import (
	"fmt"
	"io"

	"github.com/samsa-io/samsa/wire"
)

// Special timestamps of ListOffsets.
const (
	LatestTimestamp   = -1 // the log end offset
	EarliestTimestamp = -2 // the log start offset
	MaxTimestamp      = -3 // the record with the largest timestamp
)

// TimestampOffset answers a ListOffsets query.
type TimestampOffset struct {
	Offset    int64
	Timestamp int64 // -1 for Earliest and Latest
	Found     bool  // false: no record at or after the timestamp
}

// OffsetForTimestamp implements ListOffsets: EarliestTimestamp,
// LatestTimestamp (the log end offset; the caller bounds it by the high
// watermark), MaxTimestamp, or the first offset whose record timestamp is
// at or after ts, found through the time index. For LogAppendTime and
// compressed batches the answer is at batch granularity: the batch's first
// offset and its max timestamp.
func (l *Log) OffsetForTimestamp(ts int64) (TimestampOffset, error) {
	if l.closed {
		return TimestampOffset{}, ErrClosed
	}
	switch {
	case ts == EarliestTimestamp:
		return TimestampOffset{Offset: l.logStart, Timestamp: -1, Found: true}, nil
	case ts == LatestTimestamp:
		return TimestampOffset{Offset: l.active().next, Timestamp: -1, Found: true}, nil
	case ts == MaxTimestamp:
		return l.maxTimestampOffset()
	case ts < 0:
		return TimestampOffset{}, fmt.Errorf("segment: invalid timestamp %d", ts)
	}
	for i := l.segmentFor(l.logStart); i < len(l.segs); i++ {
		if err := l.ensureLoaded(i); err != nil {
			return TimestampOffset{}, err
		}
		s := l.segs[i]
		if s.maxTs < ts {
			continue
		}
		startRel, ok := s.tidx.floor(ts)
		from := s.base
		if ok {
			from = s.base + int64(startRel)
		}
		r, found, err := l.scanForTimestamp(i, max(from, l.logStart), func(h *wire.BatchHeader) bool { return h.MaxTimestamp >= ts },
			func(off, t int64) bool { return t >= ts && off >= l.logStart })
		if err != nil || found {
			return r, err
		}
	}
	return TimestampOffset{Offset: -1, Timestamp: -1}, nil
}

func (l *Log) maxTimestampOffset() (TimestampOffset, error) {
	best := -1
	for i := l.segmentFor(l.logStart); i < len(l.segs); i++ {
		if err := l.ensureLoaded(i); err != nil {
			return TimestampOffset{}, err
		}
		if best < 0 || l.segs[i].maxTs > l.segs[best].maxTs {
			best = i
		}
	}
	if best < 0 || l.segs[best].maxTs < 0 {
		return TimestampOffset{Offset: -1, Timestamp: -1}, nil
	}
	s := l.segs[best]
	want := s.maxTs
	r, found, err := l.scanForTimestamp(best, max(s.maxTsOffset, l.logStart), func(h *wire.BatchHeader) bool { return h.MaxTimestamp == want },
		func(off, t int64) bool { return t == want && off >= l.logStart })
	if err != nil || found {
		return r, err
	}
	return TimestampOffset{Offset: -1, Timestamp: -1}, nil
}

// scanForTimestamp walks the batches of segs[i] from the one holding
// offset from, finds the first batch matching batchOK, and inside it the
// first record matching recordOK. Every record of the batch holding from
// is considered, not only those at or after it: from comes from an entry
// naming a batch by its last offset (the time index, maxTsOffset), and
// the record with the entry's timestamp can be anywhere in that batch.
func (l *Log) scanForTimestamp(i int, from int64, batchOK func(*wire.BatchHeader) bool, recordOK func(off, ts int64) bool) (TimestampOffset, bool, error) {
	s := l.segs[i]
	h, err := l.d.cache.acquire(s.logPath)
	if err != nil {
		return TimestampOffset{}, false, err
	}
	defer h.release()
	pos, found, err := l.locateChecked(i, h, from)
	if err != nil || !found {
		return TimestampOffset{}, false, err
	}
	var hb [wire.BatchHeaderSize]byte
	for pos < s.size {
		hdr, err := readHeader(h.f, pos, &hb)
		if err != nil {
			return TimestampOffset{}, false, &CorruptionError{Path: s.logPath, Position: pos, Offset: -1, Err: err}
		}
		if batchOK(&hdr) {
			if hdr.Attributes&wire.AttrTimestampLogTime != 0 || hdr.Codec() != wire.CodecNone {
				return TimestampOffset{Offset: max(hdr.BaseOffset, l.logStart), Timestamp: hdr.MaxTimestamp, Found: true}, true, nil
			}
			batch := make([]byte, hdr.Size())
			if n, err := h.f.ReadAt(batch, pos); n < len(batch) {
				if err == nil {
					err = io.ErrUnexpectedEOF
				}
				return TimestampOffset{}, false, err
			}
			var out TimestampOffset
			recordTimestamps(batch, hdr, func(off, ts int64) bool {
				if recordOK(off, ts) {
					out = TimestampOffset{Offset: off, Timestamp: ts, Found: true}
					return false
				}
				return true
			})
			if out.Found {
				return out, true, nil
			}
		}
		pos += hdr.Size()
	}
	return TimestampOffset{}, false, nil
}
