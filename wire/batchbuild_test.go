package wire

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/batchtest"
)

// encodeRecord encodes rec with kmsg (an independent encoder), filling in
// its length: records_test.go's raw record sections.
func encodeRecord(rec kmsg.Record) []byte {
	rec.Length = 0
	body := rec.AppendTo(nil)[1:] // varint(0) is one byte
	rec.Length = int32(len(body))
	return rec.AppendTo(nil)
}

// testBatch builds a valid RecordBatch v2 holding recs (kmsg records, as
// sampleRecords gives them, timestamps as deltas from baseTs), compressed
// with codec, through the shared builder.
func testBatch(codec int, baseTs int64, recs ...kmsg.Record) []byte {
	out := make([]batchtest.Record, len(recs))
	for i, r := range recs {
		out[i] = batchtest.Record{Key: r.Key, Value: r.Value, Timestamp: baseTs + r.TimestampDelta64}
		for _, h := range r.Headers {
			out[i].Headers = append(out[i].Headers, batchtest.Header{Key: h.Key, Value: h.Value})
		}
	}
	return batchtest.Build(out, batchtest.Compression(codec, Compress), batchtest.BaseTimestamp(baseTs))
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
