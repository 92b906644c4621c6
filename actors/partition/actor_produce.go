package partition

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// produceSide is the partition actor's link to its produce core; every
// field belongs to the actor's goroutine. The state itself (high
// watermark, producer state, answers waiting for fsync) is the pure
// Core; this side reads the log for it and carries out its
// effects.
type produceSide struct {
	self *actor.PID
	root *actor.RootContext

	core    *Core  // nil while the log is not open
	scratch []byte // decompression buffer of ListOffsets
}

// startProduce prepares the produce side after the log opened: the
// partition leads at its metadata epoch from the log end on, the producer
// state is loaded from its snapshot plus the log after it, and the high
// watermark starts at what is durable.
func (p *partitionActor) startProduce(ctx actor.Context) {
	p.self, p.root = ctx.Self(), ctx.ActorSystem().Root
	p.core = nil
	if p.plog == nil {
		return
	}
	// Only a leader records its epoch: a follower's epochs are its
	// leader's, learned from the batches it replicates. One recorded at a
	// follower's log end would hide a divergent tail: its fetches would
	// name that epoch as the last fetched, which the leader has up to its
	// own end, so the tail would never be truncated.
	if p.spec.LeaderEpoch >= 0 && !p.spec.Follower {
		if err := p.plog.AssignEpoch(p.spec.LeaderEpoch, p.plog.LogEndOffset()); err != nil {
			p.log.Error("cannot record the leader epoch; the log refuses appends", append(p.attrs(), "err", err)...)
		}
	}
	if p.repl != nil {
		// The high watermark the log dir's replication-offset-checkpoint
		// kept (at most the log end), as Kafka's replicas load it: a
		// restarted leader starts from it instead of its log start, and a
		// restarted follower serves up to it until its leader says more.
		// Read before the new core's first effects record its own.
		p.followerHW = max(p.followerHW, p.plog.HighWatermark())
	}
	now := p.nowMs()
	producers, snapAt := p.loadProducers(now)
	core, fx := NewCore(RulesOf(p.spec.Config), producers, snapAt, p.plog.LogStartOffset(), now, p.logState())
	p.core = core
	p.carry(fx)
	if p.repl != nil && p.spec.Follower {
		// Its high watermark is the leader's, not what is durable here.
		p.carry(p.core.Follow())
		p.carry(p.core.FollowerHighWatermark(p.followerHW, p.logState()))
	}
	if p.repl != nil && !p.spec.Follower && p.spec.Replicas != nil {
		// A supervised restart of a leader: lead again as the last
		// LeaderAndIsr said (its high watermark waits for the followers).
		p.lead(&SetRole{LeaderEpoch: p.spec.LeaderEpoch, Replicas: p.spec.Replicas, ISR: p.spec.ISR, PartitionEpoch: p.spec.PartitionEpoch})
	}
	p.publishView()
}

// nowMs is the shell's clock (the broker's Options.Now), handed to the
// core; an actor built by hand in a test reads the real clock.
func (p *partitionActor) nowMs() int64 {
	if p.now == nil {
		return time.Now().UnixMilli()
	}
	return p.now().UnixMilli()
}

// logState reads what the core needs to know of the log.
func (p *partitionActor) logState() LogState {
	cfg := p.plog.Config()
	return LogState{End: p.plog.LogEndOffset(), RecoveryPoint: p.plog.RecoveryPoint(),
		Policy: cfg.FlushPolicy, SegmentBytes: cfg.SegmentBytes}
}

// highWatermark is the end of what readers may see: the log start while
// no core runs on an open log (an actor built by hand in a test), -1
// without a log.
func (p *partitionActor) highWatermark() int64 {
	if p.core == nil {
		if p.plog != nil {
			return p.plog.LogStartOffset()
		}
		return -1
	}
	return p.core.HighWatermark()
}

// lastStableOffset is the end of what read_committed readers may see:
// the high watermark held back by open transactions.
func (p *partitionActor) lastStableOffset() int64 {
	if p.core == nil {
		return p.highWatermark()
	}
	return p.core.LastStableOffset()
}

// reconfigureProduce applies an altered topic config.
func (p *partitionActor) reconfigureProduce() {
	if p.core != nil && p.plog != nil {
		p.carry(p.core.Reconfigure(RulesOf(p.spec.Config), p.logState()))
	}
}

// produce hands one partition's batch to the core and, when the core asks
// for it, appends it (first verifying it with its transaction's
// coordinator, when the core says so: actor_verify.go).
func (p *partitionActor) produce(m *ProduceRequest) {
	if p.queueBehindVerify(m) {
		return
	}
	p.produceNow(m, p.txn.verifier() != nil)
}

