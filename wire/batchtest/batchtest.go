package batchtest

import (
	"encoding/binary"
	"hash/crc32"
)

// Header field offsets (see the package documentation).
const (
	baseOffsetPos      = 0
	lengthPos          = 8
	leaderEpochPos     = 12
	magicPos           = 16
	crcPos             = 17
	attributesPos      = 21
	lastOffsetDeltaPos = 23
	baseTimestampPos   = 27
	maxTimestampPos    = 35
	producerIDPos      = 43
	producerEpochPos   = 51
	baseSequencePos    = 53
	recordCountPos     = 57
	headerSize         = 61
	logOverhead        = 12 // baseOffset and batchLength
	noTimestamp        = -1 // Kafka's NO_TIMESTAMP, for a batch without records
)

// Record is one record of a batch. A nil Key or Value is encoded as null,
// an empty non-nil one as empty.
type Record struct {
	Key, Value []byte
	Headers    []Header
	// Timestamp is the record's time in milliseconds; the batch stores
	// it as a delta from its base timestamp.
	Timestamp int64
}

// Header is a record header. Its key is never null; a nil Value is.
type Header struct {
	Key   string
	Value []byte
}

// Values returns one record per value, each with a null key and
// timestamp ts: the batch a simple producer sends.
func Values(ts int64, values ...[]byte) []Record {
	recs := make([]Record, len(values))
	for i, v := range values {
		recs[i] = Record{Value: v, Timestamp: ts}
	}
	return recs
}

// Compressor compresses a batch's record section; wire.Compress is one.
type Compressor func(dst []byte, codec int, src []byte) ([]byte, error)

// An Option changes one property of the batch Build makes.
type Option func(*spec)

type spec struct {
	codec         int
	compress      Compressor
	attrs         int16
	producerID    int64
	producerEpoch int16
	baseSequence  int32
	baseOffset    int64
	leaderEpoch   int32
	baseTs, maxTs *int64
}

// Compression compresses the records with codec (wire.CodecGzip, ...),
// using compress (pass wire.Compress), and sets the codec's attribute
// bits. The default is no compression.
func Compression(codec int, compress Compressor) Option {
	return func(s *spec) { s.codec, s.compress = codec, compress }
}

// Producer makes the batch idempotent: producer id, epoch and the
// sequence of its first record. The default is -1, -1, -1 (no producer).
func Producer(id int64, epoch int16, baseSequence int32) Option {
	return func(s *spec) { s.producerID, s.producerEpoch, s.baseSequence = id, epoch, baseSequence }
}

// Attributes sets attribute bits besides the codec: transactional
// (0x10), control (0x20), log-append time (0x08), or any others a test
// needs, valid or not.
func Attributes(bits int16) Option { return func(s *spec) { s.attrs |= bits } }

// BaseTimestamp sets the header's base timestamp, from which the records'
// deltas count. The default is the first record's Timestamp.
func BaseTimestamp(ts int64) Option { return func(s *spec) { s.baseTs = &ts } }

// MaxTimestamp sets the header's max timestamp. The default is the
// largest record Timestamp, as a producer writes it.
func MaxTimestamp(ts int64) Option { return func(s *spec) { s.maxTs = &ts } }

// BaseOffset sets the first record's offset. The default is 0, as a
// producer sends it; the leader assigns the real one.
func BaseOffset(offset int64) Option { return func(s *spec) { s.baseOffset = offset } }

// LeaderEpoch sets the partition leader epoch. The default is -1, as a
// producer sends it.
func LeaderEpoch(epoch int32) Option { return func(s *spec) { s.leaderEpoch = epoch } }

// Build returns a RecordBatch v2 holding recs, with offset deltas 0, 1,
// ... and a correct length and CRC. It panics if the compressor fails: a
// test's batch cannot be built, and nothing else in the test can help.
func Build(recs []Record, opts ...Option) []byte {
	s := spec{producerID: -1, producerEpoch: -1, baseSequence: -1, leaderEpoch: -1}
	for _, o := range opts {
		o(&s)
	}
	baseTs, maxTs := int64(noTimestamp), int64(noTimestamp)
	if len(recs) > 0 {
		baseTs, maxTs = recs[0].Timestamp, recs[0].Timestamp
		for _, r := range recs {
			maxTs = max(maxTs, r.Timestamp)
		}
	}
	if s.baseTs != nil {
		baseTs = *s.baseTs
	}
	if s.maxTs != nil {
		maxTs = *s.maxTs
	}

	var section []byte
	for i, r := range recs {
		section = appendRecord(section, &r, r.Timestamp-baseTs, int32(i))
	}
	if s.codec != 0 {
		var err error
		if section, err = s.compress(nil, s.codec, section); err != nil {
			panic("batchtest: compress: " + err.Error())
		}
	}

	b := make([]byte, headerSize, headerSize+len(section))
	be := binary.BigEndian
	be.PutUint64(b[baseOffsetPos:], uint64(s.baseOffset))
	be.PutUint32(b[lengthPos:], uint32(headerSize-logOverhead+len(section)))
	be.PutUint32(b[leaderEpochPos:], uint32(s.leaderEpoch))
	b[magicPos] = 2
	be.PutUint16(b[attributesPos:], uint16(int16(s.codec)|s.attrs))
	be.PutUint32(b[lastOffsetDeltaPos:], uint32(len(recs)-1))
	be.PutUint64(b[baseTimestampPos:], uint64(baseTs))
	be.PutUint64(b[maxTimestampPos:], uint64(maxTs))
	be.PutUint64(b[producerIDPos:], uint64(s.producerID))
	be.PutUint16(b[producerEpochPos:], uint16(s.producerEpoch))
	be.PutUint32(b[baseSequencePos:], uint32(s.baseSequence))
	be.PutUint32(b[recordCountPos:], uint32(len(recs)))
	b = append(b, section...)
	Reseal(b)
	return b
}

// Reseal recomputes the CRC of batch b, for a test that changed a field
// the CRC covers (attributes onwards) and wants only the semantic checks
// to see it.
func Reseal(b []byte) {
	binary.BigEndian.PutUint32(b[crcPos:], crc32.Checksum(b[attributesPos:], castagnoli))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendRecord appends r's encoding, length first.
func appendRecord(dst []byte, r *Record, tsDelta int64, offsetDelta int32) []byte {
	body := []byte{0} // attributes: unused in v2
	body = binary.AppendVarint(body, tsDelta)
	body = binary.AppendVarint(body, int64(offsetDelta))
	body = appendNullable(body, r.Key)
	body = appendNullable(body, r.Value)
	body = binary.AppendVarint(body, int64(len(r.Headers)))
	for _, h := range r.Headers {
		body = binary.AppendVarint(body, int64(len(h.Key)))
		body = append(body, h.Key...)
		body = appendNullable(body, h.Value)
	}
	dst = binary.AppendVarint(dst, int64(len(body)))
	return append(dst, body...)
}

// appendNullable appends a varint length and the bytes, or -1 for nil.
func appendNullable(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}
