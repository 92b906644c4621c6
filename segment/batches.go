package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
)

// batchMeta is what an append keeps of each batch it validated: the
// header fields it assigns or indexes, not the whole wire.BatchHeader.
type batchMeta struct {
	baseOffset   int64
	maxTimestamp int64
	size         int64 // bytes, header included
	lastDelta    int32 // lastOffsetDelta
	leaderEpoch  int32
}

func (m *batchMeta) lastOffset() int64 { return m.baseOffset + int64(m.lastDelta) }

// splitBatches validates every batch in b (one or more concatenated
// RecordBatch v2) and returns what the append needs of their headers, in
// order. Nothing is modified. Each batch must be whole, magic 2, with a
// correct CRC-32C, a known codec, a record count matching
// lastOffsetDelta (with stored, batches replicated from a leader: at
// most lastOffsetDelta+1, as the log cleaner leaves them), and no larger
// than maxBytes.
func splitBatches(b []byte, maxBytes int32, stored bool, dst []batchMeta) ([]batchMeta, error) {
	if len(b) == 0 {
		return dst, ErrNoBatches
	}
	be := binary.BigEndian
	for pos, i := 0, 0; pos < len(b); i++ {
		rest := b[pos:]
		if len(rest) < wire.BatchHeaderSize {
			return dst, &BatchError{Index: i, Position: pos, Err: wire.ErrBatchTooShort}
		}
		length := int64(int32(be.Uint32(rest[wire.BatchLengthPos:])))
		size := length + wire.BatchLogOverhead
		if length < wire.BatchHeaderSize-wire.BatchLogOverhead || size > int64(len(rest)) {
			return dst, &BatchError{Index: i, Position: pos,
				Err: fmt.Errorf("%w (length field %d, %d bytes left)", wire.ErrBatchLength, length, len(rest)-wire.BatchLogOverhead)}
		}
		batch := rest[:size]
		if !wire.BatchValid(batch) {
			// The cheap yes/no said no: ValidateBatch names the fault.
			// Replicated (stored) batches may be compacted ones, with
			// fewer records than their offset range: ValidateStoredBatch.
			validate := wire.ValidateBatch
			if stored {
				validate = wire.ValidateStoredBatch
			}
			if _, err := validate(batch); err != nil {
				return dst, &BatchError{Index: i, Position: pos, Err: err}
			}
		}
		if size > int64(maxBytes) {
			return dst, &BatchError{Index: i, Position: pos,
				Err: fmt.Errorf("%w (%d bytes, limit %d)", ErrRecordTooLarge, size, maxBytes)}
		}
		dst = append(dst, batchMeta{
			baseOffset:   int64(be.Uint64(batch[wire.BatchBaseOffsetPos:])),
			maxTimestamp: int64(be.Uint64(batch[wire.BatchMaxTimestampPos:])),
			size:         size,
			lastDelta:    int32(be.Uint32(batch[wire.BatchLastOffsetDeltaPos:])),
			leaderEpoch:  int32(be.Uint32(batch[wire.BatchLeaderEpochPos:])),
		})
		pos += int(size)
	}
	return dst, nil
}

// errShortHeader: fewer bytes than a batch header remain in a file.
var errShortHeader = errors.New("segment: incomplete batch header")

// readHeader reads the batch header at pos of f. It checks only that the
// header is present and that its length field is plausible.
func readHeader(f vfs.File, pos int64, buf *[wire.BatchHeaderSize]byte) (wire.BatchHeader, error) {
	n, err := f.ReadAt(buf[:], pos)
	if n < len(buf) {
		if err == nil || err == io.EOF {
			err = errShortHeader
		}
		return wire.BatchHeader{}, err
	}
	h, _ := wire.ParseBatchHeader(buf[:])
	if h.Length < wire.BatchHeaderSize-wire.BatchLogOverhead {
		return h, fmt.Errorf("%w (length field %d)", wire.ErrBatchLength, h.Length)
	}
	return h, nil
}

// recordTimestamps calls fn with the offset and timestamp of every record
// of an uncompressed batch, until fn returns false. It reports false when
// the records cannot be decoded.
func recordTimestamps(batch []byte, h wire.BatchHeader, fn func(offset, ts int64) bool) bool {
	p := batch[wire.BatchHeaderSize:]
	for range h.NumRecords {
		length, n := binary.Varint(p)
		if n <= 0 || length < 0 || int64(len(p)-n) < length {
			return false
		}
		rec := p[n : n+int(length)]
		p = p[n+int(length):]
		if len(rec) < 1 {
			return false
		}
		rec = rec[1:] // attributes
		tsDelta, n := binary.Varint(rec)
		if n <= 0 {
			return false
		}
		offDelta, m := binary.Varint(rec[n:])
		if m <= 0 {
			return false
		}
		if !fn(h.BaseOffset+offDelta, h.BaseTimestamp+tsDelta) {
			return true
		}
	}
	return true
}