func (p *partitionActor) produceNow(m *ProduceRequest, verify bool) {
	if p.plog == nil || p.core == nil {
		p.answer(Ack{Ticket: m, Code: p.offline(), Msg: "the partition's log is offline", BaseOffset: -1, LogAppendTime: -1})
		return
	}
	if p.spec.Follower {
		p.answer(Ack{Ticket: m, Code: kerr.NotLeaderOrFollower, Msg: "this broker is not the partition's leader", BaseOffset: -1, LogAppendTime: -1})
		return
	}
	m.Out.LogStartOffset = p.plog.LogStartOffset()
	now := p.nowMs()
	a, fx := p.core.Produce(Produce{Records: m.Records, Version: m.Version, Acks: m.Acks, Ticket: m, Coordinator: m.Coordinator,
		TransactionalID: m.TransactionalID, Verify: verify, Guard: m.guard}, now, p.logState())
	p.carry(fx)
	if a == nil {
		return
	}
	res, err := p.plog.Append(a.Records, p.spec.LeaderEpoch, now)
	if err == nil {
		p.countAppend(res.LastOffset-res.FirstOffset+1, int64(len(a.Records)))
	}
	m.recordsRead() // copied to the log (or failed): answers waiting for the ISR or a flush hold offsets only
	p.carry(p.core.Appended(a, res, err, now, p.logState()))
	p.wakeReplicas()
}

// durable hands a WhenDurable answer to the core.
func (p *partitionActor) durable(m *durableUpTo) {
	if p.plog == nil || p.core == nil {
		return
	}
	p.carry(p.core.Durable(m.end, m.err, p.logState()))
}

// carry carries out the core's effects.
func (p *partitionActor) carry(fx Effects) {
	if p.plog != nil && p.core != nil && (p.repl == nil || !p.spec.Follower || p.core.follower) {
		// For the log dir's replication-offset-checkpoint, after every
		// core call: the high watermark also goes down (a follower's
		// drops to the leader's, a truncation cuts it), which no effect
		// reports. Not from a follower's new core before it is told it
		// follows: its high watermark is then what is durable here,
		// which may be a tail no leader committed.
		p.plog.SetHighWatermark(p.core.HighWatermark())
	}
	if fx.Problem != nil {
		p.log.Error(fx.Problem.Msg, append(p.attrs(), "err", fx.Problem.Err)...)
	}
	if fx.HighWatermarkMoved {
		// Published before the acks go out: a producer that reads what it
		// was just told is written must find it, also through the view.
		p.onHighWatermark() // publishes hw, wakes long-polling fetches (actor_fetch.go)
	}
	for _, a := range fx.Acks {
		p.answer(a)
	}
	if end := fx.WaitDurable; end > 0 {
		// The callback runs on segment's flush goroutine: it only sends.
		self, root := p.self, p.root
		p.plog.WhenDurable(end-1, func(err error) { root.Send(self, &durableUpTo{end: end, err: err}) })
	}
	if fx.AlterISR != nil {
		p.proposeISR(fx.AlterISR)
	}
	for _, a := range fx.AbortedTxns {
		if err := p.plog.AddAbortedTxn(a); err != nil {
			p.log.Error("aborted transaction not indexed; the log refuses appends", append(p.attrs(), "producer_id", a.ProducerID, "marker_offset", a.LastOffset, "err", err)...)
		}
	}
	if fx.Snapshot {
		p.snapshotProducers(p.nowMs())
	}
	if fx.Verify != nil {
		p.startVerify(fx.Verify)
	}
}

// answer fills a produce partition's (or a marker's) answer and puts its
// gather slot.
func (p *partitionActor) answer(a Ack) {
	if w, ok := a.Ticket.(*WriteMarker); ok {
		w.Out.ErrorCode = int16(a.Code)
		w.Reply.Put(0)
		return
	}
	m := a.Ticket.(*ProduceRequest)
	m.recordsRead() // refused without an append, if not appended before
	out := m.Out
	out.ErrorCode = int16(a.Code)
	out.BaseOffset, out.LogAppendTime = a.BaseOffset, a.LogAppendTime
	if a.Code != kerr.None && a.Msg != "" && out.ErrorMessage == nil {
		msg := a.Msg
		out.ErrorMessage = &msg
	}
	if len(a.RecordErrors) > 0 {
		// KIP-467: which records the batch was refused for, kmsg's
		// ErrorRecords (record_errors: batch_index, message), encoded
		// for v8+ only; older clients see the code and fail the batch.
		out.ErrorRecords = make([]kmsg.ProduceResponseTopicPartitionErrorRecord, len(a.RecordErrors))
		for i, e := range a.RecordErrors {
			re := &out.ErrorRecords[i]
			re.Default()
			re.RelativeOffset = e.Index
			if e.Msg != "" {
				msg := e.Msg
				re.ErrorMessage = &msg
			}
		}
	}
	m.Reply.Put(0)
}

// stopProduce runs before the log closes (stop, restart): the producer
// state is snapshotted at the log end so the next open replays nothing.
func (p *partitionActor) stopProduce() {
	if p.plog != nil && p.core != nil && p.core.SnapshotStale(p.plog.LogEndOffset()) {
		p.snapshotProducers(p.nowMs())
	}
}

// closedProduce runs after the log closed: the core answers what waited
// (a clean close fsynced everything).
func (p *partitionActor) closedProduce(cleanly bool) {
	if p.core == nil {
		return
	}
	fx := p.core.Closed(cleanly)
	p.core = nil
	for _, a := range fx.Acks {
		p.answer(a)
	}
}

// recordsRead tells the request's sender, once, that the partition reads
// its records no more.
func (m *ProduceRequest) recordsRead() {
	if f := m.RecordsRead; f != nil {
		m.RecordsRead = nil
		f()
	}
}
