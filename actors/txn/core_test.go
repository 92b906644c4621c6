package txn

import (
	"encoding/binary"
	"testing"

	"github.com/samsa-io/samsa/wire/kerr"
)

// harness drives a Core the way its shell does: every Append is written
// to an in-memory log (or failed on demand) and reported back, markers
// are acknowledged when the test says so.
type harness struct {
	t       *testing.T
	c       *Core
	now     int64
	log     []Append // durable records, in order
	replies map[any]Reply
	markers []Markers
	failing kerr.Code // the next appends fail with this, while set
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, c: New(DefaultConfig(), 7), now: 1_000, replies: map[any]Reply{}}
	h.apply(h.c.Loaded(h.now))
	return h
}

// apply carries out fx, and whatever the core asks for in answer, until
// nothing is left (the shell's loop with an instant log).
func (h *harness) apply(fx Effects) {
	for {
		for _, r := range fx.Replies {
			h.replies[r.Ref] = r
		}
		h.markers = append(h.markers, fx.Markers...)
		var next Effects
		for _, a := range fx.Appends {
			err := h.failing
			if err == kerr.None {
				h.log = append(h.log, a)
			}
			more := h.c.Appended(a.Token, err, h.now)
			next.Appends = append(next.Appends, more.Appends...)
			next.Replies = append(next.Replies, more.Replies...)
			next.Markers = append(next.Markers, more.Markers...)
		}
		for _, in := range fx.NeedProducerID {
			in.NewProducerID = 1000 + int64(len(h.log))
			more := h.c.InitProducerID(in, h.now)
			next.Appends = append(next.Appends, more.Appends...)
			next.Replies = append(next.Replies, more.Replies...)
			next.Markers = append(next.Markers, more.Markers...)
			next.NeedProducerID = append(next.NeedProducerID, more.NeedProducerID...)
		}
		if len(next.Appends)+len(next.Replies)+len(next.Markers)+len(next.NeedProducerID) == 0 {
			return
		}
		fx = next
	}
}

func (h *harness) init(ref string, id string, pid int64, epoch int16) Reply {
	h.t.Helper()
	h.apply(h.c.InitProducerID(InitProducerID{Ref: ref, TransactionalID: id, TimeoutMs: 60_000, ProducerID: pid, ProducerEpoch: epoch, NewProducerID: -1}, h.now))
	r, ok := h.replies[ref]
	if !ok {
		h.t.Fatalf("%s: no reply", ref)
	}
	return r
}

func (h *harness) add(ref, id string, pid int64, epoch int16, parts ...TopicPartition) kerr.Code {
	h.t.Helper()
	h.apply(h.c.AddPartitions(AddPartitions{Ref: ref, TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch, Partitions: parts}, h.now))
	return h.replies[ref].Err
}

func (h *harness) end(ref, id string, pid int64, epoch int16, commit bool) kerr.Code {
	h.t.Helper()
	h.apply(h.c.EndTxn(EndTxn{Ref: ref, TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch, Commit: commit}, h.now))
	return h.replies[ref].Err
}

// ackMarkers acknowledges every marker request sent so far.
func (h *harness) ackMarkers() {
	ms := h.markers
	h.markers = nil
	for _, m := range ms {
		h.apply(h.c.MarkersWritten(m.TransactionalID, m.ProducerID, m.ProducerEpoch, h.now))
	}
}

func (h *harness) state(id string) State {
	h.t.Helper()
	tx, ok := h.c.Describe(id)
	if !ok {
		h.t.Fatalf("%s unknown", id)
	}
	return tx.State
}

func want(t *testing.T, what string, got, want kerr.Code) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
}

var (
	tp0 = TopicPartition{"t", 0}
	tp1 = TopicPartition{"t", 1}
	off = TopicPartition{"__consumer_offsets", 3}
)

