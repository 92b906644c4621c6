package segment

import (
	"encoding/binary"
	"io"

	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
)

// What recovery cuts it must describe truthfully: which offsets went
// (not only those the damaged batch claimed) and whether any of them can
// have been acknowledged. These helpers look at bytes recovery is about
// to discard; they never change the log.

// maxCandidateBatch bounds the batches findBatches considers, so a
// garbage length field cannot make it allocate a segment's worth.
func maxCandidateBatch(cfg Config) int64 { return max(int64(cfg.MaxMessageBytes), maxBatchGuess) }

// findBatches looks for whole, valid batches (magic 2, length, CRC-32C)
// in f between from and end: the bytes after a damaged batch, whose
// length fields cannot be trusted to lead from one batch to the next, so
// every byte position is a candidate. It returns how many it found and
// the largest last offset among them (-1 if none). buf is scratch space
// (grown if needed and returned).
func findBatches(f vfs.File, from, end, maxSize int64, buf []byte) (found int, last int64, out []byte, err error) {
	last = -1
	pos := from
	for end-pos >= wire.BatchHeaderSize {
		w := buf[:min(int64(len(buf)), end-pos)]
		if n, rerr := f.ReadAt(w, pos); n < len(w) {
			return found, last, buf, shortRead(rerr)
		}
		i := 0
		for i+wire.BatchHeaderSize <= len(w) {
			size := int64(int32(binary.BigEndian.Uint32(w[i+wire.BatchLengthPos:]))) + wire.BatchLogOverhead
			if w[i+wire.BatchMagicPos] != 2 || size < wire.BatchHeaderSize || size > maxSize || pos+int64(i)+size > end {
				i++
				continue
			}
			if int64(i)+size > int64(len(w)) {
				if i == 0 {
					buf = make([]byte, size) // the candidate alone is larger than the window
				}
				break // refill from the candidate
			}
			if h, verr := wire.ValidateStoredBatch(w[i : i+int(size)]); verr == nil {
				found++
				last = max(last, h.LastOffset())
				i += int(size)
				continue
			}
			i++
		}
		pos += int64(i) // 0 when buf grew: read the large candidate again, whole
	}
	return found, last, buf, nil
}

// lastOffsetIn returns the last offset of the batches of a segment file
// recovery is deleting whole, or -1 when none can be read. It walks batch
// headers (no CRC: only the offsets are wanted) from the segment's last
// offset-index entry when the index is usable, else from the start, and
// stops at the first header that does not continue the segment.
func lastOffsetIn(fsys vfs.FS, s *segment, nextBase int64) int64 {
	f, err := fsys.Open(s.logPath)
	if err != nil {
		return -1
	}
	defer f.Close()
	walk := func(pos, prev int64) int64 {
		var hb [wire.BatchHeaderSize]byte
		last := int64(-1)
		for pos < s.size {
			h, err := readHeader(f, pos, &hb)
			if err != nil || h.Magic != 2 || pos+h.Size() > s.size || h.BaseOffset < s.base || h.BaseOffset <= prev || h.LastOffset() < h.BaseOffset {
				break
			}
			last, prev = h.LastOffset(), h.LastOffset()
			pos += h.Size()
		}
		return last
	}
	if b, err := vfs.ReadFile(fsys, s.idxPath); err == nil {
		if idx, err := decodeOffsetIndex(b, s.size, s.maxRel(nextBase)); err == nil && len(idx) > 0 {
			e := idx[len(idx)-1]
			// The entry names the last offset of the batch at its position.
			if last := walk(int64(e.pos), s.base+int64(e.rel)-1); last >= s.base+int64(e.rel) {
				return last
			}
		}
	}
	return walk(0, s.base-1)
}

// shortRead is the error for a read that returned fewer bytes than asked
// for from inside a file's size.
func shortRead(err error) error {
	if err == nil || err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
