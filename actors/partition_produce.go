package actors

import (
	"errors"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/idempotence"
	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Messages of the produce side of a partition actor.
type (
	// produceRequest is one partition's part of a Produce request. The
	// actor fills out (owned by this message until the slot is put) and
	// puts slot of g once the answer is final: at once for an error, or
	// when the appended batch is durable under the topic's flush policy.
	produceRequest struct {
		records []byte // aliases the request frame; append stamps it in place
		version int16
		acks    int16
		out     *kmsg.ProduceResponseTopicPartition
		g       *gather
		slot    int
	}
	// durableUpTo is sent by segment's flush goroutine (through
	// WhenDurable) to the partition: offsets below end are durable, or
	// err says they never will be.
	durableUpTo struct {
		end int64
		err error
	}
	// partitionTask runs a function inside the partition actor and puts
	// the gather slot afterwards: ListOffsets, DeleteRecords and
	// OffsetForLeaderEpoch read or change the log this way.
	partitionTask struct {
		run  func(p *partitionActor)
		g    *gather
		slot int
	}
)

// produceSide is the partition actor's produce state; every field belongs
// to the actor's goroutine.
type produceSide struct {
	self *actor.PID
	root *actor.RootContext

	rules produceRules
	// hw is the high watermark: offsets below it are durable under the
	// topic's flush policy (single node: no followers to wait for). It
	// only grows while the log is open; onHighWatermark runs after each
	// advance.
	hw int64
	// waitingFor is the end offset of the newest WhenDurable registered
	// (0: none outstanding).
	waitingFor int64
	// pending are produce answers waiting for their offsets to become
	// durable, in no particular order (duplicates of earlier batches join
	// late).
	pending []pendingAck

	producers    *idempotence.State
	sinceSnap    int64 // bytes appended since the last producer-state snapshot
	snapAt       int64 // offset of the last snapshot written, -1 none
	scratch      []byte
	lastExpiryMs int64
}

// pendingAck is a produce answer waiting for durability.
type pendingAck struct {
	end  int64 // offsets below end must be durable
	out  *kmsg.ProduceResponseTopicPartition
	g    *gather
	slot int
}

// Producer-state housekeeping.
const (
	// snapshotEveryBytes bounds the log replayed after an unclean stop:
	// the producer state is snapshotted at least this often (and at every
	// clean close).
	snapshotEveryBytes = 256 << 20
	// producerIDExpirationMs is Kafka's producer.id.expiration.ms default:
	// producers silent for a day are forgotten.
	producerIDExpirationMs = 24 * 60 * 60 * 1000
)

// nowMs is the shell's clock; the cores below take the time as argument.
func nowMs() int64 { return time.Now().UnixMilli() }

// startProduce prepares the produce side after the log opened: the
// partition leads at its metadata epoch from the log end on, the producer
// state is loaded from its snapshot plus the log after it, and the high
// watermark starts at what is durable.
func (p *partitionActor) startProduce(ctx actor.Context) {
	p.self, p.root = ctx.Self(), ctx.ActorSystem().Root
	p.rules = rulesOf(p.spec.Config)
	p.snapAt = -1
	if p.plog == nil {
		return
	}
	if p.spec.LeaderEpoch >= 0 {
		if err := p.plog.AssignEpoch(p.spec.LeaderEpoch, p.plog.LogEndOffset()); err != nil {
			p.log.Error("cannot record the leader epoch; the log refuses appends", append(p.attrs(), "err", err)...)
		}
	}
	p.loadProducers(nowMs())
	p.hw = p.plog.LogStartOffset()
	p.advanceHW(p.plog.LogEndOffset())
	p.publishView()
}

// reconfigureProduce applies an altered topic config.
func (p *partitionActor) reconfigureProduce() {
	p.rules = rulesOf(p.spec.Config)
	if p.plog != nil {
		// A policy that no longer waits for fsync acknowledges at once.
		p.advanceHW(p.plog.LogEndOffset())
	}
}

// produce validates, deduplicates and appends one partition's batch.
func (p *partitionActor) produce(m *produceRequest) {
	out := m.out
	if p.plog == nil {
		p.answer(m.g, m.slot, out, kerr.NotLeaderOrFollower, "the partition's log is offline")
		return
	}
	out.LogStartOffset = p.plog.LogStartOffset()
	now := nowMs()
	if m.acks == -1 && p.rules.minInsync > 1 {
		p.answer(m.g, m.slot, out, kerr.NotEnoughReplicas, "acks=all needs min.insync.replicas in sync; this partition has 1 replica")
		return
	}
	v := validateProduce(m.records, m.version, p.rules, now, false, &p.scratch) // Append verifies the CRC
	if v.code != kerr.None {
		p.answer(m.g, m.slot, out, v.code, v.msg)
		return
	}
	h := &v.header
	chk := p.producers.Check(h)
	switch chk.Verdict {
	case idempotence.Reject:
		p.answer(m.g, m.slot, out, kerr.Code(chk.Code), chk.Reason)
		return
	case idempotence.Duplicate:
		// A retry whose first answer was lost: answer with the original
		// offsets, once they are durable.
		out.BaseOffset = chk.Prior.FirstOffset
		if p.rules.logAppendTime {
			out.LogAppendTime = chk.Prior.Timestamp
		}
		p.ackWhenDurable(pendingAck{end: chk.Prior.LastOffset + 1, out: out, g: m.g, slot: m.slot})
		return
	}
	res, err := p.plog.Append(m.records, p.spec.LeaderEpoch, now)
	if err != nil {
		code, msg := appendErrorCode(err)
		if code == kerr.KafkaStorageError {
			p.log.Error("append failed", append(p.attrs(), "err", err)...)
		}
		p.answer(m.g, m.slot, out, code, msg)
		return
	}
	ts := h.MaxTimestamp
	if res.LogAppendTime >= 0 {
		ts = res.LogAppendTime
	}
	p.producers.Record(h, res.FirstOffset, ts)
	out.BaseOffset, out.LogAppendTime = res.FirstOffset, res.LogAppendTime
	p.sinceSnap += int64(len(m.records))
	p.ackWhenDurable(pendingAck{end: res.LastOffset + 1, out: out, g: m.g, slot: m.slot})
	if p.sinceSnap >= min(snapshotEveryBytes, p.plog.Config().SegmentBytes) {
		p.snapshotProducers(now)
	}
}

// appendErrorCode maps an error of segment.Log.Append to a Kafka code.
func appendErrorCode(err error) (kerr.Code, string) {
	var be *segment.BatchError
	switch {
	case errors.As(err, &be) && errors.Is(err, segment.ErrRecordTooLarge):
		return kerr.MessageTooLarge, "record batch exceeds max.message.bytes"
	case errors.As(err, &be):
		return wire.ErrorCodeOf(be.Err), be.Err.Error()
	case errors.Is(err, segment.ErrRecordTooLarge):
		return kerr.RecordListTooLarge, "records exceed segment.bytes"
	case errors.Is(err, segment.ErrClosed):
		return kerr.NotLeaderOrFollower, "the partition's log is closing"
	}
	// A failed write or fsync: the log refuses appends until the broker
	// restarts (segment never carries on after a failed fsync).
	return kerr.KafkaStorageError, "the partition's log failed to write; see the broker log"
}

// ackWhenDurable answers a produce once its offsets are below the high
// watermark, registering a durability wait if needed.
func (p *partitionActor) ackWhenDurable(a pendingAck) {
	if a.end <= p.hw {
		p.answer(a.g, a.slot, a.out, kerr.None, "")
		return
	}
	p.pending = append(p.pending, a)
	p.advanceHW(p.plog.LogEndOffset())
}

// advanceHW moves the high watermark towards end (the log end offset):
// at once when the flush policy acknowledges without fsync or the data is
// already fsynced, else when WhenDurable reports it (as a durableUpTo
// message: the callback runs on segment's flush goroutine and must not
// touch the actor's state).
func (p *partitionActor) advanceHW(end int64) {
	if end <= p.hw {
		return
	}
	switch p.plog.Config().FlushPolicy {
	case segment.FlushInterval, segment.FlushNever:
		p.raiseHW(end)
		return
	}
	if rp := p.plog.RecoveryPoint(); rp > p.hw {
		p.raiseHW(min(rp, end))
		if end <= p.hw {
			return
		}
	}
	if end <= p.waitingFor {
		return // an earlier wait covers it: its answer re-registers
	}
	p.waitingFor = end
	self, root := p.self, p.root
	p.plog.WhenDurable(end-1, func(err error) { root.Send(self, &durableUpTo{end: end, err: err}) })
}

// durable handles a WhenDurable answer.
func (p *partitionActor) durable(m *durableUpTo) {
	if p.plog == nil {
		return
	}
	if m.end >= p.waitingFor {
		p.waitingFor = 0
	}
	if m.err != nil {
		code, msg := kerr.KafkaStorageError, "the partition's log failed to fsync; see the broker log"
		if errors.Is(m.err, segment.ErrTruncated) || errors.Is(m.err, segment.ErrClosed) {
			code, msg = kerr.NotLeaderOrFollower, "the partition's log closed before the write was durable"
		} else {
			p.log.Error("fsync failed; produce requests are refused until restart", append(p.attrs(), "err", m.err)...)
		}
		p.failPending(code, msg)
		return
	}
	p.raiseHW(min(m.end, p.plog.LogEndOffset()))
	if len(p.pending) > 0 {
		p.advanceHW(p.plog.LogEndOffset())
	}
}

// raiseHW sets the high watermark and answers the produces it covers.
func (p *partitionActor) raiseHW(hw int64) {
	if hw <= p.hw {
		return
	}
	p.hw = hw
	kept := p.pending[:0]
	for _, a := range p.pending {
		if a.end <= hw {
			p.answer(a.g, a.slot, a.out, kerr.None, "")
		} else {
			kept = append(kept, a)
		}
	}
	clear(p.pending[len(kept):])
	p.pending = kept
	p.onHighWatermark() // publishes hw, wakes long-polling fetches (partition_fetch.go)
}

// failPending answers every waiting produce with code.
func (p *partitionActor) failPending(code kerr.Code, msg string) {
	for _, a := range p.pending {
		a.out.BaseOffset, a.out.LogAppendTime = -1, -1
		p.answer(a.g, a.slot, a.out, code, msg)
	}
	clear(p.pending)
	p.pending = p.pending[:0]
	p.waitingFor = 0
}

// answer fills a produce partition's error and puts its gather slot.
func (p *partitionActor) answer(g *gather, slot int, out *kmsg.ProduceResponseTopicPartition, code kerr.Code, msg string) {
	out.ErrorCode = int16(code)
	if code != kerr.None {
		out.BaseOffset, out.LogAppendTime = -1, -1
		if msg != "" && out.ErrorMessage == nil {
			out.ErrorMessage = &msg
		}
	}
	g.put(slot, 0)
}

// stopProduce runs before the log closes (stop, restart): the producer
// state is snapshotted at the log end so the next open replays nothing.
func (p *partitionActor) stopProduce() {
	if p.plog != nil && p.producers != nil && p.snapAt != p.plog.LogEndOffset() {
		p.snapshotProducers(nowMs())
	}
}

// closedProduce runs after the log closed: a clean close fsynced
// everything, so waiting produces succeed; otherwise they fail and the
// client retries (idempotent producers are deduplicated after restart).
func (p *partitionActor) closedProduce(cleanly bool) {
	if cleanly {
		for _, a := range p.pending {
			p.answer(a.g, a.slot, a.out, kerr.None, "")
		}
		clear(p.pending)
		p.pending = p.pending[:0]
		return
	}
	p.failPending(kerr.NotLeaderOrFollower, "the partition's log closed before the write was durable")
}

// runTask runs a partitionTask.
func (p *partitionActor) runTask(m *partitionTask) {
	m.run(p)
	m.g.put(m.slot, 0)
}
