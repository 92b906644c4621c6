package actors

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
	"github.com/samsa-io/samsa/wire/kerr"
)

// TestFetchParkedOnDeletedTopic: a fetch parked on a partition whose topic
// is deleted is answered as the partition goes, UNKNOWN_TOPIC_OR_PARTITION
// as Kafka answers, long before its max wait (a minute) and the gather
// guard (ten), and the DeleteTopics queued behind it is answered too.
func TestFetchParkedOnDeletedTopic(t *testing.T) {
	b := startBroker(t, t.TempDir(), Options{GatherTimeout: 10 * time.Minute})
	createTopicWith(t, b, "gone", 1)
	req := plainFetch(1, 60_000, 1<<20, 1<<20, 0)
	req.Topics[0].Topic = "gone"
	answered := make(chan *wire.Response, 1)
	b.Handle(&wire.Request{Header: wire.RequestHeader{APIKey: 1, APIVersion: 12, CorrelationID: 1}, Body: req,
		Reply: func(r *wire.Response) { answered <- r }})
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.Version = 6
	dt := kmsg.NewDeleteTopicsRequestTopic()
	name := "gone"
	dt.Topic = &name
	del.Topics = append(del.Topics, dt)
	if resp := call(t, b, del).(*kmsg.DeleteTopicsResponse); resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("delete: %d", resp.Topics[0].ErrorCode)
	}
	var r *wire.Response
	select {
	case r = <-answered:
	case <-time.After(20 * time.Second):
		t.Fatal("the parked fetch was not answered")
	}
	raw, err := r.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Done != nil {
		r.Done()
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 12
	if err := resp.ReadFrom(raw[9:]); err != nil {
		t.Fatal(err)
	}
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != kerr.UnknownTopicOrPartition.Int16() {
		t.Fatalf("partition answer %+v", p)
	}
}

func plainFetch(minBytes, maxWaitMs, maxBytes, partMax int32, offsets ...int64) *kmsg.FetchRequest {
	r := kmsg.NewPtrFetchRequest()
	r.Version, r.MinBytes, r.MaxWaitMillis, r.MaxBytes, r.SessionEpoch = 12, minBytes, maxWaitMs, maxBytes, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "t"
	for p, off := range offsets {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = int32(p), off, partMax
		rt.Partitions = append(rt.Partitions, rp)
	}
	r.Topics = append(r.Topics, rt)
	return r
}

// TestFetchMaxBytesCapsTheResponse: fetch.max.bytes caps a fetch's record
// data whatever its max_bytes asks (Kafka's 55 MiB by default): a fetch
// asking for 2 GiB of three partitions holding 3 x 192 KiB gets at most
// the cap past its first batch.
func TestFetchMaxBytesCapsTheResponse(t *testing.T) {
	const limit = 64 << 10
	b := startBrokerWith(t, t.TempDir(), map[string]string{"fetch.max.bytes": strconv.Itoa(limit)})
	createTopicWith(t, b, "t", 3, "samsa.flush.policy", "never")
	batch := batchtest.Sized(100, 150) // about 16 KiB
	for p := range int32(3) {
		for range 12 {
			done := make(chan *wire.Response, 1)
			b.Handle(produceOne("t", p, batch, func(r *wire.Response) { done <- r }))
			<-done
		}
	}
	req := plainFetch(1, 0, math.MaxInt32, math.MaxInt32, 0, 0, 0)
	resp := call(t, b, req).(*kmsg.FetchResponse)
	total := 0
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			total += len(p.RecordBatches)
		}
	}
	if total == 0 || total > limit+len(batch) {
		t.Fatalf("a fetch asking for everything got %d bytes; fetch.max.bytes is %d (plus at most one batch of %d)", total, limit, len(batch))
	}
}
