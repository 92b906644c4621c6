package segment

import (
	"fmt"

	"github.com/samsa-io/samsa/wire"
)

// ScanBatches calls fn with the header of every batch from the one holding
// offset from (or the first after it) to the log end, in offset order. It
// reads only the 61-byte headers, not the records, so rebuilding state
// that lives in headers (producer ids and sequences) costs one small read
// per batch. A from below the log start offset starts at the log start.
// An error from fn stops the scan and is returned; a header that cannot
// be read is a *CorruptionError. Owned by the log's goroutine, like Read.
func (l *Log) ScanBatches(from int64, fn func(h *wire.BatchHeader) error) error {
	return l.scan(from, func(h *wire.BatchHeader, _ []byte) error { return fn(h) }, false)
}

// ScanBatchesWithControl is ScanBatches that also reads each control
// batch whole (transaction markers are one small record; their type is
// in the record, not the header) and passes it as control; for other
// batches control is nil. The bytes are valid only during the call.
func (l *Log) ScanBatchesWithControl(from int64, fn func(h *wire.BatchHeader, control []byte) error) error {
	return l.scan(from, fn, true)
}

func (l *Log) scan(from int64, fn func(h *wire.BatchHeader, control []byte) error, control bool) error {
	if l.closed {
		return ErrClosed
	}
	from = max(from, l.logStart)
	var hb [wire.BatchHeaderSize]byte
	for i := l.segmentFor(from); i < len(l.segs); i++ {
		s := l.segs[i]
		if s.next <= from || s.size == 0 {
			continue
		}
		if err := l.ensureLoaded(i); err != nil {
			return err
		}
		if err := l.scanSegment(i, from, fn, control, &hb); err != nil {
			return err
		}
	}
	return nil
}

// maxControlBatch bounds the control batch read whole: a marker batch is
// about 80 bytes; anything far larger is not one this broker wrote.
const maxControlBatch = 64 << 10

func (l *Log) scanSegment(i int, from int64, fn func(h *wire.BatchHeader, control []byte) error, control bool, hb *[wire.BatchHeaderSize]byte) error {
	s := l.segs[i]
	h, err := l.d.cache.acquire(s.logPath)
	if err != nil {
		return err
	}
	defer h.release()
	pos, found, err := l.locateChecked(i, h, from)
	if err != nil || !found {
		return err
	}
	for pos < s.size {
		hdr, err := readHeader(h.f, pos, hb)
		if err != nil {
			return &CorruptionError{Path: s.logPath, Position: pos, Offset: -1, Err: err}
		}
		var body []byte
		if control && hdr.IsControl() {
			if hdr.Size() > maxControlBatch {
				return &CorruptionError{Path: s.logPath, Position: pos, Offset: hdr.BaseOffset,
					Err: fmt.Errorf("control batch of %d bytes", hdr.Size())}
			}
			body = make([]byte, hdr.Size())
			if _, err := h.f.ReadAt(body, pos); err != nil {
				return &CorruptionError{Path: s.logPath, Position: pos, Offset: hdr.BaseOffset, Err: err}
			}
		}
		if err := fn(&hdr, body); err != nil {
			return err
		}
		pos += hdr.Size()
	}
	return nil
}
