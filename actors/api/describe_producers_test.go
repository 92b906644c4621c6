package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// DescribeProducers lists what partitions' producer state holds: an
// idempotent producer with its last sequence, a transactional one with
// its open transaction's first offset until the commit marker clears it
// (and the marker's coordinator epoch); an unknown topic, a partition
// past the topic's end and a malformed name get Kafka's codes.
func TestDescribeProducers(t *testing.T) {
	n := testkit.StartInProcess(t, "samsa.transactions.enable", "true", "transaction.state.log.num.partitions", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm, cl := n.Admin(t)
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "dp"); err != nil {
		t.Fatal(err)
	}
	idem := n.Client(t, kgo.DefaultProduceTopic("dp"))
	for i := range 3 {
		if err := idem.ProduceSync(ctx, kgo.StringRecord("idempotent")).FirstErr(); err != nil {
			t.Fatalf("idempotent record %d: %v", i, err)
		}
	}
	txn := n.Client(t, kgo.DefaultProduceTopic("dp"), kgo.TransactionalID("dp-txn"))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, kgo.StringRecord("in a transaction")).FirstErr(); err != nil {
		t.Fatal(err)
	}

	describe := func() *kmsg.DescribeProducersResponse {
		t.Helper()
		req := kmsg.NewPtrDescribeProducersRequest()
		for _, tp := range []struct {
			topic string
			parts []int32
		}{{"dp", []int32{0, 5}}, {"no-such-topic", []int32{0}}, {"bad/name", []int32{0}}} {
			rt := kmsg.NewDescribeProducersRequestTopic()
			rt.Topic, rt.Partitions = tp.topic, tp.parts
			req.Topics = append(req.Topics, rt)
		}
		// To the broker itself: kgo would split the request by leader
		// and fail it for the unknown topic before sending.
		brokers := cl.DiscoveredBrokers()
		if len(brokers) != 1 {
			t.Fatalf("brokers %v", brokers)
		}
		raw, err := brokers[0].Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		resp := raw.(*kmsg.DescribeProducersResponse)
		if len(resp.Topics) != 3 || len(resp.Topics[0].Partitions) != 2 {
			t.Fatalf("answer shape: %+v", resp.Topics)
		}
		for _, want := range []struct {
			topic, part int
			code        int16
		}{{0, 0, 0}, {0, 1, kerr.UnknownTopicOrPartition.Code}, {1, 0, kerr.UnknownTopicOrPartition.Code}, {2, 0, kerr.InvalidTopicException.Code}} {
			rt := resp.Topics[want.topic]
			if p := rt.Partitions[want.part]; p.ErrorCode != want.code {
				t.Errorf("%s partition %d: code %d, want %d", rt.Topic, p.Partition, p.ErrorCode, want.code)
			}
		}
		return resp
	}

	// Two producers; the idempotent one wrote offsets 0-2 at sequences
	// 0-2, the transactional one offset 3.
	resp := describe()
	prods := resp.Topics[0].Partitions[0].ActiveProducers
	if len(prods) != 2 {
		t.Fatalf("producers %+v, want 2", prods)
	}
	idemState, txnState := prods[0], prods[1]
	if idemState.LastSequence != 2 || idemState.CurrentTxnStartOffset != -1 || idemState.LastTimestamp <= 0 {
		t.Errorf("idempotent producer %+v: want last sequence 2, no transaction, a timestamp", idemState)
	}
	if txnState.LastSequence != 0 || txnState.CurrentTxnStartOffset != 3 {
		t.Errorf("transactional producer %+v: want last sequence 0, transaction from offset 3", txnState)
	}

	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	prods = describe().Topics[0].Partitions[0].ActiveProducers
	if len(prods) != 2 || prods[1].ProducerID != txnState.ProducerID || prods[1].CurrentTxnStartOffset != -1 ||
		prods[1].LastTimestamp < txnState.LastTimestamp {
		t.Errorf("after commit %+v: want the transactional producer with no open transaction", prods)
	}
}
