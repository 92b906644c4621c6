package batchtest_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
)

func sample() []batchtest.Record {
	return []batchtest.Record{
		{Value: []byte("v0"), Timestamp: 1000},
		{Key: []byte{}, Timestamp: 1005}, // empty key, null value
		{Key: []byte("key-2"), Value: []byte("value two"), Timestamp: 997,
			Headers: []batchtest.Header{{Key: "h1", Value: []byte("x")}, {Key: "", Value: nil}}},
		{Key: []byte("k"), Value: make([]byte, 300), Timestamp: 1000 + 1<<40},
	}
}

// Every codec's batch passes wire's validation, and wire's decoder reads
// back the header fields and records that went in.
func TestBuildReadsBackThroughWire(t *testing.T) {
	for _, codec := range []int{wire.CodecNone, wire.CodecGzip, wire.CodecSnappy, wire.CodecLZ4, wire.CodecZstd} {
		recs := sample()
		b := batchtest.Build(recs, batchtest.Compression(codec, wire.Compress), batchtest.Producer(7, 3, 42),
			batchtest.Attributes(wire.AttrTransactional), batchtest.BaseOffset(100), batchtest.LeaderEpoch(5))
		h, err := wire.ValidateBatch(b)
		if err != nil {
			t.Fatalf("codec %d: %v", codec, err)
		}
		want := wire.BatchHeader{BaseOffset: 100, Length: int32(len(b) - wire.BatchLogOverhead), LeaderEpoch: 5, Magic: 2,
			CRC: h.CRC, Attributes: int16(codec) | wire.AttrTransactional, LastOffsetDelta: 3,
			BaseTimestamp: 1000, MaxTimestamp: 1000 + 1<<40, ProducerID: 7, ProducerEpoch: 3, BaseSequence: 42, NumRecords: 4}
		if h != want {
			t.Fatalf("codec %d: header\n%+v, want\n%+v", codec, h, want)
		}
		it, _, err := wire.NewBatchRecordIter(b, nil, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		var rec wire.Record
		for i := 0; it.Next(&rec); i++ {
			r := recs[i]
			if rec.OffsetDelta != int32(i) || rec.TimestampDelta != r.Timestamp-1000 ||
				!sameNullable(rec.Key, r.Key) || !sameNullable(rec.Value, r.Value) || rec.HeaderCount != len(r.Headers) {
				t.Fatalf("codec %d: record %d read back as %+v, built from %+v", codec, i, rec, r)
			}
			hs := rec.Headers()
			for _, wh := range r.Headers {
				k, v, ok := hs.Next()
				if !ok || string(k) != wh.Key || !sameNullable(v, wh.Value) {
					t.Fatalf("codec %d: record %d header %q=%q read back as %q=%q", codec, i, wh.Key, wh.Value, k, v)
				}
			}
		}
		if it.Err() != nil || it.Index() != 4 {
			t.Fatalf("codec %d: iteration stopped at %d: %v", codec, it.Index(), it.Err())
		}
	}
}

// An independent encoder, franz-go's kmsg, reads the batch the same way.
func TestBuildMatchesKmsg(t *testing.T) {
	b := batchtest.Build(sample())
	var kb kmsg.RecordBatch
	if err := kb.ReadFrom(b); err != nil {
		t.Fatal(err)
	}
	if kb.NumRecords != 4 || kb.ProducerID != -1 || kb.ProducerEpoch != -1 || kb.FirstSequence != -1 || kb.PartitionLeaderEpoch != -1 {
		t.Fatalf("kmsg reads %+v", kb)
	}
	var recs []byte
	for i, r := range sample() {
		kr := kmsg.Record{TimestampDelta64: r.Timestamp - 1000, OffsetDelta: int32(i), Key: r.Key, Value: r.Value}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kmsg.Header{Key: h.Key, Value: h.Value})
		}
		kr.Length = int32(len(kr.AppendTo(nil)) - 1) // the length varint of 0 is one byte
		recs = kr.AppendTo(recs)
	}
	if !bytes.Equal(kb.Records, recs) {
		t.Fatalf("records section differs from kmsg's encoding:\n%x\n%x", kb.Records, recs)
	}
}

// Defaults are a producer's: no producer id, epoch -1, base offset 0,
// timestamps from the records; an empty batch has Kafka's NO_TIMESTAMP.
func TestBuildDefaults(t *testing.T) {
	h, err := wire.ParseBatchHeader(batchtest.Build(batchtest.Values(50, []byte("a"), []byte("b"))))
	if err != nil || h.BaseOffset != 0 || h.LeaderEpoch != -1 || h.ProducerID != -1 || h.BaseSequence != -1 ||
		h.BaseTimestamp != 50 || h.MaxTimestamp != 50 || h.NumRecords != 2 || h.Attributes != 0 {
		t.Fatalf("%+v, %v", h, err)
	}
	h, err = wire.ParseBatchHeader(batchtest.Build(nil, batchtest.BaseTimestamp(9), batchtest.MaxTimestamp(3)))
	if err != nil || h.NumRecords != 0 || h.LastOffsetDelta != -1 || h.BaseTimestamp != 9 || h.MaxTimestamp != 3 {
		t.Fatalf("%+v, %v", h, err)
	}
}

func TestReseal(t *testing.T) {
	b := batchtest.Build(batchtest.Values(1, []byte("x")))
	binary.BigEndian.PutUint16(b[wire.BatchAttributesPos:], wire.AttrControl)
	if wire.BatchValid(b) {
		t.Fatal("a changed attribute passed the CRC check")
	}
	batchtest.Reseal(b)
	if h, err := wire.ValidateBatch(b); err != nil || !h.IsControl() {
		t.Fatalf("%+v, %v", h, err)
	}
}

func sameNullable(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// A Sized batch's length depends on n and valueSize alone: the 61-byte
// header plus, per record, its length varint, attributes, timestamp and
// offset deltas, a null key, the value and no headers.
func ExampleSized() {
	b := batchtest.Sized(10, 100)
	h, err := wire.ValidateBatch(b)
	fmt.Println(len(b), h.NumRecords, h.BaseTimestamp, h.MaxTimestamp, err)
	// Output: 1151 10 0 9 <nil>
}
