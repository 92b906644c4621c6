package partition

import (
	"testing"

	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
	"github.com/samsa-io/samsa/wire/kerr"
)

// verifiedProduce offers a transactional batch of pid at seq with
// verification on (guard 0: not verified yet).
func (l *txnLog) verifiedProduce(pid int64, seq int32, guard uint64) (*Append, Effects) {
	l.t.Helper()
	batch := batchtest.Build([]batchtest.Record{{Value: []byte("v"), Timestamp: testNow}},
		batchtest.Producer(pid, 0, seq), batchtest.Attributes(wire.AttrTransactional))
	return l.c.Produce(Produce{Records: batch, Version: 11, Acks: -1, Ticket: "p", TransactionalID: "app", Verify: true, Guard: guard}, testNow, l.state())
}

// A batch that would open its producer's transaction waits for the
// coordinator; verified, it is appended and the guard is gone; the
// producer's next batches, its transaction open, are not verified again.
func TestVerificationBeforeTheFirstBatch(t *testing.T) {
	l := newTxnLog(t)
	a, fx := l.verifiedProduce(7, 0, 0)
	if a != nil || fx.Verify == nil || len(fx.Acks) != 0 {
		t.Fatalf("first batch: append %v, effects %+v; want a verification", a != nil, fx)
	}
	need := fx.Verify
	if need.ProducerID != 7 || need.TransactionalID != "app" || need.Guard == 0 || l.c.Guards() != 1 {
		t.Fatalf("verification %+v, guards %d", need, l.c.Guards())
	}
	a, fx = l.verifiedProduce(7, 0, need.Guard)
	if a == nil {
		t.Fatalf("verified batch refused: %+v", fx.Acks)
	}
	l.append(a)
	if l.c.Guards() != 0 {
		t.Fatalf("guards after the append: %d", l.c.Guards())
	}
	if a, fx = l.verifiedProduce(7, 1, 0); a == nil || fx.Verify != nil {
		t.Fatalf("second batch of an open transaction: %+v", fx)
	}
	// Without a transactional id (a coordinator's other appends), or
	// verification off: no verification.
	batch := batchtest.Build([]batchtest.Record{{Value: []byte("v"), Timestamp: testNow}},
		batchtest.Producer(8, 0, 0), batchtest.Attributes(wire.AttrTransactional))
	for _, p := range []Produce{
		{Records: batch, Version: 9, Acks: -1, Ticket: "c", Verify: true, Coordinator: true},
		{Records: batch, Version: 11, Acks: -1, Ticket: "c", TransactionalID: "app"},
		{Records: batch, Version: 11, Acks: -1, Ticket: "c", Verify: true},
	} {
		if a, fx := l.c.Produce(p, testNow, l.state()); a == nil || fx.Verify != nil {
			t.Fatalf("%+v: %+v", p, fx)
		}
	}
}

// Kafka's ABA case: the coordinator verified the batch, but a marker
// ended the transaction before the batch reached the log; it must not
// open a transaction nobody will end.
func TestVerificationGuardClearedByMarker(t *testing.T) {
	l := newTxnLog(t)
	_, fx := l.verifiedProduce(7, 0, 0)
	guard := fx.Verify.Guard
	if code, _ := l.marker(7, false, 1); code != kerr.None {
		t.Fatalf("marker: %v", code)
	}
	a, fx := l.verifiedProduce(7, 0, guard)
	if a != nil || len(fx.Acks) != 1 || fx.Acks[0].Code != kerr.InvalidTxnState {
		t.Fatalf("batch after its transaction ended: %+v", fx.Acks)
	}
	if lso := l.c.LastStableOffset(); lso != l.end {
		t.Fatalf("last stable offset %d, log end %d: a transaction hangs", lso, l.end)
	}
	// A retry verifies again, under a new guard.
	_, fx = l.verifiedProduce(7, 0, 0)
	if fx.Verify == nil || fx.Verify.Guard == guard {
		t.Fatalf("retry: %+v", fx.Verify)
	}
}

