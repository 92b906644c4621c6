package segment

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
)

// Segment file suffixes; part of the on-disk format.
const (
	LogSuffix       = ".log"
	IndexSuffix     = ".index"
	TimeIndexSuffix = ".timeindex"
)

// SegmentName is the file name of the segment starting at base with the
// given suffix: the base offset as 20 zero-padded digits.
func SegmentName(base int64, suffix string) string { return fmt.Sprintf("%020d%s", base, suffix) }

// parseSegmentName returns the base offset of a "<20 digits><suffix>" name.
func parseSegmentName(name, suffix string) (int64, bool) {
	digits, ok := strings.CutSuffix(name, suffix)
	if !ok || len(digits) != 20 {
		return 0, false
	}
	base, err := strconv.ParseInt(digits, 10, 64)
	return base, err == nil && base >= 0
}

// segment is one .log file and its indexes. All fields belong to the
// log's goroutine.
type segment struct {
	base     int64
	logPath  string
	idxPath  string
	timePath string
	txn      txnIndex // aborted transactions whose markers are in this segment

	size int64 // bytes of whole batches in the .log file
	next int64 // offset after the last batch

	loaded     bool // idx and tidx are in memory
	idx        offsetIndex
	tidx       timeIndex
	sinceIndex int64 // bytes appended since the last offset-index entry

	maxTs       int64 // largest batch max timestamp, -1 if none
	maxTsOffset int64 // last offset of the batch holding maxTs
	rollBase    int64 // start of the segment's age for segment.ms (ms)

	// tail remembers the newest batches appended since the log opened,
	// while the segment is the active one; nil before the first append
	// and after a roll.
	tail *batchTail

	// h is the .log file's handle as last acquired from the cache, kept
	// without a reference so appends can take one with tryAcquire instead
	// of a cache lookup; nil until then.
	h *handle

	// reservedTo is where the disk space reserved for the active
	// segment's file ends (see reserver); 0 when nothing is known to be.
	reservedTo int64
}

func newSegment(dir string, base int64) *segment {
	return &segment{
		base:     base,
		logPath:  dir + "/" + SegmentName(base, LogSuffix),
		idxPath:  dir + "/" + SegmentName(base, IndexSuffix),
		timePath: dir + "/" + SegmentName(base, TimeIndexSuffix),
		txn:      txnIndex{path: dir + "/" + SegmentName(base, TxnIndexSuffix)},
		next:     base,
		maxTs:    -1, maxTsOffset: -1, rollBase: -1,
	}
}

// maxRel is the bound for relative offsets of this segment's indexes.
func (s *segment) maxRel(nextBase int64) int64 {
	if nextBase > s.base {
		return nextBase - s.base
	}
	return math.MaxUint32
}

// track records a batch of size bytes written at pos, whose last offset
// is last and max timestamp maxTs, in the in-memory indexes and counters.
func (s *segment) track(last, maxTs, pos, size int64, interval int32) {
	if maxTs > s.maxTs {
		s.maxTs, s.maxTsOffset = maxTs, last
	}
	if s.rollBase < 0 && pos == 0 {
		s.rollBase = maxTs
	}
	if s.sinceIndex >= int64(interval) {
		s.idx = append(s.idx, offsetEntry{rel: uint32(last - s.base), pos: uint32(pos)})
		s.appendTimeEntry()
		s.sinceIndex = 0
	}
	s.sinceIndex += size
	s.size = pos + size
	s.next = last + 1
}

// appendTimeEntry adds (maxTs, maxTsOffset) to the time index if it is
// newer than the last entry.
func (s *segment) appendTimeEntry() {
	if s.maxTs < 0 {
		return
	}
	if n := len(s.tidx); n > 0 && s.tidx[n-1].ts >= s.maxTs {
		return
	}
	s.tidx = append(s.tidx, timeEntry{ts: s.maxTs, rel: uint32(s.maxTsOffset - s.base)})
}

// writeIndexes writes both index files in place and fsyncs them. It is
// called when the segment stops being the active one and on clean close;
// a crash in the middle leaves a segment that recovery scans anyway.
func (s *segment) writeIndexes(fsys vfs.FS) error {
	if err := writeWhole(fsys, s.idxPath, s.idx.encode()); err != nil {
		return err
	}
	return writeWhole(fsys, s.timePath, s.tidx.encode())
}

