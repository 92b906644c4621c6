package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	kgapiversions "github.com/segmentio/kafka-go/protocol/apiversions"
	kgcreatetopics "github.com/segmentio/kafka-go/protocol/createtopics"
	kgdeletetopics "github.com/segmentio/kafka-go/protocol/deletetopics"
	kgdescribeconfigs "github.com/segmentio/kafka-go/protocol/describeconfigs"
	kgfetch "github.com/segmentio/kafka-go/protocol/fetch"
	kgmetadata "github.com/segmentio/kafka-go/protocol/metadata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// These tests use kafka-go's protocol package as a second, independent
// client codec (test-only; wire itself imports no client): its encoders
// build the requests DecodeRequest must read, and its decoders read what
// this package writes.

func kafkaGoFrame(t *testing.T, version int16, msg protocol.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := protocol.WriteRequest(&buf, version, 42, "kafka-go", msg); err != nil {
		t.Fatalf("kafka-go cannot encode %T v%d: %v", msg, version, err)
	}
	return buf.Bytes()[4:]
}

func decodeKafkaGo(t *testing.T, version int16, msg protocol.Message) kmsg.Request {
	t.Helper()
	req, err := DecodeRequest(kafkaGoFrame(t, version, msg))
	if err != nil {
		t.Fatalf("%T v%d: %v", msg, version, err)
	}
	if req.Header.APIVersion != version || req.Header.CorrelationID != 42 || req.Header.ClientID != "kafka-go" {
		t.Fatalf("%T v%d: header %+v", msg, version, req.Header)
	}
	return req.Body
}

func TestKafkaGoRequests(t *testing.T) {
	for v := int16(0); v <= 2; v++ {
		if _, ok := decodeKafkaGo(t, v, &kgapiversions.Request{}).(*kmsg.ApiVersionsRequest); !ok {
			t.Fatal("ApiVersions body type")
		}
	}
	for v := int16(0); v <= 8; v++ {
		body := decodeKafkaGo(t, v, &kgmetadata.Request{TopicNames: []string{"orders", "payments"}, AllowAutoTopicCreation: true}).(*kmsg.MetadataRequest)
		if len(body.Topics) != 2 || *body.Topics[0].Topic != "orders" || *body.Topics[1].Topic != "payments" {
			t.Fatalf("Metadata v%d topics %+v", v, body.Topics)
		}
		if v >= 4 && !body.AllowAutoTopicCreation {
			t.Fatalf("Metadata v%d lost AllowAutoTopicCreation", v)
		}
	}
	for v := int16(0); v <= 5; v++ { // v5 is flexible: request header v2
		body := decodeKafkaGo(t, v, &kgcreatetopics.Request{TimeoutMs: 5000, Topics: []kgcreatetopics.RequestTopic{
			{Name: "orders", NumPartitions: 6, ReplicationFactor: 1, Configs: []kgcreatetopics.RequestConfig{{Name: "cleanup.policy", Value: "compact"}}},
		}}).(*kmsg.CreateTopicsRequest)
		tp := body.Topics[0]
		if body.TimeoutMillis != 5000 || tp.Topic != "orders" || tp.NumPartitions != 6 || tp.ReplicationFactor != 1 ||
			len(tp.Configs) != 1 || *tp.Configs[0].Value != "compact" {
			t.Fatalf("CreateTopics v%d: %+v", v, body)
		}
	}
	for v := int16(0); v <= 3; v++ {
		body := decodeKafkaGo(t, v, &kgdeletetopics.Request{TopicNames: []string{"old"}, TimeoutMs: 100}).(*kmsg.DeleteTopicsRequest)
		if len(body.TopicNames) != 1 || body.TopicNames[0] != "old" {
			t.Fatalf("DeleteTopics v%d: %+v", v, body)
		}
	}
	for v := int16(0); v <= 3; v++ {
		body := decodeKafkaGo(t, v, &kgdescribeconfigs.Request{Resources: []kgdescribeconfigs.RequestResource{
			{ResourceType: 2, ResourceName: "orders", ConfigNames: []string{"retention.ms"}},
		}}).(*kmsg.DescribeConfigsRequest)
		if len(body.Resources) != 1 || body.Resources[0].ResourceName != "orders" || body.Resources[0].ConfigNames[0] != "retention.ms" {
			t.Fatalf("DescribeConfigs v%d: %+v", v, body)
		}
	}
}

