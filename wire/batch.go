package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Byte offsets of the RecordBatch v2 header fields. These constants are part
// of the wire and on-disk format: Kafka stores batches on disk exactly as
// they travel on the wire.
const (
	BatchBaseOffsetPos      = 0  // int64, assigned by the leader
	BatchLengthPos          = 8  // int32, bytes after this field
	BatchLeaderEpochPos     = 12 // int32, set by the leader
	BatchMagicPos           = 16 // int8, always 2
	BatchCRCPos             = 17 // uint32, CRC-32C of bytes [21:]
	BatchAttributesPos      = 21 // int16
	BatchLastOffsetDeltaPos = 23 // int32
	BatchBaseTimestampPos   = 27 // int64
	BatchMaxTimestampPos    = 35 // int64
	BatchProducerIDPos      = 43 // int64
	BatchProducerEpochPos   = 51 // int16
	BatchBaseSequencePos    = 53 // int32
	BatchRecordCountPos     = 57 // int32
	BatchHeaderSize         = 61 // records start here

	// BatchLogOverhead is the part of a batch before and including the
	// length field: baseOffset (8) + batchLength (4).
	BatchLogOverhead = 12
)

// Attribute bits of a RecordBatch v2.
const (
	AttrCompressionMask  = 0x07
	AttrTimestampLogTime = 0x08
	AttrTransactional    = 0x10
	AttrControl          = 0x20
	AttrDeleteHorizon    = 0x40
)

