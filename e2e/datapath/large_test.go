package datapath

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestLargeBatches checks the size rules of the data path: a topic's
// max.message.bytes admits batches up to it and refuses larger ones with
// MESSAGE_TOO_LARGE, and a consumer whose fetch limits are smaller than a
// batch still gets it (KIP-74: the first batch is returned whole even when
// it exceeds max_bytes or the partition's max_bytes), so it never stalls.
func TestLargeBatches(t *testing.T) {
	b := sharedBroker(t)
	requireDataPath(t, b.Addr())
	topic := topicName(t, "large")
	limit := "3145728" // 3 MiB
	createTopic(t, b.Addr(), topic, 1, map[string]*string{"max.message.bytes": &limit})
	ctx := deadline(t, 2*time.Minute)
	producer := newClient(t, b.Addr(), kgo.DefaultProduceTopic(topic), kgo.ProducerBatchMaxBytes(8<<20),
		kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression())) // sizes are what goes on the wire

	value := func(i, size int) []byte {
		v := bytes.Repeat([]byte{byte('a' + i)}, size)
		copy(v, "record "+itoa(i)+" ")
		return v
	}
	sizes := []int{100, 1536 << 10, 10, 2900 << 10, 1 << 20, 50}
	for i, size := range sizes {
		if err := producer.ProduceSync(ctx, &kgo.Record{Key: []byte(itoa(i)), Value: value(i, size)}).FirstErr(); err != nil {
			t.Fatalf("produce record %d (%d bytes) under a 3 MiB limit: %v", i, size, err)
		}
	}
	err := producer.ProduceSync(ctx, &kgo.Record{Key: []byte("too big"), Value: value(9, 4<<20)}).FirstErr()
	if !errors.Is(err, kerr.MessageTooLarge) {
		t.Errorf("produce 4 MiB under a 3 MiB limit: %v, want MESSAGE_TOO_LARGE", err)
	}

	consumer := newClient(t, b.Addr(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(0)}}),
		kgo.FetchMaxBytes(64<<10), kgo.FetchMaxPartitionBytes(32<<10), kgo.FetchMaxWait(200*time.Millisecond))
	var got []*kgo.Record
	for len(got) < len(sizes) {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("with fetch limits of 64/32 KiB the consumer got %d of %d records: a batch larger than the limits stalls it",
				len(got), len(sizes))
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		got = append(got, fs.Records()...)
	}
	for i, r := range got[:len(sizes)] {
		if r.Offset != int64(i) || string(r.Key) != itoa(i) || !bytes.Equal(r.Value, value(i, sizes[i])) {
			t.Errorf("record at offset %d: key %q, %d value bytes; want offset %d, %d bytes", r.Offset, r.Key, len(r.Value), i, sizes[i])
		}
	}
	if len(got) > len(sizes) {
		t.Errorf("%d records, want %d: the refused record was stored", len(got), len(sizes))
	}
}