func TestCommitFlow(t *testing.T) {
	h := newHarness(t)
	r := h.init("i1", "app", -1, -1)
	want(t, "init", r.Err, kerr.None)
	if r.ProducerEpoch != 0 || r.ProducerID < 0 {
		t.Fatalf("init: pid %d epoch %d, want a pid at epoch 0", r.ProducerID, r.ProducerEpoch)
	}
	pid := r.ProducerID
	want(t, "add", h.add("a1", "app", pid, 0, tp1, tp0), kerr.None)
	want(t, "add offsets", h.add("a2", "app", pid, 0, off), kerr.None)
	want(t, "add again (no write)", h.add("a3", "app", pid, 0, tp0), kerr.None)
	if h.state("app") != Ongoing {
		t.Fatalf("state %v, want Ongoing", StateName(h.state("app")))
	}
	records := len(h.log)
	want(t, "commit", h.end("e1", "app", pid, 0, true), kerr.None)
	if len(h.markers) != 1 || !h.markers[0].Commit || len(h.markers[0].Partitions) != 3 || h.markers[0].CoordinatorEpoch != 7 {
		t.Fatalf("markers %+v, want one COMMIT for 3 partitions at coordinator epoch 7", h.markers)
	}
	if h.state("app") != PrepareCommit {
		t.Fatalf("before markers: %v, want PrepareCommit", StateName(h.state("app")))
	}
	want(t, "commit retried while preparing", h.end("e2", "app", pid, 0, true), kerr.ConcurrentTransactions)
	want(t, "abort while preparing commit", h.end("e3", "app", pid, 0, false), kerr.InvalidTxnState)
	h.ackMarkers()
	if h.state("app") != CompleteCommit {
		t.Fatalf("after markers: %v, want CompleteCommit", StateName(h.state("app")))
	}
	if got := len(h.log) - records; got != 2 {
		t.Fatalf("the end wrote %d records, want 2 (prepare, complete)", got)
	}
	want(t, "commit retried after completion", h.end("e4", "app", pid, 0, true), kerr.None)
	want(t, "abort after commit", h.end("e5", "app", pid, 0, false), kerr.InvalidTxnState)
	want(t, "end with nothing open", h.end("e6", "app", pid, 0, true), kerr.None)
}

func TestIdentityChecks(t *testing.T) {
	h := newHarness(t)
	pid := h.init("i1", "app", -1, -1).ProducerID
	want(t, "unknown id", h.add("a1", "other", pid, 0, tp0), kerr.InvalidProducerIDMapping)
	want(t, "wrong pid", h.add("a2", "app", pid+1, 0, tp0), kerr.InvalidProducerIDMapping)
	want(t, "wrong epoch", h.add("a3", "app", pid, 3, tp0), kerr.ProducerFenced)
	want(t, "end with nothing begun", h.end("e1", "app", pid, 0, true), kerr.InvalidTxnState)
	h.apply(h.c.InitProducerID(InitProducerID{Ref: "bad", TransactionalID: "app", TimeoutMs: 900_001, ProducerID: -1, ProducerEpoch: -1, NewProducerID: -1}, h.now))
	want(t, "timeout over the max", h.replies["bad"].Err, kerr.InvalidTransactionTimeout)
}

// A second producer with the same id fences the first: its epoch is
// bumped, and the first's requests are refused.
func TestInitFencesTheOlderProducer(t *testing.T) {
	h := newHarness(t)
	first := h.init("i1", "app", -1, -1)
	second := h.init("i2", "app", -1, -1)
	want(t, "second init", second.Err, kerr.None)
	if second.ProducerID != first.ProducerID || second.ProducerEpoch != first.ProducerEpoch+1 {
		t.Fatalf("second init %+v after %+v: want the same pid, epoch +1", second, first)
	}
	want(t, "old producer adds", h.add("a1", "app", first.ProducerID, first.ProducerEpoch, tp0), kerr.ProducerFenced)
}

// InitProducerId while a transaction is open aborts it at a bumped epoch
// (markers carry the new epoch, fencing the old producer on every
// partition); the new producer is told to retry until that is done.
func TestInitAbortsAnOpenTransaction(t *testing.T) {
	h := newHarness(t)
	r := h.init("i1", "app", -1, -1)
	want(t, "add", h.add("a1", "app", r.ProducerID, 0, tp0), kerr.None)
	want(t, "init during a transaction", h.init("i2", "app", -1, -1).Err, kerr.ConcurrentTransactions)
	if len(h.markers) != 1 || h.markers[0].Commit || h.markers[0].ProducerEpoch != 1 {
		t.Fatalf("markers %+v, want one ABORT at epoch 1", h.markers)
	}
	want(t, "init while the abort completes", h.init("i3", "app", -1, -1).Err, kerr.ConcurrentTransactions)
	h.ackMarkers()
	r = h.init("i4", "app", -1, -1)
	want(t, "init after the abort", r.Err, kerr.None)
	if r.ProducerEpoch != 2 {
		t.Fatalf("epoch %d, want 2 (1 for the fence, 1 for this init)", r.ProducerEpoch)
	}
}

