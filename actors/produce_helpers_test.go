package actors

import (
	"encoding/binary"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// batchSpec describes a RecordBatch v2 for tests.
type batchSpec struct {
	codec      int
	timestamps []int64 // one record per timestamp
	pid        int64   // -1: not idempotent
	epoch      int16
	seq        int32
	attrs      int16  // extra attribute bits (transactional, control)
	key        []byte // nil: null key
	value      []byte
}

// plain is a non-idempotent batch of n records stamped ts.
func plain(n int, ts int64) batchSpec {
	s := batchSpec{pid: -1, epoch: -1, seq: -1, value: []byte("value")}
	for range n {
		s.timestamps = append(s.timestamps, ts)
	}
	return s
}

// idem is an idempotent batch of n records of producer pid.
func idem(pid int64, epoch int16, seq int32, n int, ts int64) batchSpec {
	s := plain(n, ts)
	s.pid, s.epoch, s.seq = pid, epoch, seq
	return s
}

// build encodes the batch with kmsg's record encoder, compresses it with
// wire.Compress and seals it with a correct length and CRC.
func (s batchSpec) build() []byte {
	var section []byte
	base := s.timestamps[0]
	maxTs := base
	for i, ts := range s.timestamps {
		maxTs = max(maxTs, ts)
		rec := kmsg.Record{TimestampDelta64: ts - base, OffsetDelta: int32(i), Key: s.key, Value: s.value}
		body := rec.AppendTo(nil)[1:]
		rec.Length = int32(len(body))
		section = append(section, rec.AppendTo(nil)...)
	}
	if s.codec != wire.CodecNone {
		var err error
		if section, err = wire.Compress(nil, s.codec, section); err != nil {
			panic(err)
		}
	}
	b := make([]byte, wire.BatchHeaderSize, wire.BatchHeaderSize+len(section))
	be := binary.BigEndian
	be.PutUint32(b[wire.BatchLengthPos:], uint32(wire.BatchHeaderSize-wire.BatchLogOverhead+len(section)))
	be.PutUint32(b[wire.BatchLeaderEpochPos:], 0xffffffff)
	b[wire.BatchMagicPos] = 2
	be.PutUint16(b[wire.BatchAttributesPos:], uint16(int16(s.codec)|s.attrs))
	be.PutUint32(b[wire.BatchLastOffsetDeltaPos:], uint32(len(s.timestamps)-1))
	be.PutUint64(b[wire.BatchBaseTimestampPos:], uint64(base))
	be.PutUint64(b[wire.BatchMaxTimestampPos:], uint64(maxTs))
	be.PutUint64(b[wire.BatchProducerIDPos:], uint64(s.pid))
	be.PutUint16(b[wire.BatchProducerEpochPos:], uint16(s.epoch))
	be.PutUint32(b[wire.BatchBaseSequencePos:], uint32(s.seq))
	be.PutUint32(b[wire.BatchRecordCountPos:], uint32(len(s.timestamps)))
	b = append(b, section...)
	reseal(b)
	return b
}

// reseal recomputes a batch's CRC after a test changed covered bytes.
func reseal(b []byte) {
	binary.BigEndian.PutUint32(b[wire.BatchCRCPos:], wire.CRC32C(b[wire.BatchAttributesPos:]))
}

var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli()

// testBatch builds an uncompressed RecordBatch v2 of n records with
// valueSize-byte values (base offset 0, as a producer sends it).
func testBatch(n, valueSize int) []byte {
	var recs []byte
	for i := range n {
		var rec []byte
		rec = append(rec, 0)
		rec = binary.AppendVarint(rec, int64(i))
		rec = binary.AppendVarint(rec, int64(i))
		rec = binary.AppendVarint(rec, -1)
		rec = binary.AppendVarint(rec, int64(valueSize))
		for j := range valueSize {
			rec = append(rec, byte(i+j))
		}
		rec = binary.AppendVarint(rec, 0)
		recs = binary.AppendVarint(recs, int64(len(rec)))
		recs = append(recs, rec...)
	}
	b := make([]byte, wire.BatchHeaderSize, wire.BatchHeaderSize+len(recs))
	be := binary.BigEndian
	be.PutUint32(b[wire.BatchLengthPos:], uint32(wire.BatchHeaderSize-wire.BatchLogOverhead+len(recs)))
	be.PutUint32(b[wire.BatchLeaderEpochPos:], 0xffffffff)
	b[wire.BatchMagicPos] = 2
	be.PutUint32(b[wire.BatchLastOffsetDeltaPos:], uint32(n-1))
	be.PutUint64(b[wire.BatchProducerIDPos:], 0xffffffffffffffff)
	be.PutUint16(b[wire.BatchProducerEpochPos:], 0xffff)
	be.PutUint32(b[wire.BatchBaseSequencePos:], 0xffffffff)
	be.PutUint32(b[wire.BatchRecordCountPos:], uint32(n))
	b = append(b, recs...)
	be.PutUint32(b[wire.BatchCRCPos:], wire.CRC32C(b[wire.BatchAttributesPos:]))
	return b
}