// Compression codecs (attributes & AttrCompressionMask).
const (
	CodecNone   = 0
	CodecGzip   = 1
	CodecSnappy = 2
	CodecLZ4    = 3
	CodecZstd   = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C returns the CRC-32C (Castagnoli) checksum of b.
func CRC32C(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Typed batch validation errors. Callers map them to Kafka error codes
// (CORRUPT_MESSAGE, UNSUPPORTED_FOR_MESSAGE_FORMAT, INVALID_RECORD, ...).
var (
	ErrBatchTooShort    = errors.New("wire: record batch shorter than its 61-byte header")
	ErrBatchLength      = errors.New("wire: record batch length field does not match the bytes given")
	ErrBatchMagic       = errors.New("wire: record batch magic is not 2")
	ErrBatchCRC         = errors.New("wire: record batch CRC-32C mismatch")
	ErrBatchEmpty       = errors.New("wire: record batch holds no records")
	ErrBatchRecordCount = errors.New("wire: record batch lastOffsetDelta does not match its record count")
	ErrBatchCodec       = errors.New("wire: record batch uses an unknown compression codec")
)

// BatchHeader is the decoded fixed 61-byte header of a RecordBatch v2.
type BatchHeader struct {
	BaseOffset      int64
	Length          int32 // bytes after the length field; total size is Length+12
	LeaderEpoch     int32
	Magic           int8
	CRC             uint32
	Attributes      int16
	LastOffsetDelta int32
	BaseTimestamp   int64
	MaxTimestamp    int64
	ProducerID      int64
	ProducerEpoch   int16
	BaseSequence    int32
	NumRecords      int32
}

// Size is the total size of the batch in bytes, header included.
func (h *BatchHeader) Size() int64 { return int64(h.Length) + BatchLogOverhead }

// LastOffset is the offset of the batch's last record.
func (h *BatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// Codec is the batch's compression codec.
func (h *BatchHeader) Codec() int { return int(h.Attributes & AttrCompressionMask) }

// IsControl reports whether the batch is a control batch (transaction marker).
func (h *BatchHeader) IsControl() bool { return h.Attributes&AttrControl != 0 }

// IsTransactional reports whether the batch belongs to a transaction.
func (h *BatchHeader) IsTransactional() bool { return h.Attributes&AttrTransactional != 0 }

// LastSequence is the sequence number of the batch's last record, or -1
// when the batch carries no sequence.
func (h *BatchHeader) LastSequence() int32 {
	if h.BaseSequence < 0 {
		return -1
	}
	s := int64(h.BaseSequence) + int64(h.LastOffsetDelta)
	if s > 0x7fffffff { // sequences wrap at int32 max
		s -= 0x80000000
	}
	return int32(s)
}

// ParseBatchHeader decodes the fixed header at the start of b. It checks
// only that b is long enough for the header; it does not check the length
// field against len(b) or verify the CRC (see ValidateBatch).
func ParseBatchHeader(b []byte) (BatchHeader, error) {
	if len(b) < BatchHeaderSize {
		return BatchHeader{}, ErrBatchTooShort
	}
	be := binary.BigEndian
	return BatchHeader{
		BaseOffset:      int64(be.Uint64(b[BatchBaseOffsetPos:])),
		Length:          int32(be.Uint32(b[BatchLengthPos:])),
		LeaderEpoch:     int32(be.Uint32(b[BatchLeaderEpochPos:])),
		Magic:           int8(b[BatchMagicPos]),
		CRC:             be.Uint32(b[BatchCRCPos:]),
		Attributes:      int16(be.Uint16(b[BatchAttributesPos:])),
		LastOffsetDelta: int32(be.Uint32(b[BatchLastOffsetDeltaPos:])),
		BaseTimestamp:   int64(be.Uint64(b[BatchBaseTimestampPos:])),
		MaxTimestamp:    int64(be.Uint64(b[BatchMaxTimestampPos:])),
		ProducerID:      int64(be.Uint64(b[BatchProducerIDPos:])),
		ProducerEpoch:   int16(be.Uint16(b[BatchProducerEpochPos:])),
		BaseSequence:    int32(be.Uint32(b[BatchBaseSequencePos:])),
		NumRecords:      int32(be.Uint32(b[BatchRecordCountPos:])),
	}, nil
}

// validateBatchFrame is what every batch must pass, whoever wrote it:
// the header fits, magic is 2, the length field matches len(b), the
// CRC-32C over bytes [21:] matches and the codec is known. The record
// count is checked by the callers (a producer's batch and a stored one
// differ there).
func validateBatchFrame(b []byte) (BatchHeader, error) {
	h, err := ParseBatchHeader(b)
	if err != nil {
		return h, err
	}
	if h.Magic != 2 {
		return h, fmt.Errorf("%w (magic %d)", ErrBatchMagic, h.Magic)
	}
	if h.Length < BatchHeaderSize-BatchLogOverhead || h.Size() != int64(len(b)) {
		return h, fmt.Errorf("%w (length field %d, bytes %d)", ErrBatchLength, h.Length, len(b)-BatchLogOverhead)
	}
	if got := CRC32C(b[BatchAttributesPos:]); got != h.CRC {
		return h, fmt.Errorf("%w (stored %08x, computed %08x)", ErrBatchCRC, h.CRC, got)
	}
	if h.Codec() > CodecZstd {
		return h, fmt.Errorf("%w (%d)", ErrBatchCodec, h.Codec())
	}
	return h, nil
}

// ValidateBatch checks that b holds exactly one well-formed RecordBatch v2:
// the header fits, the length field matches len(b), magic is 2, the codec is
// known, the record count agrees with lastOffsetDelta (a batch must hold at
// least one record) and the CRC-32C over bytes [21:] matches. It returns the
// decoded header. The error is one of the ErrBatch* values, wrapped with
// detail.
func ValidateBatch(b []byte) (BatchHeader, error) {
	h, err := validateBatchFrame(b)
	if err != nil {
		return h, err
	}
	if h.NumRecords <= 0 {
		return h, ErrBatchEmpty
	}
	if h.LastOffsetDelta != h.NumRecords-1 {
		return h, fmt.Errorf("%w (lastOffsetDelta %d, records %d)", ErrBatchRecordCount, h.LastOffsetDelta, h.NumRecords)
	}
	return h, nil
}

// BatchValid reports whether ValidateBatch accepts b, without decoding
// the header or building an error: the append path's check, where the
// batch is nearly always fine and the CRC is the only costly test (it
// runs last). On false, ValidateBatch names the fault.
func BatchValid(b []byte) bool {
	if len(b) < BatchHeaderSize {
		return false
	}
	be := binary.BigEndian
	length := int64(int32(be.Uint32(b[BatchLengthPos:])))
	records := int32(be.Uint32(b[BatchRecordCountPos:]))
	return b[BatchMagicPos] == 2 &&
		length >= BatchHeaderSize-BatchLogOverhead && length+BatchLogOverhead == int64(len(b)) &&
		int(be.Uint16(b[BatchAttributesPos:])&AttrCompressionMask) <= CodecZstd &&
		records > 0 && int32(be.Uint32(b[BatchLastOffsetDeltaPos:])) == records-1 &&
		CRC32C(b[BatchAttributesPos:]) == be.Uint32(b[BatchCRCPos:])
}

// SetBatchBaseOffset writes the base offset into the batch header in place.
// The CRC does not cover it, so the batch stays valid.
func SetBatchBaseOffset(b []byte, offset int64) {
	binary.BigEndian.PutUint64(b[BatchBaseOffsetPos:], uint64(offset))
}

// SetBatchLeaderEpoch writes the partition leader epoch into the batch
// header in place. The CRC does not cover it.
func SetBatchLeaderEpoch(b []byte, epoch int32) {
	binary.BigEndian.PutUint32(b[BatchLeaderEpochPos:], uint32(epoch))
}

// SetBatchLogAppendTime marks the batch as LogAppendTime, sets its max
// timestamp to ts and recomputes the CRC (both fields are covered by it).
func SetBatchLogAppendTime(b []byte, ts int64) {
	be := binary.BigEndian
	attrs := be.Uint16(b[BatchAttributesPos:]) | AttrTimestampLogTime
	be.PutUint16(b[BatchAttributesPos:], attrs)
	be.PutUint64(b[BatchMaxTimestampPos:], uint64(ts))
	be.PutUint32(b[BatchCRCPos:], CRC32C(b[BatchAttributesPos:]))
}
