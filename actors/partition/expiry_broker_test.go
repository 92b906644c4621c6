package partition_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/wire/batchtest"
)

// producer.id.expiration.ms on a broker: an idempotent producer that
// stops writing is forgotten by the partition at a retention check once
// it has been silent that long, so its next batch is taken at any
// sequence (before, a gap in its sequence is OUT_OF_ORDER_SEQUENCE_NUMBER).
func TestProducerIDExpiration(t *testing.T) {
	n := testkit.StartInProcess(t, "producer.id.expiration.ms", "1500", "log.retention.check.interval.ms", "100")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopics(ctx, 1, 1, nil, "e"); err != nil {
		t.Fatal(err)
	}
	init, err := kmsg.NewPtrInitProducerIDRequest().RequestWith(ctx, cl)
	if err != nil || init.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v %+v", err, init)
	}
	produce := func(seq int32) error {
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = -1, 10_000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "e"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = batchtest.Build([]batchtest.Record{{Value: []byte("x"), Timestamp: time.Now().UnixMilli()}},
			batchtest.Producer(init.ProducerID, init.ProducerEpoch, seq))
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
	}
	if err := produce(0); err != nil {
		t.Fatal(err)
	}
	wrote := time.Now()
	if err := produce(50); err != kerr.OutOfOrderSequenceNumber {
		t.Fatalf("a gap in the sequence of a known producer: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", err)
	}
	for {
		err := produce(50)
		if err == nil {
			break
		}
		if err != kerr.OutOfOrderSequenceNumber {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			t.Fatal("the idle producer was never forgotten")
		case <-time.After(50 * time.Millisecond):
		}
	}
	if idle := time.Since(wrote); idle < 1500*time.Millisecond {
		t.Fatalf("the producer was forgotten after %v, before producer.id.expiration.ms", idle)
	}
}