// KIP-360: a producer that lost the answer to its InitProducerId and asks
// again with its old epoch gets the same answer; one with an older epoch
// is fenced.
func TestInitRetryWithExpectedEpoch(t *testing.T) {
	h := newHarness(t)
	r := h.init("i1", "app", -1, -1)
	bumped := h.init("i2", "app", r.ProducerID, r.ProducerEpoch)
	want(t, "bump with expected epoch", bumped.Err, kerr.None)
	again := h.init("i3", "app", r.ProducerID, r.ProducerEpoch)
	want(t, "retried bump", again.Err, kerr.None)
	if again.ProducerEpoch != bumped.ProducerEpoch {
		t.Fatalf("retried bump gave epoch %d, want %d", again.ProducerEpoch, bumped.ProducerEpoch)
	}
	current := h.init("i4", "app", bumped.ProducerID, bumped.ProducerEpoch)
	want(t, "bump from the current epoch", current.Err, kerr.None)
	if current.ProducerEpoch != bumped.ProducerEpoch+1 {
		t.Fatalf("bump from the current epoch gave %d, want %d", current.ProducerEpoch, bumped.ProducerEpoch+1)
	}
	want(t, "stale expected epoch", h.init("i5", "app", r.ProducerID, r.ProducerEpoch).Err, kerr.ProducerFenced)
	want(t, "other producer id", h.init("i6", "app", r.ProducerID+99, 0).Err, kerr.ProducerFenced)
}

// An epoch that cannot be bumped again moves the id to a new producer id.
func TestExhaustedEpochRotatesTheProducerID(t *testing.T) {
	h := newHarness(t)
	r := h.init("i1", "app", -1, -1)
	h.c.txns["app"].epoch = 32766
	n := h.init("i2", "app", -1, -1)
	want(t, "init at an exhausted epoch", n.Err, kerr.None)
	if n.ProducerID == r.ProducerID || n.ProducerEpoch != 0 {
		t.Fatalf("got pid %d epoch %d, want a new pid at epoch 0 (old %d)", n.ProducerID, n.ProducerEpoch, r.ProducerID)
	}
}

func TestTimedOutTransactionIsAborted(t *testing.T) {
	h := newHarness(t)
	r := h.init("i1", "app", -1, -1)
	want(t, "add", h.add("a1", "app", r.ProducerID, 0, tp0), kerr.None)
	h.now += 59_000
	h.apply(h.c.Tick(h.now))
	if len(h.markers) != 0 {
		t.Fatalf("aborted before its timeout: %+v", h.markers)
	}
	h.now += 2_000
	h.apply(h.c.Tick(h.now))
	if len(h.markers) != 1 || h.markers[0].Commit || h.markers[0].ProducerEpoch != 1 {
		t.Fatalf("markers %+v, want one ABORT at the bumped epoch 1", h.markers)
	}
	want(t, "the timed-out producer commits", h.end("e1", "app", r.ProducerID, 0, true), kerr.ProducerFenced)
	h.ackMarkers()
	if h.state("app") != CompleteAbort {
		t.Fatalf("state %v, want CompleteAbort", StateName(h.state("app")))
	}
}

func TestIdleIDsExpire(t *testing.T) {
	h := newHarness(t)
	h.init("i1", "app", -1, -1)
	h.now += DefaultConfig().IDExpirationMs
	h.apply(h.c.Tick(h.now))
	if _, ok := h.c.Describe("app"); ok {
		t.Fatal("the idle id is still known")
	}
	if last := h.log[len(h.log)-1]; last.Value != nil {
		t.Fatal("the expiry wrote a value, want a tombstone")
	}
}

// A failed record changes nothing and maps to Kafka's retriable errors.
func TestFailedAppendLeavesTheStateAlone(t *testing.T) {
	h := newHarness(t)
	r := h.init("i1", "app", -1, -1)
	h.failing = kerr.NotLeaderOrFollower
	want(t, "add while the log refuses", h.add("a1", "app", r.ProducerID, 0, tp0), kerr.NotCoordinator)
	h.failing = kerr.NotEnoughReplicas
	want(t, "add under min ISR", h.add("a2", "app", r.ProducerID, 0, tp0), kerr.CoordinatorNotAvailable)
	h.failing = kerr.None
	if h.state("app") != Empty {
		t.Fatalf("state %v after failed adds, want Empty", StateName(h.state("app")))
	}
	want(t, "add once the log accepts", h.add("a3", "app", r.ProducerID, 0, tp0), kerr.None)
}

