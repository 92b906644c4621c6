package partition

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
	"github.com/samsa-io/samsa/wire/kerr"
)

type verifyCall struct {
	id    string
	pid   int64
	epoch int16
	done  func(kerr.Code)
}

// The shell's side of KIP-890: a batch that opens a transaction waits
// for its coordinator while the producer's later batches wait behind it
// (and other producers' go on); the coordinator's NONE appends them in
// order, an error answers the batch as Kafka does, and a closing log
// answers what still waits.
func TestVerificationInTheShell(t *testing.T) {
	dir, err := segment.OpenDir(t.TempDir(), segment.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	l, _, err := dir.Open("t", 0, segment.Config{FlushPolicy: segment.FlushNever})
	if err != nil {
		t.Fatal(err)
	}
	var calls []verifyCall
	var posted []*verified
	link := &TxnLink{}
	link.SetVerifier(func(id string, pid int64, epoch int16, topic string, partition int32, done func(kerr.Code)) {
		if topic != "t" || partition != 0 {
			t.Errorf("verifying %s-%d", topic, partition)
		}
		calls = append(calls, verifyCall{id, pid, epoch, done})
	})
	p := &partitionActor{plog: l, dir: dir, log: quiet, spec: metadata.PartitionSpec{Topic: "t"}, txn: link}
	p.post = func(m any) { posted = append(posted, m.(*verified)) }
	rules := defaultRules(t)
	rules.Transactions = true
	p.core, _ = NewCore(rules, nil, -1, l.LogStartOffset(), testNow, p.logState())

	send := func(pid int64, seq int32, transactional bool) *kmsg.ProduceResponseTopicPartition {
		out := &kmsg.ProduceResponseTopicPartition{BaseOffset: -2} // -2: not answered
		opts := []batchtest.Option{batchtest.Producer(pid, 0, seq)}
		if transactional {
			opts = append(opts, batchtest.Attributes(wire.AttrTransactional))
		}
		p.produce(&ProduceRequest{Records: batchtest.Plain(1, testNow, opts...), Version: 11, Acks: -1, TransactionalID: "app", Out: out})
		return out
	}
	answer := func(code kerr.Code) {
		t.Helper()
		calls[len(calls)-1].done(code)
		if len(posted) != 1 {
			t.Fatalf("%d answers posted, want 1", len(posted))
		}
		v := posted[0]
		posted = nil
		p.onVerified(v)
	}

	a := send(7, 0, true)
	b := send(7, 1, true)
	c := send(8, 0, false)
	if len(calls) != 1 || calls[0].id != "app" || calls[0].pid != 7 || calls[0].epoch != 0 {
		t.Fatalf("verifications %+v, want one of producer 7", calls)
	}
	if a.BaseOffset != -2 || b.BaseOffset != -2 || c.BaseOffset != 0 {
		t.Fatalf("before the answer: offsets %d %d %d, want unanswered, unanswered, 0", a.BaseOffset, b.BaseOffset, c.BaseOffset)
	}
	answer(kerr.None)
	if a.ErrorCode != 0 || a.BaseOffset != 1 || b.ErrorCode != 0 || b.BaseOffset != 2 || len(calls) != 1 {
		t.Fatalf("after the answer: %+v %+v, %d verifications", a, b, len(calls))
	}
	if lso := p.core.LastStableOffset(); lso != 1 {
		t.Fatalf("last stable offset %d, want 1 (producer 7's transaction)", lso)
	}

	d := send(9, 0, true)
	answer(kerr.ConcurrentTransactions)
	if d.ErrorCode != int16(kerr.NotEnoughReplicas) || d.BaseOffset != -1 {
		t.Fatalf("a coordinator that cannot tell: %+v, want NOT_ENOUGH_REPLICAS", d)
	}
	e := send(10, 0, true)
	answer(kerr.TransactionAbortable)
	if e.ErrorCode != int16(kerr.TransactionAbortable) {
		t.Fatalf("a partition not in the transaction: %+v", e)
	}

	f := send(11, 0, true)
	g := send(11, 1, true)
	p.dropVerifies()
	for _, out := range []*kmsg.ProduceResponseTopicPartition{f, g} {
		if out.ErrorCode != int16(kerr.NotLeaderOrFollower) {
			t.Fatalf("waiting when the log closed: %+v", out)
		}
	}
	calls[len(calls)-1].done(kerr.None) // too late: dropped
	p.onVerified(posted[0])
	if end := l.LogEndOffset(); end != 3 {
		t.Fatalf("log end %d, want 3", end)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
