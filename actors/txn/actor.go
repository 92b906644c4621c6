package txn

import (
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/samsa-io/samsa/actors/catalog"
	"github.com/samsa-io/samsa/actors/coordinator"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/actors/shards"
	"github.com/samsa-io/samsa/wire/kerr"
)

// TransactionTopic is the internal topic that holds the transaction
// coordinators' state, in Kafka's record format (record.go).
const TransactionTopic = "__transaction_state"

// Call is one request for a transaction coordinator actor: In is one of
// the core's requests (InitProducerID, AddPartitions, EndTxn) whose Ref is
// a func(Reply) the actor calls once, on its goroutine, or a
// VerifyPartitions (answered through its Answer); or a Describe.
type Call struct{ In any }

// Describe asks for the state of transactional ids (nil: every one, for
// ListTransactions); Answer runs once, on the actor's goroutine, with
// what is known (loading: ok false).
type Describe struct {
	IDs    []string
	Answer func(txns []Transaction, ok bool)
}

// Internal messages.
type (
	txnAppended struct {
		token uint64
		code  kerr.Code
	}
	txnLoadChunk struct{ shards.Chunk }
	txnTick      struct{}
	txnRecheck   struct{} // a Tick asked for by the core (RecheckMs), outside the regular ticks
	txnProducer  struct {
		in   InitProducerID
		id   int64
		code kerr.Code
	}
	txnMarkersDone struct {
		id    string
		pid   int64
		epoch int16
	}
)

// coordinatorActor is the transaction coordinator of one
// __transaction_state partition: a Core (the pure state machine) and the
// shell around it. Every field belongs to the actor's goroutine.
type coordinatorActor struct {
	env       *env.Env
	meta      *actor.PID // the metadata actor: producer ids
	partition int32
	epoch     int32 // the coordinator epoch: the partition's leader epoch
	cfg       Config
	every     time.Duration // the tick (abort of timed-out transactions, expiry)
	markers   *MarkerSender
	log       *slog.Logger

	self *actor.PID
	root *actor.RootContext

	core    *Core
	loading bool
	loadPos int64
	loaded  int
	loadAt  time.Time
	ticker  *time.Timer
	recheck *time.Timer // armed while the core waits for a RecheckMs tick
	stopped bool
}

func (a *coordinatorActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.self, a.root = ctx.Self(), ctx.ActorSystem().Root
		a.start()
	case *Call:
		a.call(m)
	case *Describe:
		a.describe(m)
	case *txnAppended:
		if a.core != nil && !a.loading {
			a.do(a.core.Appended(m.token, m.code, a.nowMs()))
		}
	case *txnProducer:
		a.producerID(m)
	case *txnMarkersDone:
		if a.core != nil && !a.loading {
			a.do(a.core.MarkersWritten(m.id, m.pid, m.epoch, a.nowMs()))
		}
	case *txnTick:
		if a.core != nil && !a.loading {
			a.do(a.core.Tick(a.nowMs()))
		}
		a.arm()
	case *txnRecheck:
		a.recheck = nil
		if a.core != nil && !a.loading {
			a.do(a.core.Tick(a.nowMs()))
		}
	case *txnLoadChunk:
		a.loadStep(m)
	case *actor.Stopping, *actor.Restarting:
		a.stop()
	}
}

func (a *coordinatorActor) nowMs() int64 { return a.env.Now().UnixMilli() }

// start loads the partition into a new core; requests meanwhile are
// answered COORDINATOR_LOAD_IN_PROGRESS (the client retries).
func (a *coordinatorActor) start() {
	a.core = New(a.cfg, a.epoch)
	a.stopped = false
	a.loading, a.loadAt, a.loaded = true, a.env.Now(), 0
	a.arm()
	a.readFrom(0)
}

func (a *coordinatorActor) stop() {
	if a.stopped {
		return
	}
	a.stopped = true
	if a.ticker != nil {
		a.ticker.Stop()
	}
	if a.recheck != nil {
		a.recheck.Stop()
		a.recheck = nil
	}
	if a.core != nil {
		a.do(a.core.Unload())
		a.core = nil
	}
}

func (a *coordinatorActor) arm() {
	if a.stopped || a.every <= 0 {
		return
	}
	self, root := a.self, a.root
	a.ticker = time.AfterFunc(a.every, func() { root.Send(self, &txnTick{}) })
}

// readFrom asks the partition actor for the next chunk of the log.
func (a *coordinatorActor) readFrom(offset int64) {
	a.loadPos = offset
	self, root := a.self, a.root
	shards.ReadChunk(a.env, TransactionTopic, a.partition, offset, func(c shards.Chunk) { root.Send(self, &txnLoadChunk{c}) })
}