// A new coordinator loads the log and finishes what the old one left
// prepared.
func TestLoadFinishesPreparedTransactions(t *testing.T) {
	h := newHarness(t)
	r := h.init("i1", "app", -1, -1)
	want(t, "add", h.add("a1", "app", r.ProducerID, 0, tp0, tp1), kerr.None)
	want(t, "commit", h.end("e1", "app", r.ProducerID, 0, true), kerr.None) // prepared; markers never acknowledged
	h.init("j1", "idle", -1, -1)

	n := &harness{t: t, c: New(DefaultConfig(), 8), now: h.now, replies: map[any]Reply{}}
	for _, a := range h.log {
		if err := n.c.Load(a.Key, a.Value); err != nil {
			t.Fatal(err)
		}
	}
	n.apply(n.c.Loaded(n.now))
	if len(n.markers) != 1 || !n.markers[0].Commit || n.markers[0].CoordinatorEpoch != 8 || len(n.markers[0].Partitions) != 2 {
		t.Fatalf("markers after load %+v, want one COMMIT for 2 partitions at coordinator epoch 8", n.markers)
	}
	n.ackMarkers()
	if n.state("app") != CompleteCommit || n.state("idle") != Empty {
		t.Fatalf("after load: app %v, idle %v", StateName(n.state("app")), StateName(n.state("idle")))
	}
}

func TestUnloadAnswersWaitingRequests(t *testing.T) {
	c := New(DefaultConfig(), 1)
	fx := c.InitProducerID(InitProducerID{Ref: "i", TransactionalID: "app", TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1, NewProducerID: 5}, 0)
	if len(fx.Appends) != 1 {
		t.Fatalf("appends %d, want 1", len(fx.Appends))
	}
	fx = c.Unload()
	if len(fx.Replies) != 1 || fx.Replies[0].Err != kerr.NotCoordinator {
		t.Fatalf("replies %+v, want NOT_COORDINATOR", fx.Replies)
	}
}

// Verify answers as Kafka's handleVerifyPartitionsInTransaction: the
// partitions of the open transaction NONE, the others
// TRANSACTION_ABORTABLE; another epoch PRODUCER_FENCED, another producer
// id or an unknown id INVALID_PRODUCER_ID_MAPPING, a prepared
// transaction CONCURRENT_TRANSACTIONS; a completed one has no partitions.
func TestVerify(t *testing.T) {
	h := newHarness(t)
	r := h.init("i1", "app", -1, -1)
	if got := h.c.Verify("app", r.ProducerID, 0, []TopicPartition{tp0}); got[0] != kerr.TransactionAbortable {
		t.Fatalf("verify before any add: %v", got)
	}
	want(t, "add", h.add("a1", "app", r.ProducerID, 0, tp0), kerr.None)
	got := h.c.Verify("app", r.ProducerID, 0, []TopicPartition{tp0, tp1})
	if got[0] != kerr.None || got[1] != kerr.TransactionAbortable {
		t.Fatalf("verify %v, want [NONE TRANSACTION_ABORTABLE]", got)
	}
	if got := h.c.Verify("app", r.ProducerID, 1, []TopicPartition{tp0}); got[0] != kerr.ProducerFenced {
		t.Fatalf("verify at another epoch: %v", got)
	}
	if got := h.c.Verify("app", r.ProducerID+1, 0, []TopicPartition{tp0}); got[0] != kerr.InvalidProducerIDMapping {
		t.Fatalf("verify of another producer id: %v", got)
	}
	if got := h.c.Verify("nobody", r.ProducerID, 0, []TopicPartition{tp0}); got[0] != kerr.InvalidProducerIDMapping {
		t.Fatalf("verify of an unknown id: %v", got)
	}
	want(t, "end", h.end("e1", "app", r.ProducerID, 0, true), kerr.None) // prepared; the markers are not acknowledged
	if got := h.c.Verify("app", r.ProducerID, 0, []TopicPartition{tp0}); got[0] != kerr.ConcurrentTransactions {
		t.Fatalf("verify while the commit is prepared: %v", got)
	}
	h.ackMarkers()
	if got := h.c.Verify("app", r.ProducerID, 0, []TopicPartition{tp0}); got[0] != kerr.TransactionAbortable {
		t.Fatalf("verify after the commit: %v", got)
	}
}

