package partition

import (
	"testing"

	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
	"github.com/samsa-io/samsa/wire/kerr"
)

// txnLog drives a Core alone (high watermark = what is written, the
// policy acknowledging without fsync) with an in-memory log end.
type txnLog struct {
	t   *testing.T
	c   *Core
	end int64
}

func newTxnLog(t *testing.T) *txnLog {
	rules := RulesOf(topicConfig(t))
	rules.Transactions = true
	c, _ := NewCore(rules, nil, -1, 0, testNow, LogState{Policy: segment.FlushNever, SegmentBytes: 1 << 30})
	return &txnLog{t: t, c: c}
}

func (l *txnLog) state() LogState {
	return LogState{End: l.end, RecoveryPoint: l.end, Policy: segment.FlushNever, SegmentBytes: 1 << 30}
}

// append appends what the core asked for at the log end.
func (l *txnLog) append(a *Append) Effects {
	l.t.Helper()
	h, err := wire.ParseBatchHeader(a.Records)
	if err != nil {
		l.t.Fatal(err)
	}
	first := l.end
	l.end += int64(h.LastOffsetDelta) + 1
	return l.c.Appended(a, segment.AppendResult{FirstOffset: first, LastOffset: l.end - 1, LogAppendTime: -1, LogEndOffset: l.end}, nil, testNow, l.state())
}

func (l *txnLog) produce(pid int64, seq int32, transactional bool, n int) kerr.Code {
	l.t.Helper()
	recs := make([]batchtest.Record, n)
	for i := range recs {
		recs[i] = batchtest.Record{Value: []byte("v"), Timestamp: testNow}
	}
	opts := []batchtest.Option{}
	if pid >= 0 {
		opts = append(opts, batchtest.Producer(pid, 0, seq))
	}
	if transactional {
		opts = append(opts, batchtest.Attributes(wire.AttrTransactional))
	}
	a, fx := l.c.Produce(Produce{Records: batchtest.Build(recs, opts...), Version: 9, Acks: -1, Ticket: "p"}, testNow, l.state())
	if a == nil {
		return fx.Acks[0].Code
	}
	fx = l.append(a)
	if len(fx.Acks) != 1 || fx.Acks[0].Code != kerr.None {
		l.t.Fatalf("produce acks %+v", fx.Acks)
	}
	return kerr.None
}

func (l *txnLog) marker(pid int64, commit bool, coordinatorEpoch int32) (kerr.Code, *segment.AbortedTxn) {
	l.t.Helper()
	a, entry, fx := l.c.Marker(MarkerWrite{ProducerID: pid, ProducerEpoch: 0, Commit: commit, CoordinatorEpoch: coordinatorEpoch, Ticket: "m"}, testNow, l.state())
	if a == nil {
		return fx.Acks[0].Code, nil
	}
	fx = l.append(a)
	if len(fx.Acks) != 1 {
		l.t.Fatalf("marker acks %+v", fx.Acks)
	}
	return fx.Acks[0].Code, entry
}

func TestLastStableOffsetFollowsTransactions(t *testing.T) {
	l := newTxnLog(t)
	want := func(what string, lso int64) {
		t.Helper()
		if got := l.c.LastStableOffset(); got != lso {
			t.Fatalf("%s: last stable offset %d, want %d (high watermark %d)", what, got, lso, l.c.HighWatermark())
		}
	}
	want("empty", 0)
	if code := l.produce(-1, 0, false, 2); code != kerr.None { // 0-1
		t.Fatal(code)
	}
	want("plain records", 2)
	if code := l.produce(5, 0, true, 3); code != kerr.None { // 2-4, producer 5's transaction
		t.Fatal(code)
	}
	if code := l.produce(6, 0, true, 1); code != kerr.None { // 5, producer 6's
		t.Fatal(code)
	}
	want("two transactions open", 2)
	if code := l.produce(5, 3, false, 1); code != kerr.InvalidTxnState {
		t.Fatalf("a plain batch inside a transaction: %v", code)
	}
	code, entry := l.marker(5, false, 1) // ABORT at 6
	if code != kerr.None {
		t.Fatal(code)
	}
	if entry == nil || *entry != (segment.AbortedTxn{ProducerID: 5, FirstOffset: 2, LastOffset: 6, LastStableOffset: 5}) {
		t.Fatalf("aborted entry %+v, want producer 5, 2..6, stable at 6's first offset 5", entry)
	}
	want("5 aborted, 6 open", 5)
	if code, _ := l.marker(5, false, 0); code != kerr.TransactionCoordinatorFenced {
		t.Fatalf("a marker for 5 from an older coordinator than its last: %v", code)
	}
	code, entry = l.marker(6, true, 1) // COMMIT at 7
	if code != kerr.None || entry != nil {
		t.Fatalf("commit: %v, entry %+v", code, entry)
	}
	want("both ended", 8)
	if code := l.produce(5, 3, false, 1); code != kerr.None {
		t.Fatalf("a plain batch after the transaction ended: %v", code)
	}
}

func TestTransactionalBatchesNeedACoordinator(t *testing.T) {
	c, _ := NewCore(RulesOf(topicConfig(t)), nil, -1, 0, testNow, LogState{Policy: segment.FlushNever, SegmentBytes: 1 << 30})
	b := batchtest.Build([]batchtest.Record{{Value: []byte("v"), Timestamp: testNow}}, batchtest.Producer(1, 0, 0), batchtest.Attributes(wire.AttrTransactional))
	a, fx := c.Produce(Produce{Records: b, Version: 9, Acks: -1, Ticket: "p"}, testNow, LogState{Policy: segment.FlushNever, SegmentBytes: 1 << 30})
	if a != nil || fx.Acks[0].Code != kerr.InvalidRequest {
		t.Fatalf("transactional batch without a coordinator: %+v", fx.Acks)
	}
}
