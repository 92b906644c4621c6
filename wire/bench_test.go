package wire

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// enablePlanned serves a planned API for the duration of a benchmark, so
// the benchmark runs whether or not its row has moved into APIs yet.
func enablePlanned(tb testing.TB, key int16) {
	tb.Helper()
	if _, ok := LookupAPI(key); ok {
		return
	}
	for _, a := range plannedAPIs {
		if a.Key == key {
			apiByKey[key] = a
			tb.Cleanup(func() { delete(apiByKey, key) })
			return
		}
	}
	tb.Fatalf("key %d is not planned", key)
}

// batchOfSize returns a valid uncompressed batch of about size bytes.
func batchOfSize(size int) []byte {
	var recs []kmsg.Record
	for n := 0; n < size-BatchHeaderSize-120; n += 120 {
		recs = append(recs, kmsg.Record{Key: []byte(fmt.Sprintf("key-%06d", len(recs))), Value: make([]byte, 100)})
	}
	return testBatch(CodecNone, 1700000000000, recs...)
}

func produceFrame(partitions int, batch []byte) []byte {
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	req.Acks = -1
	req.TimeoutMillis = 30000
	t := kmsg.NewProduceRequestTopic()
	t.Topic = "events"
	for p := range partitions {
		tp := kmsg.NewProduceRequestTopicPartition()
		tp.Partition = int32(p)
		tp.Records = batch
		t.Partitions = append(t.Partitions, tp)
	}
	req.Topics = append(req.Topics, t)
	return encodeFrame(req, 1, "producer-1")
}

func BenchmarkDecodeRequest(b *testing.B) {
	enablePlanned(b, 0)
	batch := batchOfSize(16 << 10)
	for _, parts := range []int{1, 50} {
		frame := produceFrame(parts, batch)
		b.Run(fmt.Sprintf("Produce-v9-%dx16KiB", parts), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeRequest(frame); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	meta := kmsg.NewPtrMetadataRequest()
	meta.Version = 12
	for _, name := range []string{"orders", "payments", "events"} {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(name)
		meta.Topics = append(meta.Topics, t)
	}
	frame := encodeFrame(meta, 1, "consumer-1")
	b.Run("Metadata-v12-3topics", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeRequest(frame); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAppendResponseMetadata(b *testing.B) {
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 12
	resp.ClusterID = kmsg.StringPtr("samsa-cluster")
	for id := range int32(3) {
		br := kmsg.NewMetadataResponseBroker()
		br.NodeID, br.Host, br.Port = id, "127.0.0.1", 9092+id
		resp.Brokers = append(resp.Brokers, br)
	}
	for ti := range 10 {
		t := kmsg.NewMetadataResponseTopic()
		t.Topic = kmsg.StringPtr(fmt.Sprintf("topic-%d", ti))
		for p := range int32(3) {
			pp := kmsg.NewMetadataResponseTopicPartition()
			pp.Partition, pp.Leader = p, p
			pp.Replicas, pp.ISR = []int32{0, 1, 2}, []int32{0, 1, 2}
			t.Partitions = append(t.Partitions, pp)
		}
		resp.Topics = append(resp.Topics, t)
	}
	buf := AppendResponse(nil, 1, resp)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendResponse(buf[:0], 1, resp)
	}
}

func BenchmarkEncodeFetchResponse(b *testing.B) {
	f := newMemFile(make([]byte, 1<<20))
	for _, v := range []int16{4, 11, 12, 13} {
		r := &FetchResponse{Version: v, SessionID: 1}
		for ti := range 2 {
			t := FetchTopic{Name: fmt.Sprintf("topic-%d", ti)}
			for p := range int32(8) {
				t.Partitions = append(t.Partitions, FetchPartition{
					Partition: p, HighWatermark: 1000, LastStableOffset: 1000, LogStartOffset: 0,
					PreferredReadReplica: -1,
					Records:              []Chunk{{File: f, Position: int64(p) * 65536, Length: 65536}},
				})
			}
			r.Topics = append(r.Topics, t)
		}
		b.Run(fmt.Sprintf("v%d-16partitions", v), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := EncodeFetchResponse(1, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkValidateBatch(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10} {
		batch := batchOfSize(size)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ValidateBatch(batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRecordIter64KiB(b *testing.B) {
	batch := batchOfSize(64 << 10)
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		it, _, err := NewBatchRecordIter(batch, nil, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		var rec Record
		for it.Next(&rec) {
		}
		if it.Err() != nil {
			b.Fatal(it.Err())
		}
	}
}

func BenchmarkDecompress(b *testing.B) {
	src := samplePayloads()[2][:64<<10]
	for _, codec := range allCodecs[1:] {
		c, err := Compress(nil, codec, src)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("codec%d-64KiB", codec), func(b *testing.B) {
			dst := make([]byte, 0, len(src))
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if dst, err = Decompress(dst[:0], codec, c, 1<<20); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
