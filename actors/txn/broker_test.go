package txn_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// A franz-go transactional producer against a broker that serves
// transactions: a committed and an aborted transaction leave their
// records and one marker per partition in the log, the coordinator
// reports the states through DescribeTransactions and ListTransactions,
// a second producer with the same id fences the first, and the state
// survives a restart.
func TestTransactionsWithFranzGo(t *testing.T) {
	dir := t.TempDir()
	kv := []string{"log.dirs", dir, "samsa.transactions.enable", "true", "transaction.state.log.num.partitions", "3"}
	n := testkit.StartInProcess(t, kv...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm, _ := n.Admin(t)
	if _, err := adm.CreateTopics(ctx, 2, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	producer := func(id string) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr), kgo.TransactionalID(id), kgo.DefaultProduceTopic("t"),
			kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.TransactionTimeout(30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	transact := func(cl *kgo.Client, records int, commit kgo.TransactionEndTry) error {
		if err := cl.BeginTransaction(); err != nil {
			return err
		}
		for i := range records {
			if err := cl.ProduceSync(ctx, kgo.SliceRecord([]byte{byte(i)})).FirstErr(); err != nil {
				return err
			}
		}
		return cl.EndTransaction(ctx, commit)
	}
	first := producer("app")
	if err := transact(first, 10, kgo.TryCommit); err != nil {
		t.Fatalf("committed transaction: %v", err)
	}
	if err := transact(first, 6, kgo.TryAbort); err != nil {
		t.Fatalf("aborted transaction: %v", err)
	}

	described := func(what string) kadm.DescribedTransaction {
		t.Helper()
		d, err := adm.DescribeTransactions(ctx, "app")
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		tx, ok := d["app"]
		if !ok || tx.Err != nil {
			t.Fatalf("%s: %+v", what, d)
		}
		return tx
	}
	// EndTxn is answered once the decision is durable; the markers follow
	// (the state then moves from PrepareAbort to CompleteAbort).
	settled := func(what, want string) kadm.DescribedTransaction {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; {
			tx := described(what)
			if tx.State == want {
				return tx
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: state %s, want %s", what, tx.State, want)
			}
			select {
			case <-ctx.Done():
				t.Fatal(ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	if tx := settled("after the abort", "CompleteAbort"); tx.ProducerEpoch != 0 {
		t.Fatalf("after the abort: epoch %d, want 0", tx.ProducerEpoch)
	}

	// 16 records and, on each of the 2 partitions, a COMMIT and an ABORT.
	ends, err := adm.ListEndOffsets(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	ends.Each(func(o kadm.ListedOffset) { sum += o.Offset })
	if sum != 16+4 {
		t.Fatalf("end offsets sum to %d, want 20 (16 records, 4 markers)", sum)
	}
	listed, err := adm.ListTransactions(ctx, nil, nil)
	if err != nil || len(listed) != 1 {
		t.Fatalf("ListTransactions: %+v, %v", listed, err)
	}

	// A second producer with the same id fences the first.
	second := producer("app")
	if err := transact(second, 2, kgo.TryCommit); err != nil {
		t.Fatalf("second producer: %v", err)
	}
	err = transact(first, 1, kgo.TryCommit)
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("the fenced producer's transaction: %v, want PRODUCER_FENCED", err)
	}

	// The coordinator's state is in __transaction_state: a restart loads it.
	epoch := settled("before the restart", "CompleteCommit").ProducerEpoch
	n.Restart()
	adm, _ = n.Admin(t)
	if tx := described("after the restart"); tx.State != "CompleteCommit" || tx.ProducerEpoch != epoch {
		t.Fatalf("after the restart: state %s epoch %d, want CompleteCommit at epoch %d", tx.State, tx.ProducerEpoch, epoch)
	}
	third := producer("app")
	if err := transact(third, 1, kgo.TryCommit); err != nil {
		t.Fatalf("a producer after the restart: %v", err)
	}
}

// franz-go's GroupTransactSession (consume, transform, produce, commit
// the consumed offsets in the same transaction): the group's offsets
// become visible when the transaction commits, through the marker on
// __consumer_offsets, and survive a restart.
func TestConsumeTransformProduceWithFranzGo(t *testing.T) {
	dir := t.TempDir()
	n := testkit.StartInProcess(t, "log.dirs", dir, "samsa.transactions.enable", "true",
		"transaction.state.log.num.partitions", "3", "offsets.topic.num.partitions", "3", "group.initial.rebalance.delay.ms", "0")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm, _ := n.Admin(t)
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "in", "out"); err != nil {
		t.Fatal(err)
	}
	plain, err := kgo.NewClient(kgo.SeedBrokers(n.Addr), kgo.DefaultProduceTopic("in"))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	const total = 20
	for i := range total {
		if err := plain.ProduceSync(ctx, kgo.SliceRecord([]byte{byte(i)})).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(n.Addr), kgo.TransactionalID("etl"),
		kgo.ConsumerGroup("g"), kgo.ConsumeTopics("in"), kgo.DefaultProduceTopic("out"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.TransactionTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	for done := 0; done < total; {
		fs := sess.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("poll: %v", err)
		}
		if err := sess.Begin(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			sess.Produce(ctx, kgo.SliceRecord(append([]byte("out-"), r.Value...)), nil)
			done++
		})
		committed, err := sess.End(ctx, kgo.TryCommit)
		if err != nil || !committed {
			t.Fatalf("end: committed %v, %v", committed, err)
		}
	}

	committedOffset := func(what string) int64 {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; {
			offs, err := adm.FetchOffsets(ctx, "g")
			if err == nil {
				if o, ok := offs.Lookup("in", 0); ok && o.At == total {
					return o.At
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: group offsets %+v (%v), want in-0 at %d", what, offs, err, total)
			}
			select {
			case <-ctx.Done():
				t.Fatal(ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	committedOffset("after the last commit")
	sess.Close()
	n.Restart()
	adm, _ = n.Admin(t)
	committedOffset("after a restart")
}

// read_committed consumers (franz-go) see committed transactions only:
// an aborted transaction's records are dropped (the fetch lists it), and
// an open transaction holds them back at its first offset (the last
// stable offset) while read_uncommitted consumers read on.
func TestReadCommittedWithFranzGo(t *testing.T) {
	n := testkit.StartInProcess(t, "samsa.transactions.enable", "true", "transaction.state.log.num.partitions", "3")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm, _ := n.Admin(t)
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	tx, err := kgo.NewClient(kgo.SeedBrokers(n.Addr), kgo.TransactionalID("rc"), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	write := func(value string, end kgo.TransactionEndTry, finish bool) {
		t.Helper()
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := tx.ProduceSync(ctx, kgo.StringRecord(fmt.Sprintf("%s-%d", value, i))).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if finish {
			if err := tx.EndTransaction(ctx, end); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("committed", kgo.TryCommit, true)
	write("aborted", kgo.TryAbort, true)
	write("committed-too", kgo.TryCommit, true)
	write("open", kgo.TryCommit, false) // left open

	read := func(level kgo.IsolationLevel, want int) []string {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr), kgo.ConsumeTopics("t"), kgo.FetchIsolationLevel(level),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		var got []string
		for len(got) < want {
			fs := cl.PollFetches(ctx)
			if err := fs.Err(); err != nil {
				t.Fatalf("fetch: %v (have %v)", err, got)
			}
			fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		}
		// Nothing more arrives within a few polls' time.
		short, stop := context.WithTimeout(ctx, 500*time.Millisecond)
		defer stop()
		cl.PollFetches(short).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		return got
	}
	committed := read(kgo.ReadCommitted(), 6)
	if want := "committed-0 committed-1 committed-2 committed-too-0 committed-too-1 committed-too-2"; strings.Join(committed, " ") != want {
		t.Fatalf("read_committed read %v, want %s", committed, want)
	}
	if all := read(kgo.ReadUncommitted(), 12); len(all) != 12 {
		t.Fatalf("read_uncommitted read %d records, want 12 (aborted and open ones too)", len(all))
	}
	// ListOffsets at read_committed stops at the open transaction: three
	// transactions of 3 records and a marker each, then the open one at 12.
	ends, err := adm.ListEndOffsets(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	stable, err := adm.ListCommittedOffsets(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup("t", 0)
	lso, _ := stable.Lookup("t", 0)
	if end.Offset != 15 || lso.Offset != 12 {
		t.Fatalf("end offset %d, last stable offset %d; want 15 and 12", end.Offset, lso.Offset)
	}
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if after := read(kgo.ReadCommitted(), 9); len(after) != 9 {
		t.Fatalf("after the open transaction committed: %v, want 9 records", after)
	}
}
