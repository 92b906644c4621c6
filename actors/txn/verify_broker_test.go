package txn_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
)

// KIP-890 part 1 on a broker, with raw requests as a producer sends
// them: a transactional batch to a partition its transaction does not
// have is refused (TRANSACTION_ABORTABLE for Produce v11,
// INVALID_TXN_STATE for older versions) instead of opening a
// transaction no coordinator knows; AddPartitionsToTxn v4 VerifyOnly
// answers per partition without adding; and a late batch of a
// committed transaction cannot hang the partition's last stable offset.
func TestTransactionVerification(t *testing.T) {
	n := testkit.StartInProcess(t, "samsa.transactions.enable", "true", "transaction.state.log.num.partitions", "2")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	old, err := kgo.NewClient(kgo.SeedBrokers(n.Addr), kgo.MaxVersions(kversion.V2_8_0())) // Produce v9
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopics(ctx, 2, 1, nil, "v"); err != nil {
		t.Fatal(err)
	}

	// InitProducerId, retried while __transaction_state is made.
	var pid int64
	var epoch int16
	for deadline := time.Now().Add(30 * time.Second); ; {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr("late"), 60_000
		resp, err := req.RequestWith(ctx, cl)
		if err == nil && resp.ErrorCode == 0 {
			pid, epoch = resp.ProducerID, resp.ProducerEpoch
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("InitProducerId: %v %+v", err, resp)
		}
		pause(ctx, t)
	}

	produce := func(c *kgo.Client, part, seq int32) int16 {
		t.Helper()
		req := kmsg.NewPtrProduceRequest()
		req.TransactionID, req.Acks, req.TimeoutMillis = kmsg.StringPtr("late"), -1, 10_000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "v"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = part
		rp.Records = batchtest.Build([]batchtest.Record{{Value: []byte("x"), Timestamp: time.Now().UnixMilli()}},
			batchtest.Producer(pid, epoch, seq), batchtest.Attributes(wire.AttrTransactional))
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	verify := func(part int32) int16 {
		t.Helper()
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
		tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = "late", pid, epoch, true
		tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		tt.Topic, tt.Partitions = "v", []int32{part}
		tx.Topics = append(tx.Topics, tt)
		req.Transactions = append(req.Transactions, tx)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Version < 4 || len(resp.Transactions) != 1 {
			t.Fatalf("VerifyOnly answered at v%d: %+v", resp.Version, resp)
		}
		return resp.Transactions[0].Topics[0].Partitions[0].ErrorCode
	}
	is := func(what string, got int16, want error) {
		t.Helper()
		if err := kerr.ErrorForCode(got); err != want {
			t.Fatalf("%s: %v, want %v", what, err, want)
		}
	}

	is("produce v11 before AddPartitionsToTxn", produce(cl, 0, 0), kerr.TransactionAbortable)
	is("produce v9 before AddPartitionsToTxn", produce(old, 0, 0), kerr.InvalidTxnState)
	is("VerifyOnly before AddPartitionsToTxn", verify(0), kerr.TransactionAbortable)
	is("VerifyOnly did not add the partition", verify(0), kerr.TransactionAbortable)

	// The group coordinator's transactional offsets are verified too: a
	// TxnOffsetCommit without AddOffsetsToTxn is refused.
	txo := kmsg.NewPtrTxnOffsetCommitRequest()
	txo.TransactionalID, txo.Group, txo.ProducerID, txo.ProducerEpoch, txo.Generation = "late", "g", pid, epoch, -1
	tt := kmsg.NewTxnOffsetCommitRequestTopic()
	tt.Topic = "v"
	tp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	tp.Partition, tp.Offset = 0, 1
	tt.Partitions = append(tt.Partitions, tp)
	txo.Topics = append(txo.Topics, tt)
	txoResp, err := txo.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	is("TxnOffsetCommit before AddOffsetsToTxn", txoResp.Topics[0].Partitions[0].ErrorCode, kerr.InvalidTxnState)

	add := kmsg.NewPtrAddPartitionsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch = "late", pid, epoch
	at := kmsg.NewAddPartitionsToTxnRequestTopic()
	at.Topic, at.Partitions = "v", []int32{0}
	add.Topics = append(add.Topics, at)
	addResp, err := add.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	is("AddPartitionsToTxn", addResp.Topics[0].Partitions[0].ErrorCode, nil)
	is("VerifyOnly after the add", verify(0), nil)
	is("VerifyOnly of a partition not added", verify(1), kerr.TransactionAbortable)
	is("produce after AddPartitionsToTxn", produce(cl, 0, 0), nil)
	is("next batch of the open transaction", produce(cl, 0, 1), nil)

	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = "late", pid, epoch, true
	endResp, err := end.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	is("EndTxn", endResp.ErrorCode, nil)
	for deadline := time.Now().Add(20 * time.Second); ; {
		d, err := adm.DescribeTransactions(ctx, "late")
		if err == nil && d["late"].State == "CompleteCommit" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("transaction not completed: %+v %v", d, err)
		}
		pause(ctx, t)
	}
	// A late batch of the committed transaction (a retry that lost its
	// way) finds no transaction to join.
	is("late batch after the commit", produce(cl, 0, 2), kerr.TransactionAbortable)
	ends, err := adm.ListEndOffsets(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	stable, err := adm.ListCommittedOffsets(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	e, _ := ends.Lookup("v", 0)
	s, _ := stable.Lookup("v", 0)
	if e.Offset != 3 || s.Offset != 3 {
		t.Fatalf("end offset %d, last stable offset %d; want 3 and 3 (two records and the marker, nothing hanging)", e.Offset, s.Offset)
	}
}

// pause waits a little before a poll's next try (or fails at the test's
// deadline).
func pause(ctx context.Context, t *testing.T) {
	t.Helper()
	select {
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	case <-time.After(20 * time.Millisecond):
	}
}

// transaction.partition.verification.enable is dynamic: set false
// (cluster-wide, through IncrementalAlterConfigs) the leader appends a
// transactional batch without asking, as before KIP-890; set true again
// it asks.
func TestTransactionVerificationSwitch(t *testing.T) {
	n := testkit.StartInProcess(t, "samsa.transactions.enable", "true", "transaction.state.log.num.partitions", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "s"); err != nil {
		t.Fatal(err)
	}
	var pid int64
	var epoch int16
	for {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr("switch"), 60_000
		resp, err := req.RequestWith(ctx, cl)
		if err == nil && resp.ErrorCode == 0 {
			pid, epoch = resp.ProducerID, resp.ProducerEpoch
			break
		}
		pause(ctx, t)
	}
	produce := func(seq int32) error {
		req := kmsg.NewPtrProduceRequest()
		req.TransactionID, req.Acks, req.TimeoutMillis = kmsg.StringPtr("switch"), -1, 10_000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "s"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = batchtest.Build([]batchtest.Record{{Value: []byte("x"), Timestamp: time.Now().UnixMilli()}},
			batchtest.Producer(pid, epoch, seq), batchtest.Attributes(wire.AttrTransactional))
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
	}
	set := func(v string) {
		t.Helper()
		resp, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "transaction.partition.verification.enable", Value: kmsg.StringPtr(v)}})
		if err == nil {
			for _, r := range resp {
				if r.Err != nil {
					err = r.Err
				}
			}
		}
		if err != nil {
			t.Fatalf("setting verification %s: %v", v, err)
		}
	}
	if err := produce(0); err != kerr.TransactionAbortable {
		t.Fatalf("verification on by default: %v", err)
	}
	set("false")
	if err := produce(0); err != nil {
		t.Fatalf("verification off: %v, want the batch appended unasked", err)
	}
	set("true")
	// The transaction is open on the partition now (unknown to the
	// coordinator, the hazard KIP-890 removes): further batches are not
	// asked about; a new producer epoch's are.
	if err := produce(1); err != nil {
		t.Fatalf("a batch of the open transaction: %v", err)
	}
}

