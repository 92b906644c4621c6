package coordinator

import (
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/actors/shards"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Part is the ticket of one coordinator's part of a request that several
// coordinators answer (a batch over groups of different partitions,
// ListGroups): the coordinator puts its response there, and the request's
// router merges the parts.
type Part interface{ Put(kmsg.Response) }

// Messages a group coordinator actor receives.
type (
	// Call is one group request (or, for a batch spread over
	// several coordinators, this coordinator's part of it). ticket is
	// handed to the core and comes back in the Reply that answers it:
	// a *wire.Request, or a Part of a batch.
	Call struct {
		Ticket group.Ticket
		Req    kmsg.Request
		Client group.Client
	}
	// groupAppended reports that an Append is durable (code NONE) or
	// failed; sent by the gather of the produce it went through.
	groupAppended struct {
		append group.Append
		code   kerr.Code
	}
	// groupTimerFired is sent by a time.AfterFunc armed for an Effects
	// timer. gen tells a fired timer from its replacement.
	groupTimerFired struct {
		key group.TimerKey
		gen uint64
	}
	// TxnCompleted says the partition took a transaction's marker: the
	// producer's transactional offsets are committed or dropped.
	TxnCompleted struct {
		ProducerID int64
		Commit     bool
	}
	// groupExpireTick runs offset expiry (every
	// offsets.retention.check.interval.ms).
	groupExpireTick struct{}
	// groupLoadChunk is one read of the partition during the load.
	groupLoadChunk struct{ shards.Chunk }
)

// groupCoordinatorActor owns the consumer groups of one __consumer_offsets
// partition: a group.Coordinator (the pure state machine) and the shell
// duties around it (see doc.go, "Group coordinator"). Every field belongs
// to the actor's goroutine.
type groupCoordinatorActor struct {
	env       *env.Env
	partition int32
	cfg       group.Config
	log       *slog.Logger

	self *actor.PID
	root *actor.RootContext

	core    *group.Coordinator
	timers  map[group.TimerKey]armedTimer
	timerN  uint64
	expiry  *time.Timer
	every   time.Duration
	loading bool
	loadAt  time.Time
	loaded  int   // records replayed
	loadPos int64 // offset the pending read starts at
	// txnsDone are markers reported while loading, applied after it.
	txnsDone []TxnCompleted
	stopped  bool
	// fresh is true until the first start of a coordinator whose
	// partition was just created (nothing to load); shared by the
	// actor's incarnations, so a restart loads.
	fresh *atomic.Bool
}

// NewActor returns the coordinator actor of __consumer_offsets partition
// p: groups per cfg, offset expiry every every (0: none). It loads its
// partition when it starts.
func NewActor(e *env.Env, p int32, cfg group.Config, every time.Duration) actor.Actor {
	return &groupCoordinatorActor{env: e, partition: p, cfg: cfg, every: every, log: e.Log.With("component", "group-coordinator")}
}

type armedTimer struct {
	t   *time.Timer
	gen uint64
}

func (a *groupCoordinatorActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.self, a.root = ctx.Self(), ctx.ActorSystem().Root
		a.start()
	case *Call:
		a.call(m)
	case *groupAppended:
		a.do(a.core.OnAppended(m.append, m.code, a.now()))
	case *groupTimerFired:
		if t, ok := a.timers[m.key]; ok && t.gen == m.gen {
			delete(a.timers, m.key)
			a.do(a.core.OnTimer(m.key, a.now()))
		}
	case *groupExpireTick:
		if !a.loading {
			a.do(a.core.ExpireOffsets(a.now()))
		}
		a.armExpiry()
	case *groupLoadChunk:
		a.loadStep(m)
	case *listCommitted:
		m.Reply <- a.committed()
	case *TxnCompleted:
		if a.loading {
			// The marker may be past where the load stops: applied
			// once the load is done.
			a.txnsDone = append(a.txnsDone, *m)
			break
		}
		a.core.CompleteTxn(m.ProducerID, m.Commit)
	case *actor.Stopping, *actor.Restarting:
		a.stop()
	}
}

func (a *groupCoordinatorActor) now() time.Time { return a.env.Now() }

// start makes an empty coordinator and loads the partition into it. A
// supervision restart comes back here too: groups are rebuilt from the
// log, never from memory.
func (a *groupCoordinatorActor) start() {
	a.core = group.NewCoordinator(a.cfg)
	a.timers = make(map[group.TimerKey]armedTimer)
	a.stopped = false
	a.armExpiry()
	if a.fresh != nil && a.fresh.Swap(false) {
		return
	}
	a.core.BeginLoad()
	a.loading, a.loadAt, a.loaded = true, a.now(), 0
	a.readFrom(0)
}

// stop disarms every timer; queued appends complete into dead letters.
func (a *groupCoordinatorActor) stop() {
	a.stopped = true
	for k, t := range a.timers {
		t.t.Stop()
		delete(a.timers, k)
	}
	if a.expiry != nil {
		a.expiry.Stop()
	}
}

// readFrom asks the partition actor for the next chunk of the log.
func (a *groupCoordinatorActor) readFrom(offset int64) {
	a.loadPos = offset
	self, root := a.self, a.root
	shards.ReadChunk(a.env, OffsetsTopic, a.partition, offset, func(c shards.Chunk) { root.Send(self, &groupLoadChunk{c}) })
}