// loadStep replays one chunk and asks for the next, or ends the load.
func (a *coordinatorActor) loadStep(m *txnLoadChunk) {
	if !a.loading || a.stopped {
		return
	}
	if m.TimedOut {
		a.log.Warn("reading __transaction_state is slow; retrying", "partition", a.partition)
		a.readFrom(a.loadPos)
		return
	}
	if m.Err != nil {
		a.log.Error("cannot load transactions; their requests get COORDINATOR_LOAD_IN_PROGRESS until the broker restarts",
			"partition", a.partition, "err", m.Err)
		return
	}
	err := coordinator.ReplayBatches(m.Data, func(key, value []byte) {
		a.loaded++
		if err := a.core.Load(key, value); err != nil {
			a.log.Warn("skipping a __transaction_state record that does not decode", "partition", a.partition, "err", err)
		}
	})
	if err != nil {
		a.log.Error("skipping the rest of a damaged __transaction_state chunk", "partition", a.partition, "err", err)
	}
	if m.Next < m.End {
		a.readFrom(m.Next)
		return
	}
	a.loading = false
	fx := a.core.Loaded(a.nowMs())
	if len(fx.Markers) > 0 {
		// A previous coordinator (a crash, or another broker) decided
		// these but did not finish writing their markers: this one does.
		a.log.Info("finishing transactions left prepared", "partition", a.partition, "transactions", len(fx.Markers))
	}
	a.do(fx)
	if a.loaded > 0 {
		a.log.Info("transactions loaded", "partition", a.partition, "records", a.loaded,
			"transactional_ids", len(a.core.Transactions()), "took", a.env.Now().Sub(a.loadAt).Round(time.Millisecond))
	}
}

// call serves one request. A panic in the core answers it
// COORDINATOR_NOT_AVAILABLE and is re-raised: the supervisor restarts
// the actor, which reloads from the log.
func (a *coordinatorActor) call(m *Call) {
	if a.core == nil || a.loading {
		answerAll(m.In, kerr.CoordinatorLoadInProgress)
		return
	}
	defer func() {
		if r := recover(); r != nil {
			a.log.Error("transaction coordinator failed on a request; reloading from __transaction_state",
				"partition", a.partition, "panic", r, "stack", string(debug.Stack()))
			answerAll(m.In, kerr.CoordinatorNotAvailable)
			panic(r)
		}
	}()
	now := a.nowMs()
	switch in := m.In.(type) {
	case InitProducerID:
		a.do(a.core.InitProducerID(in, now))
	case AddPartitions:
		a.do(a.core.AddPartitions(in, now))
	case EndTxn:
		a.do(a.core.EndTxn(in, now))
	case VerifyPartitions:
		in.Answer(a.core.Verify(in.TransactionalID, in.ProducerID, in.ProducerEpoch, in.Partitions))
	default:
		a.log.Error("transaction coordinator: unknown request", "request", m.In)
	}
}

// answerAll answers a request the core did not see.
func answerAll(in any, code kerr.Code) {
	var ref any
	switch in := in.(type) {
	case InitProducerID:
		ref = in.Ref
	case AddPartitions:
		ref = in.Ref
	case EndTxn:
		ref = in.Ref
	case VerifyPartitions:
		in.Answer(sameCode(len(in.Partitions), code))
		return
	}
	if fn, ok := ref.(func(Reply)); ok {
		fn(Reply{Err: code, ProducerID: -1, ProducerEpoch: -1})
	}
}

func (a *coordinatorActor) describe(m *Describe) {
	if a.core == nil || a.loading {
		m.Answer(nil, false)
		return
	}
	if m.IDs == nil {
		m.Answer(a.core.Transactions(), true)
		return
	}
	out := make([]Transaction, 0, len(m.IDs))
	for _, id := range m.IDs {
		if t, ok := a.core.Describe(id); ok {
			out = append(out, t)
		}
	}
	m.Answer(out, true)
}

// do carries out a core's Effects, in the core's order.
func (a *coordinatorActor) do(fx Effects) {
	for _, ap := range fx.Appends {
		a.appendRecord(ap)
	}
	for _, r := range fx.Replies {
		if fn, ok := r.Ref.(func(Reply)); ok {
			fn(r)
		}
	}
	for _, mk := range fx.Markers {
		self, root := a.self, a.root
		id, pid, epoch, commit, m, sent := mk.TransactionalID, mk.ProducerID, mk.ProducerEpoch, mk.Commit, a.env.Metrics, time.Now()
		a.markers.Send(mk, func() {
			m.TxnEnded(commit, time.Since(sent))
			root.Send(self, &txnMarkersDone{id: id, pid: pid, epoch: epoch})
		})
	}
	for _, in := range fx.NeedProducerID {
		self, root := a.self, a.root
		a.env.Send(a.meta, &catalog.AllocateProducerID{Done: func(id int64, code kerr.Code) {
			root.Send(self, &txnProducer{in: in, id: id, code: code})
		}})
	}
	if fx.RecheckMs > 0 && a.recheck == nil && !a.stopped {
		self, root := a.self, a.root
		a.recheck = time.AfterFunc(time.Duration(fx.RecheckMs)*time.Millisecond, func() { root.Send(self, &txnRecheck{}) })
	}
}

// producerID continues an InitProducerId with the id allocated for it.
func (a *coordinatorActor) producerID(m *txnProducer) {
	if m.code != kerr.None {
		m.in.Ref.(func(Reply))(Reply{Err: m.code, ProducerID: -1, ProducerEpoch: -1})
		return
	}
	m.in.NewProducerID = m.id
	a.call(&Call{In: m.in})
}

// appendRecord writes one record through the partition's produce path
// (acks=all: the ISR has it, fsynced under the flush policy) and reports
// back. Appends of one coordinator reach the partition's mailbox in
// order, so they land in the log in order.
func (a *coordinatorActor) appendRecord(ap Append) {
	self, root, token := a.self, a.root, ap.Token
	records := coordinator.BuildBatch([]group.Record{{Key: ap.Key, Value: ap.Value}}, a.nowMs())
	shards.Append(a.env, TransactionTopic, a.partition, records, func(code kerr.Code) {
		root.Send(self, &txnAppended{token: token, code: code})
	})
}