// AddPartitionsToTxn v4 batches transactions, each answered on its own:
// an add, a VerifyOnly, and one naming a partition that does not exist
// (UNKNOWN_TOPIC_OR_PARTITION for it, OPERATION_NOT_ATTEMPTED for the
// others, nothing added).
func TestAddPartitionsToTxnBatched(t *testing.T) {
	n := testkit.StartInProcess(t, "samsa.transactions.enable", "true", "transaction.state.log.num.partitions", "2")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopics(ctx, 2, 1, nil, "b"); err != nil {
		t.Fatal(err)
	}
	type producer struct {
		pid   int64
		epoch int16
	}
	ids := map[string]producer{}
	for _, id := range []string{"b1", "b2", "b3"} {
		for {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr(id), 60_000
			resp, err := req.RequestWith(ctx, cl)
			if err == nil && resp.ErrorCode == 0 {
				ids[id] = producer{resp.ProducerID, resp.ProducerEpoch}
				break
			}
			pause(ctx, t)
		}
	}
	batch := func(verify map[string]bool, parts map[string][]int32) map[string]map[int32]error {
		t.Helper()
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		for _, id := range []string{"b1", "b2", "b3"} {
			if parts[id] == nil {
				continue
			}
			tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
			tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = id, ids[id].pid, ids[id].epoch, verify[id]
			tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
			tt.Topic, tt.Partitions = "b", parts[id]
			tx.Topics = append(tx.Topics, tt)
			req.Transactions = append(req.Transactions, tx)
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]map[int32]error{}
		for _, tx := range resp.Transactions {
			out[tx.TransactionalID] = map[int32]error{}
			for _, rt := range tx.Topics {
				for _, rp := range rt.Partitions {
					out[tx.TransactionalID][rp.Partition] = kerr.ErrorForCode(rp.ErrorCode)
				}
			}
		}
		return out
	}
	got := batch(map[string]bool{"b2": true}, map[string][]int32{"b1": {0}, "b2": {0}, "b3": {1, 7}})
	if got["b1"][0] != nil || got["b2"][0] != kerr.TransactionAbortable ||
		got["b3"][1] != kerr.OperationNotAttempted || got["b3"][7] != kerr.UnknownTopicOrPartition {
		t.Fatalf("batched answer %v", got)
	}
	got = batch(map[string]bool{"b1": true, "b3": true}, map[string][]int32{"b1": {0, 1}, "b3": {1}})
	if got["b1"][0] != nil || got["b1"][1] != kerr.TransactionAbortable || got["b3"][1] != kerr.TransactionAbortable {
		t.Fatalf("after the batch: %v (b1 has partition 0 only, b3 nothing)", got)
	}
}