// Records round-trip through Kafka's format.
func TestRecordFormat(t *testing.T) {
	r := record{pid: 42, epoch: 3, timeoutMs: 60_000, state: PrepareCommit, parts: []TopicPartition{tp0, tp1, off}, startMs: 10, updateMs: 20}
	sortPartitions(r.parts)
	id, err := decodeKey(encodeKey("app"))
	if err != nil || id != "app" {
		t.Fatalf("key: %q %v", id, err)
	}
	back, err := decodeValue(id, encodeValue(&r))
	if err != nil {
		t.Fatal(err)
	}
	if back.pid != r.pid || back.epoch != r.epoch || back.state != r.state || len(back.parts) != 3 || back.startMs != 10 || back.updateMs != 20 {
		t.Fatalf("round trip: %+v, want %+v", back, r)
	}
	if _, err := decodeValue("x", []byte{0, 9}); err == nil {
		t.Fatal("a value of version 9 decoded")
	}
}

// The partition list is null only in state Empty, as Kafka writes it:
// Kafka 3.9.1 reads the list of every other state without a null check,
// and one null list stops it loading the whole log partition (seen in a
// mixed cluster, e2e/mixed). The list's length is the int32 after the
// fixed fields of a version 0 value: version, producer id, epoch,
// timeout, state.
func TestRecordPartitionListNullOnlyWhenEmpty(t *testing.T) {
	const listAt = 2 + 8 + 2 + 4 + 1
	for _, st := range []State{Empty, Ongoing, PrepareCommit, CompleteCommit, CompleteAbort} {
		v := encodeValue(&record{pid: 1, state: st})
		want := int32(0)
		if st == Empty {
			want = -1 // null
		}
		if n := int32(binary.BigEndian.Uint32(v[listAt:])); n != want {
			t.Errorf("state %v: partition list length %d, want %d", st, n, want)
		}
	}
}

// An AddPartitionsToTxn that arrives while the previous transaction's
// markers are still out waits for its completion and is then served,
// instead of CONCURRENT_TRANSACTIONS at once (which costs the client its
// retry backoff); one that waits ParkMaxMs gets CONCURRENT_TRANSACTIONS,
// as from Kafka.
func TestAddPartitionsWaitsForThePreviousTransaction(t *testing.T) {
	h := newHarness(t)
	pid := h.init("i1", "app", -1, -1).ProducerID
	want(t, "add", h.add("a1", "app", pid, 0, tp0), kerr.None)
	want(t, "commit", h.end("e1", "app", pid, 0, true), kerr.None)
	h.apply(h.c.AddPartitions(AddPartitions{Ref: "a2", TransactionalID: "app", ProducerID: pid, ProducerEpoch: 0, Partitions: []TopicPartition{tp0}}, h.now))
	if r, answered := h.replies["a2"]; answered {
		t.Fatalf("answered %v while the commit's markers are out, want it to wait", r.Err)
	}
	h.ackMarkers()
	want(t, "the waiting add, once the commit completed", h.replies["a2"].Err, kerr.None)
	if h.state("app") != Ongoing {
		t.Fatalf("state %v after the waiting add, want Ongoing (the next transaction)", StateName(h.state("app")))
	}

	want(t, "commit", h.end("e2", "app", pid, 0, true), kerr.None)
	fx := h.c.AddPartitions(AddPartitions{Ref: "a3", TransactionalID: "app", ProducerID: pid, ProducerEpoch: 0, Partitions: []TopicPartition{tp0}}, h.now)
	if fx.RecheckMs <= 0 {
		t.Fatal("a waiting request asked for no recheck")
	}
	h.apply(fx)
	h.now += ParkMaxMs - 1
	h.apply(h.c.Tick(h.now))
	if _, answered := h.replies["a3"]; answered {
		t.Fatal("answered before ParkMaxMs")
	}
	h.now++
	h.apply(h.c.Tick(h.now))
	want(t, "an add that waited ParkMaxMs", h.replies["a3"].Err, kerr.ConcurrentTransactions)
}
