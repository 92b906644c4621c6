package actors

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
)

// BenchmarkFetch drives Broker.Handle (no network) with Fetch requests of
// 6 partitions from offset 0, each answered with up to partition_max_bytes
// of 150-record batches of 100-byte values, 4 requests in flight. The
// response's record data is not read (netloop would sendfile it); Done
// releases it. ns/record is the broker's cost of serving a record on the
// fetch path: divide by 1000 for CPU-s per million records on one core.
func BenchmarkFetch(b *testing.B) {
	for _, c := range []struct {
		name    string
		partMax int32
	}{{"1MiB", 1 << 20}, {"64KiB", 64 << 10}} {
		b.Run(c.name, func(b *testing.B) {
			br := startBroker(b, b.TempDir())
			createTopicWith(b, br, "bench", 6, "samsa.flush.policy", "never")
			batch := batchtest.Sized(150, 100)
			recordsPerPartition := int64(0)
			for p := range int32(6) {
				for recordsPerPartition = 0; recordsPerPartition < 12_000; recordsPerPartition += 150 {
					done := make(chan *wire.Response, 1)
					br.Handle(produceOne("bench", p, batch, func(r *wire.Response) { done <- r }))
					<-done
				}
			}
			req := kmsg.NewPtrFetchRequest()
			req.Version, req.ReplicaID, req.MaxBytes, req.MinBytes, req.SessionEpoch = 12, -1, 50<<20, 1, -1
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = "bench"
			for p := range int32(6) {
				rp := kmsg.NewFetchRequestTopicPartition()
				rp.Partition, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = p, c.partMax, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)

			done := make(chan int64, 64)
			send := func() {
				br.Handle(&wire.Request{Header: wire.RequestHeader{APIKey: 1, APIVersion: 12, CorrelationID: 1},
					Body: req, Reply: func(r *wire.Response) {
						n := r.Len()
						r.Done()
						done <- n
					}})
			}
			const inflight = 4
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			sent := 0
			var bytes int64
			for ; sent < min(inflight, b.N); sent++ {
				send()
			}
			for i := 0; i < b.N; i++ {
				bytes += <-done
				if sent < b.N {
					send()
					sent++
				}
			}
			el := time.Since(start)
			records := float64(bytes) / float64(len(batch)) * 150
			b.ReportMetric(records/el.Seconds(), "records/s")
			b.ReportMetric(float64(el.Nanoseconds())/records, "ns/record")
		})
	}
}

// BenchmarkFetchWakeup is the tail-consumer cycle: a fetch of every
// partition parks at the log ends (max wait 10 s), a Produce of one
// 10-record batch to one partition (flush policy never, so the high
// watermark moves at once) wakes it, the fetch answers with that batch.
// One op is one produce plus one woken fetch; the produce goes to the
// partitions in turn.
func BenchmarkFetchWakeup(b *testing.B) {
	for _, parts := range []int32{1, 6} {
		b.Run(fmt.Sprintf("partitions=%d", parts), func(b *testing.B) { benchTailCycle(b, parts, false) })
	}
}

// BenchmarkFetchTail is the other half of a tail consumer's life: the
// data is there when the fetch arrives. A Produce of one 10-record batch
// to one of 6 partitions (in turn) is acknowledged, then a fetch of all 6
// at their log ends answers it at once; the other five have nothing new.
func BenchmarkFetchTail(b *testing.B) { benchTailCycle(b, 6, true) }

// benchTailCycle produces one batch and fetches it, over parts
// partitions: the produce first and acknowledged (dataFirst), or the
// fetch first so that it parks and the produce wakes it.
func benchTailCycle(b *testing.B, parts int32, dataFirst bool) {
	br := startBroker(b, b.TempDir())
	createTopicWith(b, br, "tail", parts, "samsa.flush.policy", "never")
	batch := batchtest.Sized(10, 100)
	produced := make(chan struct{}, 1)
	fetched := make(chan int64, 1)
	offsets := make([]int64, parts)
	fetch := func() {
		br.Handle(fetchAll(offsets, func(r *wire.Response) {
			n := r.Len()
			r.Done()
			fetched <- n
		}))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if !dataFirst {
			fetch()
		}
		target := int32(i) % parts
		br.Handle(produceOne("tail", target, batch, func(*wire.Response) { produced <- struct{}{} }))
		<-produced
		if dataFirst {
			fetch()
		}
		if n := <-fetched; n < int64(len(batch)) {
			b.Fatalf("fetch answered %d bytes", n)
		}
		offsets[target] += 10
	}
}

// produceOne is a Produce (acks=1) of batch to partition of topic.
func produceOne(topic string, partition int32, batch []byte, reply func(*wire.Response)) *wire.Request {
	preq := kmsg.NewPtrProduceRequest()
	preq.Version, preq.Acks, preq.TimeoutMillis = 9, 1, 30000
	prt := kmsg.NewProduceRequestTopic()
	prt.Topic = topic
	prp := kmsg.NewProduceRequestTopicPartition()
	prp.Partition, prp.Records = partition, append([]byte(nil), batch...)
	prt.Partitions = append(prt.Partitions, prp)
	preq.Topics = append(preq.Topics, prt)
	return &wire.Request{Header: wire.RequestHeader{APIKey: 0, APIVersion: 9, CorrelationID: 2}, Body: preq, Reply: reply}
}

// fetchAll is a Fetch (max wait 10 s, min bytes 1) of every partition of
// "tail" from offsets.
func fetchAll(offsets []int64, reply func(*wire.Response)) *wire.Request {
	freq := kmsg.NewPtrFetchRequest()
	freq.Version, freq.ReplicaID, freq.MaxBytes, freq.MinBytes, freq.MaxWaitMillis, freq.SessionEpoch = 12, -1, 1<<20, 1, 10_000, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "tail"
	for p, off := range offsets {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = int32(p), off, 1<<20, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	freq.Topics = append(freq.Topics, rt)
	return &wire.Request{Header: wire.RequestHeader{APIKey: 1, APIVersion: 12, CorrelationID: 1}, Body: freq, Reply: reply}
}
