package wire

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// encodeRecord encodes rec with kmsg (an independent encoder), filling in
// its length.
func encodeRecord(rec kmsg.Record) []byte {
	rec.Length = 0
	body := rec.AppendTo(nil)[1:] // varint(0) is one byte
	rec.Length = int32(len(body))
	return rec.AppendTo(nil)
}

// testBatch builds a valid RecordBatch v2 holding recs, compressed with
// codec, with a correct CRC.
func testBatch(codec int, baseTs int64, recs ...kmsg.Record) []byte {
	var section []byte
	for i := range recs {
		recs[i].OffsetDelta = int32(i)
		section = append(section, encodeRecord(recs[i])...)
	}
	if codec != CodecNone {
		var err error
		if section, err = Compress(nil, codec, section); err != nil {
			panic(err)
		}
	}
	b := make([]byte, BatchHeaderSize, BatchHeaderSize+len(section))
	be := binary.BigEndian
	be.PutUint32(b[BatchLengthPos:], uint32(BatchHeaderSize-BatchLogOverhead+len(section)))
	be.PutUint32(b[BatchLeaderEpochPos:], 0xffffffff)
	b[BatchMagicPos] = 2
	be.PutUint16(b[BatchAttributesPos:], uint16(codec))
	be.PutUint32(b[BatchLastOffsetDeltaPos:], uint32(len(recs)-1))
	be.PutUint64(b[BatchBaseTimestampPos:], uint64(baseTs))
	be.PutUint64(b[BatchMaxTimestampPos:], uint64(baseTs))
	be.PutUint64(b[BatchProducerIDPos:], ^uint64(0))
	be.PutUint16(b[BatchProducerEpochPos:], 0xffff)
	be.PutUint32(b[BatchBaseSequencePos:], 0xffffffff)
	be.PutUint32(b[BatchRecordCountPos:], uint32(len(recs)))
	b = append(b, section...)
	be.PutUint32(b[BatchCRCPos:], CRC32C(b[BatchAttributesPos:]))
	return b
}

// sampleRecords: null key, empty key, null value, headers with a null
// value, negative timestamp delta.
func sampleRecords() []kmsg.Record {
	return []kmsg.Record{
		{TimestampDelta64: 0, Key: nil, Value: []byte("v0")},
		{TimestampDelta64: 5, Key: []byte{}, Value: nil},
		{TimestampDelta64: -3, Key: []byte("key-2"), Value: []byte("value two"),
			Headers: []kmsg.Header{{Key: "h1", Value: []byte("x")}, {Key: "", Value: nil}}},
		{TimestampDelta64: 1 << 40, Key: []byte("k"), Value: make([]byte, 300)},
	}
}
