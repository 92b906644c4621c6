package txn

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/wire/kerr"
)

// A remote coordinator's VerifyOnly answer is read as Kafka's
// AddPartitionsToTxnManager reads it.
func TestVerifyAnswer(t *testing.T) {
	tp := TopicPartition{Topic: "t", Partition: 1}
	resp := func(top kerr.Code, id string, part int32, code kerr.Code) *kmsg.AddPartitionsToTxnResponse {
		r := kmsg.NewPtrAddPartitionsToTxnResponse()
		r.ErrorCode = top.Int16()
		tx := kmsg.NewAddPartitionsToTxnResponseTransaction()
		tx.TransactionalID = id
		rt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
		rt.Topic = "t"
		rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
		rp.Partition, rp.ErrorCode = part, code.Int16()
		rt.Partitions = append(rt.Partitions, rp)
		tx.Topics = append(tx.Topics, rt)
		r.Transactions = append(r.Transactions, tx)
		return r
	}
	for _, c := range []struct {
		what string
		resp *kmsg.AddPartitionsToTxnResponse
		want kerr.Code
	}{
		{"in the transaction", resp(kerr.None, "app", 1, kerr.None), kerr.None},
		{"not in it", resp(kerr.None, "app", 1, kerr.TransactionAbortable), kerr.TransactionAbortable},
		{"top-level error", resp(kerr.CoordinatorLoadInProgress, "app", 1, kerr.None), kerr.CoordinatorLoadInProgress},
		{"hidden authorization failure", resp(kerr.ClusterAuthorizationFailed, "app", 1, kerr.None), kerr.InvalidTxnState},
		{"another partition only", resp(kerr.None, "app", 2, kerr.None), kerr.NetworkException},
		{"another id only", resp(kerr.None, "other", 1, kerr.None), kerr.NetworkException},
	} {
		if got := verifyAnswer(c.resp, "app", tp); got != c.want {
			t.Errorf("%s: %v, want %v", c.what, got, c.want)
		}
	}
}

// The coordinator of an id is the leader of its __transaction_state
// partition in the cluster view.
func TestCoordinatorOf(t *testing.T) {
	v := &cluster.View{Topics: map[string]*cluster.Topic{TransactionTopic: {Partitions: []*cluster.Partition{
		{Leader: 1}, {Leader: cluster.NoLeader}, {Leader: 3},
	}}}}
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		n, leader := coordinatorOf(v, id)
		want := v.Topics[TransactionTopic].Partitions[PartitionFor(id, 3)].Leader
		if n != PartitionFor(id, 3) || leader != want {
			t.Errorf("%s: partition %d leader %d, want %d and %d", id, n, leader, PartitionFor(id, 3), want)
		}
	}
	if _, leader := coordinatorOf(&cluster.View{}, "a"); leader != -1 {
		t.Errorf("without __transaction_state: leader %d", leader)
	}
	if _, leader := coordinatorOf(nil, "a"); leader != -1 {
		t.Errorf("without a view: leader %d", leader)
	}
}

// Verifications for another broker's coordinator go one request at a
// time; those asked while one is out share the next, a transactional id
// once with all its partitions; an older epoch of an id is refused at
// once, and the transport's failure answers every ask of its request.
func TestVerifyBatcher(t *testing.T) {
	type call struct {
		req     *kmsg.AddPartitionsToTxnRequest
		release chan error
	}
	calls := make(chan call)
	send := func(ctx context.Context, broker int32, req *kmsg.AddPartitionsToTxnRequest) (*kmsg.AddPartitionsToTxnResponse, error) {
		c := call{req: req, release: make(chan error)}
		calls <- c
		if err := <-c.release; err != nil {
			return nil, err
		}
		resp := kmsg.NewPtrAddPartitionsToTxnResponse()
		for _, tx := range req.Transactions {
			rtx := kmsg.NewAddPartitionsToTxnResponseTransaction()
			rtx.TransactionalID = tx.TransactionalID
			for _, tt := range tx.Topics {
				rt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
				rt.Topic = tt.Topic
				for _, p := range tt.Partitions {
					rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
					rp.Partition = p
					if p%2 == 1 {
						rp.ErrorCode = kerr.TransactionAbortable.Int16()
					}
					rt.Partitions = append(rt.Partitions, rp)
				}
				rtx.Topics = append(rtx.Topics, rt)
			}
			resp.Transactions = append(resp.Transactions, rtx)
		}
		return resp, nil
	}
	answers := make(chan string, 16)
	ask := func(b *verifyBatcher, id string, epoch int16, p int32) {
		b.add(send, 2, remoteAsk{id: id, pid: 7, epoch: epoch, tp: TopicPartition{"t", p}, done: func(code kerr.Code) {
			answers <- fmt.Sprintf("%s/%d/%d:%s", id, epoch, p, code.String())
		}})
	}
	answer := func() string {
		t.Helper()
		select {
		case a := <-answers:
			return a
		case <-time.After(10 * time.Second):
			t.Fatal("no answer")
			return ""
		}
	}
	next := func() call {
		t.Helper()
		select {
		case c := <-calls:
			return c
		case <-time.After(10 * time.Second):
			t.Fatal("no request")
			return call{}
		}
	}
	var b verifyBatcher
	ask(&b, "a", 0, 0)
	first := next()
	if n := len(first.req.Transactions); n != 1 || !first.req.Transactions[0].VerifyOnly {
		t.Fatalf("first request: %+v", first.req)
	}
	ask(&b, "a", 1, 2)
	ask(&b, "a", 1, 3)
	ask(&b, "a", 0, 4) // older than the epoch 1 asks: refused at once
	ask(&b, "b", 0, 5)
	if got := answer(); got != "a/0/4:INVALID_PRODUCER_EPOCH" {
		t.Fatalf("an older epoch's ask: %s", got)
	}
	first.release <- nil
	if got := answer(); got != "a/0/0:NONE" {
		t.Fatalf("first answer: %s", got)
	}
	second := next()
	if n := len(second.req.Transactions); n != 2 || len(second.req.Transactions[0].Topics[0].Partitions) != 2 {
		t.Fatalf("the batched request: %+v", second.req.Transactions)
	}
	second.release <- nil
	got := map[string]bool{}
	for range 3 {
		got[answer()] = true
	}
	for _, want := range []string{"a/1/2:NONE", "a/1/3:TRANSACTION_ABORTABLE", "b/0/5:TRANSACTION_ABORTABLE"} {
		if !got[want] {
			t.Fatalf("answers %v, want %s", got, want)
		}
	}
	ask(&b, "c", 0, 0)
	third := next()
	third.release <- errors.New("connection refused")
	if got := answer(); got != "c/0/0:NETWORK_EXCEPTION" {
		t.Fatalf("after a transport failure: %s", got)
	}
}