// While a lower sequence waits for its verification, a higher one of the
// same epoch is refused even verified: appended first, it would fail the
// lower one for ever.
func TestVerificationKeepsTheLowestSequence(t *testing.T) {
	l := newTxnLog(t)
	_, fx := l.verifiedProduce(7, 5, 0)
	guard := fx.Verify.Guard
	if _, fx = l.verifiedProduce(7, 3, 0); fx.Verify == nil || fx.Verify.Guard != guard {
		t.Fatalf("second verification of the producer: %+v (want guard %d)", fx.Verify, guard)
	}
	a, fx := l.verifiedProduce(7, 5, guard)
	if a != nil || fx.Acks[0].Code != kerr.OutOfOrderSequenceNumber {
		t.Fatalf("higher sequence first: %+v", fx.Acks)
	}
	if a, fx = l.verifiedProduce(7, 3, guard); a == nil {
		t.Fatalf("lowest sequence: %+v", fx.Acks)
	}
}

// producer.id.expiration.ms forgets idle producers without a transaction
// open, and verifications never answered.
func TestExpireProducers(t *testing.T) {
	l := newTxnLog(t)
	if code := l.produce(1, 0, false, 1); code != kerr.None {
		t.Fatal(code)
	}
	if code := l.produce(2, 0, true, 1); code != kerr.None { // a transaction open: kept
		t.Fatal(code)
	}
	l.verifiedProduce(3, 0, 0)
	if n := l.c.ExpireProducers(testNow+999, 1000); n != 0 || l.c.Guards() != 1 {
		t.Fatalf("expired %d, guards %d before the age", n, l.c.Guards())
	}
	if n := l.c.ExpireProducers(testNow+1000, 1000); n != 1 || l.c.Guards() != 0 {
		t.Fatalf("expired %d, guards %d at the age", n, l.c.Guards())
	}
	if _, ok := l.c.Producers().Producer(2); !ok {
		t.Fatal("the producer with a transaction open was forgotten")
	}
}

// The producer is answered as Kafka 3.9's leader answers.
func TestVerificationError(t *testing.T) {
	for _, c := range []struct {
		in      kerr.Code
		version int16
		want    kerr.Code
	}{
		{kerr.TransactionAbortable, 11, kerr.TransactionAbortable},
		{kerr.TransactionAbortable, 10, kerr.InvalidTxnState},
		{kerr.ProducerFenced, 11, kerr.InvalidProducerEpoch},
		{kerr.ConcurrentTransactions, 9, kerr.NotEnoughReplicas},
		{kerr.NotCoordinator, 9, kerr.NotEnoughReplicas},
		{kerr.CoordinatorLoadInProgress, 9, kerr.NotEnoughReplicas},
		{kerr.NetworkException, 9, kerr.NotEnoughReplicas},
		{kerr.InvalidProducerIDMapping, 9, kerr.InvalidProducerIDMapping},
	} {
		if got, _ := VerificationError(c.in, c.version); got != c.want {
			t.Errorf("%v at produce v%d: %v, want %v", c.in, c.version, got, c.want)
		}
	}
}

// The group coordinator's TxnOffsetCommit batch (transactional, no
// sequence, written for the producer) is verified like a client's.
func TestVerificationOfACoordinatorsBatch(t *testing.T) {
	l := newTxnLog(t)
	batch := batchtest.Build([]batchtest.Record{{Key: []byte("k"), Value: []byte("v"), Timestamp: testNow}},
		batchtest.Producer(7, 0, -1), batchtest.Attributes(wire.AttrTransactional))
	p := Produce{Records: batch, Version: 9, Acks: -1, Ticket: "o", Coordinator: true, TransactionalID: "app", Verify: true}
	a, fx := l.c.Produce(p, testNow, l.state())
	if a != nil || fx.Verify == nil {
		t.Fatalf("a coordinator's transactional batch: %+v, want a verification", fx)
	}
	p.Guard = fx.Verify.Guard
	if a, fx = l.c.Produce(p, testNow, l.state()); a == nil {
		t.Fatalf("verified: %+v", fx.Acks)
	}
}