func writeWhole(fsys vfs.FS, path string, data []byte) error {
	f, err := fsys.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// loadIndexes reads both index files and checks them against the
// segment's size and the next segment's base offset.
func (s *segment) loadIndexes(fsys vfs.FS, nextBase int64) error {
	b, err := vfs.ReadFile(fsys, s.idxPath)
	if err != nil {
		return err
	}
	idx, err := decodeOffsetIndex(b, s.size, s.maxRel(nextBase))
	if err != nil {
		return err
	}
	b, err = vfs.ReadFile(fsys, s.timePath)
	if err != nil {
		return err
	}
	tidx, err := decodeTimeIndex(b, s.maxRel(nextBase))
	if err != nil {
		return err
	}
	s.idx, s.tidx, s.loaded = idx, tidx, true
	if n := len(tidx); n > 0 {
		s.maxTs, s.maxTsOffset = tidx[n-1].ts, s.base+int64(tidx[n-1].rel)
	}
	return nil
}

// scanResult is what scanning a segment found.
type scanResult struct {
	validSize int64 // bytes of whole, valid batches from the scan start
	bytesRead int64 // bytes examined (the file from the scan start)
	stopErr   error // why the scan stopped before the end of the file, nil if it did not
	stopHdr   *wire.BatchHeader
}

// scan reads batches from position from to the end of the file (fileSize),
// validating each (length, CRC-32C, offsets increasing within the
// segment), and tracks them in the in-memory indexes. It stops at the
// first invalid batch. interval is index.interval.bytes.
func (s *segment) scan(f vfs.File, from, fileSize int64, interval int32, buf []byte) (scanResult, []byte) {
	res := scanResult{validSize: from, bytesRead: max(fileSize-from, 0)}
	pos := from
	for pos < fileSize {
		n := min(int64(len(buf)), fileSize-pos)
		m, err := f.ReadAt(buf[:n], pos)
		if int64(m) < n {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			res.stopErr = err
			return res, buf
		}
		chunk := buf[:n]
		off := 0
		for {
			rest := chunk[off:]
			if len(rest) == 0 {
				break
			}
			if len(rest) < wire.BatchHeaderSize {
				if pos+int64(off)+int64(len(rest)) >= fileSize {
					res.stopErr = fmt.Errorf("%w (%d bytes at the end)", errShortHeader, len(rest))
					return res, buf
				}
				break // refill
			}
			h, _ := wire.ParseBatchHeader(rest)
			size := int64(h.Length) + wire.BatchLogOverhead
			if h.Length < wire.BatchHeaderSize-wire.BatchLogOverhead {
				res.stopErr, res.stopHdr = fmt.Errorf("%w (length field %d)", wire.ErrBatchLength, h.Length), &h
				return res, buf
			}
			at := pos + int64(off)
			if at+size > fileSize {
				res.stopErr, res.stopHdr = fmt.Errorf("%w (batch of %d bytes, %d in the file)", wire.ErrBatchLength, size, fileSize-at), &h
				return res, buf
			}
			if size > int64(len(rest)) {
				if size > int64(len(buf)) {
					buf = make([]byte, size)
				}
				break // refill from this batch
			}
			if _, err := wire.ValidateStoredBatch(rest[:size]); err != nil {
				res.stopErr, res.stopHdr = err, &h
				return res, buf
			}
			if h.BaseOffset < s.next || h.BaseOffset < s.base || h.LastOffset()-s.base > math.MaxUint32 {
				res.stopErr, res.stopHdr = fmt.Errorf("batch offsets %d..%d do not follow %d in segment %d", h.BaseOffset, h.LastOffset(), s.next, s.base), &h
				return res, buf
			}
			s.track(h.LastOffset(), h.MaxTimestamp, at, size, interval)
			res.validSize = at + size
			off += int(size)
		}
		pos += int64(off)
	}
	return res, buf
}

// errIndexMismatch: what the log holds where the offset index led does
// not match what the index said. An index is a cache: the caller
// rebuilds it from the log (which finds real corruption) and retries.
var errIndexMismatch = errors.New("segment: offset index does not match the log")

func indexMismatch(s *segment, pos int64, format string, args ...any) error {
	return fmt.Errorf("%w: %s at byte %d: %s", errIndexMismatch, s.logPath, pos, fmt.Sprintf(format, args...))
}

// badHeader is the error for a header that cannot be read where a batch
// should start: a mismatch, since the index led there (the rebuild tells
// a damaged index from a damaged log); an I/O error stays itself.
func (s *segment) badHeader(pos int64, err error) error {
	if errors.Is(err, errShortHeader) || errors.Is(err, wire.ErrBatchLength) {
		return indexMismatch(s, pos, "%v", err)
	}
	return err
}

// follows checks the header h read at pos while walking s's batches
// after a batch whose last offset was prev: a batch of s, whole inside
// the segment, with offsets after prev. Only what the log itself says is
// used, so walking from a batch the index named correctly never fails
// on an intact log.
func (s *segment) follows(h *wire.BatchHeader, pos, prev int64) error {
	if h.Magic != 2 || pos+h.Size() > s.size || h.BaseOffset <= prev || h.BaseOffset < s.base || h.LastOffset() < h.BaseOffset {
		return indexMismatch(s, pos, "batch %d..%d (magic %d, %d bytes) does not follow offset %d", h.BaseOffset, h.LastOffset(), h.Magic, h.Size(), prev)
	}
	return nil
}

// named checks that h, read at an index entry's position, is the batch
// the entry names: its last offset is the entry's.
func (s *segment) named(h *wire.BatchHeader, e offsetEntry) error {
	if want := s.base + int64(e.rel); h.Magic != 2 || h.LastOffset() != want {
		return indexMismatch(s, int64(e.pos), "index names the batch ending at offset %d, the log holds %d..%d (magic %d)", want, h.BaseOffset, h.LastOffset(), h.Magic)
	}
	return nil
}

// locate returns the span of the batch holding offset, or of the first
// batch after it; found is false when the segment ends before offset (pos
// is then the segment's size). f is the segment's .log file. Near the end
// of the active segment the tail answers without reading the file.
// Otherwise it starts from the offset index and checks every header on
// the way against the index and the offsets before it; a mismatch is
// errIndexMismatch.
func (s *segment) locate(f vfs.File, offset int64) (pos int64, span batchSpan, found bool, err error) {
	if i, ok := s.tail.locate(s.size, offset); ok {
		if i == s.tail.n {
			return s.size, batchSpan{}, false, nil
		}
		span = *s.tail.at(i)
		return span.pos, span, true, nil
	}
	var hb [wire.BatchHeaderSize]byte
	rel := max(offset-s.base, 0)
	j := len(s.idx) - 1 // offsets past a uint32 from the base: the last entry
	if rel <= math.MaxUint32 {
		j = s.idx.floorIndex(uint32(rel))
	}
	prev := s.base - 1
	if j >= 0 {
		pos = int64(s.idx[j].pos)
		prev = -1 // the entry's own check stands in
	}
	for pos < s.size {
		h, err := readHeader(f, pos, &hb)
		if err != nil {
			return pos, batchSpan{}, false, s.badHeader(pos, err)
		}
		if j >= 0 {
			err = s.named(&h, s.idx[j])
			j = -1
		} else {
			err = s.follows(&h, pos, prev)
		}
		if err != nil {
			return pos, batchSpan{}, false, err
		}
		if h.LastOffset() >= offset {
			return pos, batchSpan{base: h.BaseOffset, last: h.LastOffset(), pos: pos, size: h.Size()}, true, nil
		}
		prev = h.LastOffset()
		pos += h.Size()
	}
	return pos, batchSpan{}, false, nil
}

// boundaryAtOrBefore returns the start of the last batch that ends at or
// before limit, scanning from a known batch start from (<= limit).
// It returns from when the batch at from already crosses limit. A jump
// through the index is checked as in locate.
func (s *segment) boundaryAtOrBefore(f vfs.File, from, limit, beforeOffset int64) (int64, error) {
	if i, ok := s.tail.indexOfPos(s.size, from); ok {
		pos := from
		for ; i < s.tail.n; i++ {
			b := s.tail.at(i)
			if b.pos+b.size > limit || b.last >= beforeOffset {
				break
			}
			pos = b.pos + b.size
		}
		return pos, nil
	}
	var hb [wire.BatchHeaderSize]byte
	// Jump ahead with the index: to the last indexed batch that starts
	// before limit and ends before beforeOffset (entries name a batch's
	// last offset), if that is past from.
	j := s.idx.floorPosIndex(limit)
	if lastRel := beforeOffset - 1 - s.base; lastRel < 0 {
		j = -1
	} else if lastRel <= math.MaxUint32 {
		j = min(j, s.idx.floorIndex(uint32(lastRel)))
	}
	pos, prev := from, int64(-1)
	if j < 0 || int64(s.idx[j].pos) <= from {
		j = -1 // no jump: from is a batch start the caller found
	} else {
		pos = int64(s.idx[j].pos)
	}
	for first := true; pos < limit || first && j >= 0; first = false {
		h, err := readHeader(f, pos, &hb)
		if err != nil {
			return pos, s.badHeader(pos, err)
		}
		switch {
		case first && j >= 0:
			err = s.named(&h, s.idx[j]) // read even at limit: the boundary must be a batch start
		case !first:
			err = s.follows(&h, pos, prev)
		}
		if err != nil {
			return pos, err
		}
		if pos >= limit || pos+h.Size() > limit || h.LastOffset() >= beforeOffset {
			break
		}
		prev = h.LastOffset()
		pos += h.Size()
	}
	return pos, nil
}
