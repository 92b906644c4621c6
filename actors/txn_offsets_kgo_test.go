package actors_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// Java's producer sends AddOffsetsToTxn (sendOffsetsToTransaction)
// before it looks the group's coordinator up, so on a broker that has
// never had a group, __consumer_offsets does not exist yet when it
// arrives: the broker makes the topic and answers, as Kafka does, instead
// of COORDINATOR_NOT_AVAILABLE, which Java retries for ever.
func TestAddOffsetsToTxnBeforeAnyGroup(t *testing.T) {
	n := testkit.StartInProcess(t, "offsets.topic.num.partitions", "3", "transaction.state.log.num.partitions", "3")
	_, cl := n.Admin(t)
	ctx := ctxT(t)
	const id = "java-like"
	find := kmsg.NewPtrFindCoordinatorRequest()
	find.CoordinatorType, find.CoordinatorKeys = 1, []string{id}
	if resp, err := find.RequestWith(ctx, cl); err != nil || resp.Coordinators[0].ErrorCode != 0 {
		t.Fatalf("FindCoordinator: %+v %v", resp, err)
	}
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = kmsg.StringPtr(id), 60000
	ir, err := init.RequestWith(ctx, cl)
	if err != nil || ir.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %+v %v", ir, err)
	}
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = id, ir.ProducerID, ir.ProducerEpoch, "g"
	ar, err := add.RequestWith(ctx, cl)
	if err != nil || ar.ErrorCode != 0 {
		t.Fatalf("AddOffsetsToTxn before __consumer_offsets exists: %+v %v, want it made and the group added", ar, err)
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, ir.ProducerID, ir.ProducerEpoch, false
	if er, err := end.RequestWith(ctx, cl); err != nil || er.ErrorCode != 0 {
		t.Fatalf("EndTxn (abort): %+v %v", er, err)
	}
}
