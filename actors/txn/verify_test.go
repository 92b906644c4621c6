package txn

import (
	"testing"

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
