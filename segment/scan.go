package segment

import "github.com/samsa-io/samsa/wire"

// ScanBatches calls fn with the header of every batch from the one holding
// offset from (or the first after it) to the log end, in offset order. It
// reads only the 61-byte headers, not the records, so rebuilding state
// that lives in headers (producer ids and sequences) costs one small read
// per batch. A from below the log start offset starts at the log start.
// An error from fn stops the scan and is returned; a header that cannot
// be read is a *CorruptionError. Owned by the log's goroutine, like Read.
func (l *Log) ScanBatches(from int64, fn func(h *wire.BatchHeader) error) error {
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
		if err := l.scanSegment(i, from, fn, &hb); err != nil {
			return err
		}
	}
	return nil
}

func (l *Log) scanSegment(i int, from int64, fn func(h *wire.BatchHeader) error, hb *[wire.BatchHeaderSize]byte) error {
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
		if err := fn(&hdr); err != nil {
			return err
		}
		pos += hdr.Size()
	}
	return nil
}