// loadStep replays one chunk and asks for the next, or ends the load.
func (a *groupCoordinatorActor) loadStep(m *groupLoadChunk) {
	if !a.loading {
		return
	}
	if m.TimedOut {
		a.log.Warn("reading __consumer_offsets is slow; retrying", "partition", a.partition)
		a.readFrom(a.loadPos)
		return
	}
	if m.Err != nil {
		// The groups of this partition cannot be known: keep answering
		// COORDINATOR_LOAD_IN_PROGRESS rather than serve from nothing
		// and overwrite what the log holds.
		a.log.Error("cannot load consumer groups; their requests get COORDINATOR_LOAD_IN_PROGRESS until the broker restarts",
			"partition", a.partition, "err", m.Err)
		return
	}
	err := ReplayTransactional(m.Data, func(pid int64, key, value []byte) {
		a.loaded++
		var replay error
		if pid >= 0 {
			replay = a.core.ReplayTxn(pid, key, value)
		} else {
			replay = a.core.Replay(key, value)
		}
		if replay != nil {
			a.log.Warn("skipping a __consumer_offsets record that does not decode", "partition", a.partition, "err", replay)
		}
	}, a.core.ReplayMarker)
	if err != nil {
		a.log.Error("skipping the rest of a damaged __consumer_offsets chunk", "partition", a.partition, "err", err)
	}
	if m.Next < m.End {
		a.readFrom(m.Next)
		return
	}
	a.loading = false
	a.do(a.core.EndLoad(a.now()))
	for _, m := range a.txnsDone {
		a.core.CompleteTxn(m.ProducerID, m.Commit)
	}
	a.txnsDone = nil
	if a.loaded > 0 {
		a.log.Info("consumer groups loaded", "partition", a.partition, "records", a.loaded,
			"groups", len(a.core.GroupIDs()), "took", a.now().Sub(a.loadAt).Round(time.Millisecond))
	}
}

// call serves one group request. A panic in the core is logged with the
// request and re-raised: the supervisor restarts the actor, which reloads
// from the log; the request is answered COORDINATOR_NOT_AVAILABLE so the
// client retries instead of waiting.
func (a *groupCoordinatorActor) call(m *Call) {
	defer func() {
		if r := recover(); r != nil {
			a.log.Error("group coordinator failed on a request; reloading from __consumer_offsets", "partition", a.partition,
				"request", kmsg.NameForKey(m.Req.Key()), "panic", r, "stack", string(debug.Stack()))
			if resp := group.ErrorResponse(m.Req, kerr.CoordinatorNotAvailable); resp != nil {
				a.send(group.Reply{To: m.Ticket, Response: resp})
			}
			panic(r)
		}
	}()
	fx := a.core.Handle(m.Ticket, m.Req, m.Client, a.now())
	a.do(fx)
}

// do carries out a core's Effects: replies in order, timers, then
// appends (whose completions come back as groupAppended).
func (a *groupCoordinatorActor) do(fx group.Effects) {
	for _, r := range fx.Replies {
		a.send(r)
	}
	for _, k := range fx.Cancel {
		if t, ok := a.timers[k]; ok {
			t.t.Stop()
			delete(a.timers, k)
		}
	}
	for _, t := range fx.Timers {
		a.arm(t)
	}
	for _, ap := range fx.Appends {
		a.appendRecords(ap)
	}
}

// send delivers a reply to the request (or batch part) it answers.
func (a *groupCoordinatorActor) send(r group.Reply) {
	switch to := r.To.(type) {
	case *wire.Request:
		env.Reply(to, r.Response)
	case Part:
		to.Put(r.Response)
	default:
		a.log.Error("group reply for an unknown ticket", "ticket", to)
	}
}

// arm starts (or replaces) the timer of t.Key. The timer goroutine only
// sends a message: the core is touched on the actor's goroutine alone.
func (a *groupCoordinatorActor) arm(t group.Timer) {
	if a.stopped {
		return
	}
	if old, ok := a.timers[t.Key]; ok {
		old.t.Stop()
	}
	a.timerN++
	gen, key, self, root := a.timerN, t.Key, a.self, a.root
	d := max(t.At.Sub(a.now()), 0)
	a.timers[t.Key] = armedTimer{gen: gen, t: time.AfterFunc(d, func() { root.Send(self, &groupTimerFired{key: key, gen: gen}) })}
}

func (a *groupCoordinatorActor) armExpiry() {
	if a.stopped || a.every <= 0 {
		return
	}
	self, root := a.self, a.root
	a.expiry = time.AfterFunc(a.every, func() { root.Send(self, &groupExpireTick{}) })
}

// appendRecords writes one Append through the partition's produce path
// (validation, leader epoch, fsync under the topic's flush policy) and
// reports back when it is durable. Appends of one coordinator reach the
// partition's mailbox in order, so they land in the log in order.
func (a *groupCoordinatorActor) appendRecords(ap group.Append) {
	self, root := a.self, a.root
	if len(ap.Records) == 0 {
		root.Send(self, &groupAppended{append: ap, code: kerr.None})
		return
	}
	records := BuildBatch(ap.Records, a.now().UnixMilli())
	txnID := ""
	if ap.Txn != nil {
		MarkTransactional(records, ap.Txn.ProducerID, ap.Txn.ProducerEpoch)
		txnID = ap.Txn.TransactionalID
	}
	shards.AppendFor(a.env, OffsetsTopic, a.partition, records, txnID, func(code kerr.Code) {
		root.Send(self, &groupAppended{append: ap, code: code})
	})
}
