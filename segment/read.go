package segment

import (
	"fmt"
	"io"
	"slices"

	"github.com/samsa-io/samsa/wire"
)

// ReadRequest asks for batches starting at Offset.
type ReadRequest struct {
	Offset   int64 // the first offset wanted; the batch holding it is returned whole
	MaxBytes int64 // byte budget; the result ends on a batch boundary within it
	// MaxOffset bounds the result: only batches whose last offset is below
	// it are returned (the high watermark, or the last stable offset).
	// A negative value means the log end offset.
	MaxOffset int64
	// MinOneBatch returns the first batch even when it is larger than
	// MaxBytes (Kafka's rule for the first partition of a fetch, so a
	// consumer can always make progress). Without it such a read is empty.
	MinOneBatch bool
}

// Region is a byte range of a segment file holding whole batches. File
// stays open until the ReadResult is released.
type Region struct {
	File     wire.RegionFile
	Position int64
	Length   int64
}

// Chunk converts the region to a wire.Chunk for a fetch response.
func (r Region) Chunk() wire.Chunk {
	return wire.Chunk{File: r.File, Position: r.Position, Length: r.Length}
}

// ReadResult is the answer to a read: regions of segment files, in order.
// It holds references on the files; call Release exactly once when the
// bytes have been sent (from any goroutine). Until then the files stay
// open even if retention deletes their segments or the file cache evicts
// them.
type ReadResult struct {
	Regions     []Region
	FirstOffset int64 // base offset of the first batch (may be below the requested offset), -1 if empty
	NextOffset  int64 // offset after the last batch returned; the next read starts there
	Bytes       int64 // total length of the regions
	handles     []*handle
}

// Release gives back the file references.
func (r *ReadResult) Release() {
	for _, h := range r.handles {
		h.release()
	}
	r.handles = nil
}

// Read returns file regions holding the batches from req.Offset on, within
// req.MaxBytes and below req.MaxOffset, never a partial batch. An offset
// below the log start offset or above the log end offset is
// ErrOffsetOutOfRange; an offset at the end yields an empty result.
func (l *Log) Read(req ReadRequest) (*ReadResult, error) {
	if l.closed {
		return nil, ErrClosed
	}
	end := l.active().next
	if req.Offset < l.logStart || req.Offset > end {
		return nil, fmt.Errorf("%w: offset %d, log has [%d, %d)", ErrOffsetOutOfRange, req.Offset, l.logStart, end)
	}
	maxOffset := req.MaxOffset
	if maxOffset < 0 || maxOffset > end {
		maxOffset = end
	}
	res := &ReadResult{FirstOffset: -1, NextOffset: req.Offset}
	offset := req.Offset
	for i := l.segmentFor(offset); i < len(l.segs) && offset < maxOffset; i++ {
		s := l.segs[i]
		if s.next <= offset {
			continue
		}
		done, err := l.readSegment(i, &offset, maxOffset, req, res)
		if err != nil {
			res.Release()
			return nil, err
		}
		if done {
			break
		}
	}
	return res, nil
}

// readSegment adds a region of segs[i] to res. done reports that the read
// is complete (budget, bound or data exhausted short of the segment end).
func (l *Log) readSegment(i int, offset *int64, maxOffset int64, req ReadRequest, res *ReadResult) (done bool, err error) {
	s := l.segs[i]
	if err := l.ensureLoaded(i); err != nil {
		return true, err
	}
	h, err := l.d.cache.acquire(s.logPath)
	if err != nil {
		return true, err
	}
	keep := false
	defer func() {
		if !keep {
			h.release()
		}
	}()
	var r region
	err = l.withIndexCheck(i, func() (err error) {
		r, err = l.findRegion(s, h, *offset, maxOffset, req.MaxBytes-res.Bytes, req.MinOneBatch && res.Bytes == 0)
		return err
	})
	if err != nil || !r.found {
		return err != nil, err
	}
	if r.empty {
		return true, nil
	}
	pos, endPos, first, next := r.pos, r.end, r.first, r.next
	if res.FirstOffset < 0 {
		res.FirstOffset = first.base
	}
	res.Regions = append(res.Regions, Region{File: h.f, Position: pos, Length: endPos - pos})
	res.handles = append(res.handles, h)
	keep = true
	res.Bytes += endPos - pos
	res.NextOffset = next
	*offset = next
	return endPos < s.size, nil
}

// region is what findRegion found in a segment.
type region struct {
	found    bool      // the segment holds offset or a batch after it
	empty    bool      // found, but nothing fits the budget or the bound
	pos, end int64     // the byte range, whole batches
	first    batchSpan // the batch at pos
	next     int64     // the offset after the range
}

// findRegion finds the whole batches of s from the one holding offset on
// that fit in budget bytes (the first one whatever its size with
// minOne) and end below maxOffset. It changes nothing, so it can be
// retried after an index rebuild.
func (l *Log) findRegion(s *segment, h *handle, offset, maxOffset, budget int64, minOne bool) (region, error) {
	pos, first, found, err := s.locate(h.f, offset)
	if err != nil || !found {
		return region{}, err
	}
	r := region{found: true, empty: true, pos: pos, first: first}
	if first.last >= maxOffset {
		return r, nil
	}
	limit := min(s.size, pos+max(budget, 0))
	if r.end, err = s.boundaryAtOrBefore(h.f, pos, limit, maxOffset); err != nil {
		return r, err
	}
	if r.end == pos {
		if !minOne {
			return r, nil
		}
		r.end = pos + first.size
	}
	r.empty = false
	r.next, err = l.offsetAt(s, h, r.end)
	return r, err
}

// offsetAt is the first offset of the batch at pos (a batch boundary), or
// the segment's next offset at its end.
func (l *Log) offsetAt(s *segment, h *handle, pos int64) (int64, error) {
	if pos >= s.size {
		return s.next, nil
	}
	if i, ok := s.tail.indexOfPos(s.size, pos); ok {
		return s.tail.at(i).base, nil
	}
	var hb [wire.BatchHeaderSize]byte
	hdr, err := readHeader(h.f, pos, &hb)
	if err != nil {
		return 0, &CorruptionError{Path: s.logPath, Position: pos, Offset: -1, Err: err}
	}
	return hdr.BaseOffset, nil
}

// ReadBytes is Read for callers that need the bytes: it copies the
// regions into a new slice. It returns the bytes and the next offset.
func (l *Log) ReadBytes(req ReadRequest) ([]byte, int64, error) {
	return l.ReadAppend(nil, req)
}

// ReadAppend is ReadBytes appending to dst, so a caller can reuse a buffer.
func (l *Log) ReadAppend(dst []byte, req ReadRequest) ([]byte, int64, error) {
	res, err := l.Read(req)
	if err != nil {
		return dst, 0, err
	}
	defer res.Release()
	at := len(dst)
	dst = slices.Grow(dst, int(res.Bytes))[:at+int(res.Bytes)]
	for _, r := range res.Regions {
		n, err := r.File.ReadAt(dst[at:at+int(r.Length)], r.Position)
		if n < int(r.Length) {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return dst[:len(dst)-int(res.Bytes)], 0, fmt.Errorf("segment: read %s: %w", l.tp, err)
		}
		at += n
	}
	return dst, res.NextOffset, nil
}
