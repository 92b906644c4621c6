package datapath

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestRecordEdgeCases round-trips records at the edges of the record
// format through every codec: null and empty keys and values (a null value
// is a tombstone), many headers, a header with a null value and one with
// an empty name, a timestamp of 0 (the epoch), and a value of 900 KiB.
func TestRecordEdgeCases(t *testing.T) {
	b := sharedBroker(t)
	requireDataPath(t, b.Addr())
	var many []kgo.RecordHeader
	for i := range 40 {
		many = append(many, kgo.RecordHeader{Key: "h" + itoa(i), Value: []byte(strings.Repeat("v", i))})
	}
	now := time.UnixMilli(time.Now().UnixMilli())
	cases := []kgo.Record{
		{Key: nil, Value: nil, Timestamp: now},
		{Key: []byte{}, Value: []byte{}, Timestamp: now},
		{Key: []byte("k"), Value: nil, Timestamp: now},
		{Key: nil, Value: []byte("only a value"), Timestamp: now},
		{Key: []byte("headers"), Value: []byte("v"), Headers: many, Timestamp: now},
		{Key: []byte("odd headers"), Value: []byte("v"), Headers: []kgo.RecordHeader{{Key: "null", Value: nil}, {Key: "", Value: []byte("no name")}, {Key: "dup", Value: []byte("1")}, {Key: "dup", Value: []byte("2")}}, Timestamp: now},
		{Key: []byte("epoch"), Value: []byte("v"), Timestamp: time.UnixMilli(0)},
		{Key: []byte("big"), Value: bytes.Repeat([]byte("0123456789abcdef"), 900<<10/16), Timestamp: now},
		{Key: bytes.Repeat([]byte{0, 0xff}, 500), Value: []byte{0, 1, 2, 0xfe, 0xff}, Timestamp: now},
	}
	for _, c := range franzCodecs {
		t.Run(c.name, func(t *testing.T) {
			topic := topicName(t, "edge")
			createTopic(t, b.Addr(), topic, 1, nil)
			producer := newClient(t, b.Addr(), kgo.ProducerBatchCompression(c.codec), kgo.DefaultProduceTopic(topic),
				kgo.RecordPartitioner(kgo.ManualPartitioner()))
			ctx := deadline(t, time.Minute)
			for i := range cases {
				r := cases[i] // a copy: the client writes into the record
				if err := producer.ProduceSync(ctx, &r).FirstErr(); err != nil {
					t.Fatalf("produce case %d: %v", i, err)
				}
			}
			consumer := newClient(t, b.Addr(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(0)}}),
				kgo.FetchMaxWait(200*time.Millisecond))
			var got []*kgo.Record
			for len(got) < len(cases) {
				fs := consumer.PollFetches(ctx)
				if ctx.Err() != nil {
					t.Fatalf("consumed %d of %d records", len(got), len(cases))
				}
				fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
				got = append(got, fs.Records()...)
			}
			for i, want := range cases {
				r := got[i]
				if r.Offset != int64(i) {
					t.Errorf("case %d at offset %d", i, r.Offset)
				}
				if !sameBytes(r.Key, want.Key) || !sameBytes(r.Value, want.Value) {
					t.Errorf("case %d: key %s value %s; want key %s value %s", i,
						describe(r.Key), describe(r.Value), describe(want.Key), describe(want.Value))
				}
				if len(r.Headers) != len(want.Headers) {
					t.Errorf("case %d: %d headers, want %d", i, len(r.Headers), len(want.Headers))
				} else {
					for j, h := range want.Headers {
						if r.Headers[j].Key != h.Key || !sameBytes(r.Headers[j].Value, h.Value) {
							t.Errorf("case %d header %d: %q=%s, want %q=%s", i, j,
								r.Headers[j].Key, describe(r.Headers[j].Value), h.Key, describe(h.Value))
						}
					}
				}
				if !r.Timestamp.Equal(want.Timestamp) {
					t.Errorf("case %d: timestamp %d, want %d", i, r.Timestamp.UnixMilli(), want.Timestamp.UnixMilli())
				}
			}
		})
	}
}

// sameBytes is bytes.Equal that also tells null from empty.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func describe(b []byte) string {
	switch {
	case b == nil:
		return "null"
	case len(b) > 24:
		return itoa(len(b)) + " bytes"
	}
	return "\"" + string(b) + "\""
}
