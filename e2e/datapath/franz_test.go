package datapath

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// franzCodecs are the codecs franz-go produces with, by Kafka's name.
var franzCodecs = []struct {
	name  string
	codec kgo.CompressionCodec
}{
	{"none", kgo.NoCompression()},
	{"gzip", kgo.GzipCompression()},
	{"snappy", kgo.SnappyCompression()},
	{"lz4", kgo.Lz4Compression()},
	{"zstd", kgo.ZstdCompression()},
}

// TestFranzRoundTrip produces recordCount records per codec with an
// idempotent franz-go producer (acks=all) and consumes every partition
// from the start while the producer runs, checking every byte, key,
// header and timestamp, each record exactly once, dense offsets and
// per-partition order.
func TestFranzRoundTrip(t *testing.T) {
	b := sharedBroker(t)
	requireDataPath(t, b.Addr())
	n := recordCount(t)
	const partitions = 4
	for _, c := range franzCodecs {
		t.Run(c.name, func(t *testing.T) {
			topic := topicName(t, "kgo")
			createTopic(t, b.Addr(), topic, partitions, nil)
			base := timeBase()
			v := newVerifier(n, partitions, c.name, base)
			began := time.Now()

			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			var wg sync.WaitGroup
			var produced time.Duration
			var produceErr error
			producer := franzProducer(t, b.Addr(), kgo.ProducerBatchCompression(c.codec))
			wg.Add(1)
			go func() {
				defer wg.Done()
				produceErr = produceFranz(ctx, producer, topic, partitions, n, base, c.name, nil)
				produced = time.Since(began)
				if produceErr != nil {
					cancel() // the consumer would wait for records that never come
				}
			}()
			consumeFranz(ctx, t, b.Addr(), topic, partitions, v)
			wg.Wait()
			if produceErr != nil {
				t.Fatalf("produce: %v", produceErr)
			}
			if msg := v.result(); msg != "" {
				t.Fatalf("codec %s: %s", c.name, msg)
			}
			checkStoredCodec(t, b.Addr(), topic, partitions, c.name)
			t.Logf("codec %s: %d records produced in %v, produced and consumed in %v",
				c.name, n, produced.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
		})
	}
}

// franzRecord is record i of the model as a kgo record for partition i%partitions.
func franzRecord(topic string, i int, partitions int32, base time.Time, codec string) *kgo.Record {
	return &kgo.Record{
		Topic:     topic,
		Partition: int32(i % int(partitions)),
		Key:       recordKey(i),
		Value:     recordValue(i),
		Headers: []kgo.RecordHeader{
			{Key: idxHeader, Value: indexBytes(i)},
			{Key: "codec", Value: []byte(codec)},
		},
		Timestamp: recordTime(base, i),
	}
}

// franzProducer is an idempotent, acks=all franz-go producer that sends
// each record to the partition it names.
func franzProducer(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	return newClient(t, addr, append([]kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(5 * time.Millisecond),
		kgo.MaxBufferedRecords(100_000),
	}, opts...)...)
}

// produceFranz sends records 0..n-1 of the model through cl and returns
// the first produce error. onAck, if not nil, is called for each
// acknowledged record.
func produceFranz(ctx context.Context, cl *kgo.Client, topic string, partitions int32, n int, base time.Time, codec string, onAck func(*kgo.Record)) error {
	var failed atomic.Pointer[error]
	for i := 0; i < n && failed.Load() == nil; i++ {
		cl.Produce(ctx, franzRecord(topic, i, partitions, base, codec), func(r *kgo.Record, err error) {
			if err != nil {
				err = fmt.Errorf("record %s to partition %d: %w", r.Key, r.Partition, err)
				failed.CompareAndSwap(nil, &err)
			} else if onAck != nil {
				onAck(r)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	if e := failed.Load(); e != nil {
		return *e
	}
	return nil
}

// consumeFranz reads every partition of topic from offset 0 into v until v
// has every record or ctx ends.
func consumeFranz(ctx context.Context, t testing.TB, addr, topic string, partitions int32, v *verifier) {
	t.Helper()
	consumeFranzFrom(ctx, t, addr, topic, kgo.NewOffset().At(0), partitions, v)
}

// consumeWith consumes the partitions in offsets from where they say into
// v until v has every record or ctx ends, then checks that nothing follows.
func consumeWith(ctx context.Context, t testing.TB, addr, topic string, offsets map[int32]kgo.Offset, v *verifier) {
	t.Helper()
	cl := newClient(t, addr,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxBytes(64<<20),
		kgo.FetchMaxPartitionBytes(8<<20),
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	for !v.done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Errorf("consume %s: stopped with %d of %d records: %v", topic, v.Count(), v.n, ctx.Err())
			return
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Errorf("fetch %s/%d: %v", topic, p, err)
		})
		fs.EachRecord(func(r *kgo.Record) { v.add(fromKgo(r)) })
		if t.Failed() {
			return
		}
	}
	checkEndOffsets(ctx, t, cl, topic, v)
}

// checkEndOffsets fails t unless each partition ends right after the last
// record v saw in it: a duplicate written after the last original record
// would otherwise go unread.
func checkEndOffsets(ctx context.Context, t testing.TB, cl *kgo.Client, topic string, v *verifier) {
	t.Helper()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Errorf("list end offsets of %s: %v", topic, err)
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for p := range v.partitions {
		o, ok := ends.Lookup(topic, p)
		if !ok || o.Err != nil {
			t.Errorf("end offset of %s/%d: %v", topic, p, o.Err)
			continue
		}
		if o.Offset != v.nextOff[p] {
			t.Errorf("%s/%d ends at offset %d, but its records end at %d: %d unexpected records",
				topic, p, o.Offset, v.nextOff[p], o.Offset-v.nextOff[p])
		}
	}
}

func fromKgo(r *kgo.Record) consumed {
	c := consumed{Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
	for _, h := range r.Headers {
		c.Headers = append(c.Headers, header{Key: h.Key, Value: h.Value})
	}
	return c
}