func TestKafkaGoReadsApiVersions(t *testing.T) {
	for v := int16(0); v <= 2; v++ {
		resp := HandleApiVersions(apiVersionsRequest(v, "", ""))
		frame := AppendResponse(nil, 9, resp)
		corr, msg, err := protocol.ReadResponse(bytes.NewReader(frame), protocol.ApiVersions, v)
		if err != nil || corr != 9 {
			t.Fatalf("v%d: %v (correlation %d)", v, err, corr)
		}
		got := msg.(*kgapiversions.Response)
		if got.ErrorCode != 0 || len(got.ApiKeys) != len(APIs) {
			t.Fatalf("v%d: %+v", v, got)
		}
		for i, k := range got.ApiKeys {
			if k.ApiKey != APIs[i].Key || k.MinVersion != APIs[i].Min || k.MaxVersion != APIs[i].Max {
				t.Fatalf("v%d: key %d = %+v", v, i, k)
			}
		}
	}
}

func TestKafkaGoReadsFetch(t *testing.T) {
	// Two batches back to back in a "segment file", served as one region
	// per partition plus an in-memory batch.
	b1 := testBatch(CodecNone, 1000, sampleRecords()...)
	SetBatchBaseOffset(b1, 100)
	b2 := testBatch(CodecGzip, 2000, sampleRecords()[:2]...)
	SetBatchBaseOffset(b2, 104)
	b3 := testBatch(CodecNone, 3000, sampleRecords()[2:3]...)
	SetBatchBaseOffset(b3, 106)
	file := append(append([]byte{}, b1...), b2...)
	f := newMemFile(file)
	for v := int16(4); v <= 11; v++ {
		r := &FetchResponse{Version: v, Topics: []FetchTopic{{Name: "orders", Partitions: []FetchPartition{
			{Partition: 0, HighWatermark: 107, LastStableOffset: 107, LogStartOffset: 100,
				AbortedTransactions:  []AbortedTransaction{{ProducerID: 7, FirstOffset: 101}},
				PreferredReadReplica: -1,
				Records:              []Chunk{{File: f, Position: 0, Length: int64(len(file))}, {Bytes: b3}}},
			{Partition: 1, ErrorCode: 1, HighWatermark: -1, LastStableOffset: -1, LogStartOffset: -1, PreferredReadReplica: -1},
		}}}}
		resp, err := EncodeFetchResponse(5, r)
		if err != nil {
			t.Fatal(err)
		}
		flat, err := resp.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		corr, msg, err := protocol.ReadResponse(bytes.NewReader(flat), protocol.Fetch, v)
		if err != nil || corr != 5 {
			t.Fatalf("v%d: kafka-go cannot read: %v", v, err)
		}
		got := msg.(*kgfetch.Response)
		p0 := got.Topics[0].Partitions[0]
		if got.Topics[0].Topic != "orders" || p0.HighWatermark != 107 || p0.LastStableOffset != 107 {
			t.Fatalf("v%d: %+v", v, p0)
		}
		if v >= 5 && p0.LogStartOffset != 100 {
			t.Fatalf("v%d: log start %d", v, p0.LogStartOffset)
		}
		if len(p0.AbortedTransactions) != 1 || p0.AbortedTransactions[0].FirstOffset != 101 {
			t.Fatalf("v%d: aborted %+v", v, p0.AbortedTransactions)
		}
		var offsets []int64
		var values [][]byte
		for {
			rec, err := p0.RecordSet.Records.ReadRecord()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("v%d: reading records: %v", v, err)
			}
			val, _ := protocol.ReadAll(rec.Value)
			offsets = append(offsets, rec.Offset)
			values = append(values, val)
		}
		wantOffsets := []int64{100, 101, 102, 103, 104, 105, 106}
		if len(offsets) != len(wantOffsets) {
			t.Fatalf("v%d: offsets %v", v, offsets)
		}
		for i := range offsets {
			if offsets[i] != wantOffsets[i] {
				t.Fatalf("v%d: offsets %v", v, offsets)
			}
		}
		if string(values[2]) != "value two" || string(values[0]) != "v0" {
			t.Fatalf("v%d: values %q", v, values)
		}
		if p1 := got.Topics[0].Partitions[1]; p1.ErrorCode != 1 {
			t.Fatalf("v%d: partition 1 %+v", v, p1)
		}
	}
}
