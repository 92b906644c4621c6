package actors

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
)

// BenchmarkProduce drives Broker.Handle (no network) with Produce requests
// of 6 partitions x one 150-record batch of 100-byte values, 8 requests
// in flight, under each flush policy. records/s and ns per record are
// reported; divide ns/record by 1000 for CPU-s per million records on one
// core when the machine is otherwise idle.
func BenchmarkProduce(b *testing.B) {
	for _, policy := range []string{"never", "group"} {
		b.Run(policy, func(b *testing.B) {
			br := startBroker(b, b.TempDir())
			createTopicWith(b, br, "bench", 6, "samsa.flush.policy", policy)
			batch := batchtest.Build(batchtest.Repeat(150, batchtest.Record{Value: make([]byte, 100), Timestamp: time.Now().UnixMilli()}))
			req := kmsg.NewPtrProduceRequest()
			req.Version, req.Acks, req.TimeoutMillis = 9, 1, 30000
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = "bench"
			for p := range int32(6) {
				rp := kmsg.NewProduceRequestTopicPartition()
				rp.Partition, rp.Records = p, append([]byte(nil), batch...)
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
			done := make(chan *wire.Response, 64)
			send := func() {
				br.Handle(&wire.Request{Header: wire.RequestHeader{APIKey: 0, APIVersion: 9, CorrelationID: 1},
					Body: req, Reply: func(r *wire.Response) { done <- r }})
			}
			const inflight = 8
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			sent := 0
			for ; sent < min(inflight, b.N); sent++ {
				send()
			}
			for i := 0; i < b.N; i++ {
				if r := <-done; r == nil {
					b.Fatal("no response")
				}
				if sent < b.N {
					send()
					sent++
				}
			}
			el := time.Since(start)
			records := float64(b.N) * 6 * 150
			b.ReportMetric(records/el.Seconds(), "records/s")
			b.ReportMetric(float64(el.Nanoseconds())/records, "ns/record")
		})
	}
}
