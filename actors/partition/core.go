package partition

import (
	"errors"
	"fmt"

	"github.com/samsa-io/samsa/actors/idempotence"
	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Ticket identifies one produce answer for the shell: the core hands it
// back, untouched, in the Ack that answers it.
type Ticket any

// LogState is what the core needs to know of its log at one moment: the
// shell reads it from segment.Log right before each call (after the
// append, for Appended), so the core itself never touches the log.
type LogState struct {
	End           int64               // log end offset
	RecoveryPoint int64               // offsets below it are fsynced
	Policy        segment.FlushPolicy // the topic's flush policy
	SegmentBytes  int64               // segment.bytes, which bounds how often producer state is snapshotted
}

// Ack answers one produce: Code NONE with the offsets the records got, or
// an error and its message.
type Ack struct {
	Ticket        Ticket
	Code          kerr.Code
	Msg           string
	BaseOffset    int64 // -1 on error
	LogAppendTime int64 // -1 unless the topic stamps LogAppendTime
	// RecordErrors names the records a batch was refused for
	// (INVALID_RECORD, INVALID_TIMESTAMP), for the response's
	// record_errors (Produce v8+); Msg then summarizes them.
	RecordErrors []RecordError
}

// Problem is an unexpected storage failure the shell should log (the
// client only sees a code).
type Problem struct {
	Msg string
	Err error
}

// Effects is what the shell carries out after a call, in this order:
// log the problem, publish a moved high watermark (and wake fetches),
// send the acks, register a durability wait, write a producer snapshot.
type Effects struct {
	Acks []Ack
	// WaitDurable, when > 0, asks the log to report once offsets below it
	// are durable (segment.Log.WhenDurable(WaitDurable-1, ...)); the
	// report comes back through Durable.
	WaitDurable int64
	// HighWatermarkMoved: HighWatermark grew; fetches parked on it wait
	// for news.
	HighWatermarkMoved bool
	// Snapshot: write EncodeSnapshot's bytes as the producer state at the
	// log end, then call SnapshotWritten.
	Snapshot bool
	Problem  *Problem
	// AlterISR is an ISR change for the controller (leading in a
	// cluster); its answer comes back through ISRUpdated.
	AlterISR *ISRProposal
	// AbortedTxns are entries for the log's aborted-transaction index
	// (segment.Log.AddAbortedTxn), from ABORT markers a follower
	// replicated.
	AbortedTxns []segment.AbortedTxn
	// Verify asks the shell to have the transaction's coordinator verify
	// the batch before it is appended (core_verify.go).
	Verify *VerifyNeed
}

// Produce is one partition's part of a Produce request.
type Produce struct {
	Records []byte // one RecordBatch v2; the append stamps it in place
	Version int16
	Acks    int16
	Ticket  Ticket
	// Coordinator: a coordinator's append (TxnOffsetCommit writes a
	// transactional batch for a producer, with no sequence).
	Coordinator bool
	// TransactionalID is the Produce request's (v3+), "" when none.
	TransactionalID string
	// Verify: KIP-890's verification is on (core_verify.go); Guard is
	// the guard of a batch the coordinator verified, 0 before.
	Verify bool
	Guard  uint64
}

// Append is the core's request to append a validated batch; the shell
// appends Records through segment.Log.Append and reports the result with
// Appended. It carries what the core needs back.
type Append struct {
	Records []byte
	header  wire.BatchHeader
	ticket  Ticket
	all     bool                // acks=all
	marker  *idempotence.Marker // a transaction marker's control batch (Marker)
}

// Producer-state housekeeping.
const (
	// SnapshotEveryBytes bounds the log replayed after an unclean stop:
	// the producer state is snapshotted at least this often (and at
	// every clean close).
	SnapshotEveryBytes = 256 << 20
	// ProducerIDExpirationMs is Kafka's producer.id.expiration.ms
	// default: producers silent for a day are forgotten.
	ProducerIDExpirationMs = 24 * 60 * 60 * 1000
	// expiryEveryMs is how often a snapshot also expires producers.
	expiryEveryMs = 60_000
)

// Core is a partition's produce state, a pure value: the high watermark,
// the produce answers waiting for durability, the producer (idempotence)
// state and the topic's produce rules. Every method takes what it needs
// (the time in milliseconds, the log's state) as arguments and returns
// Effects; nothing here reads a clock, touches a file or sends a message.
// The shell (the partition actor) owns one Core per open log.
//
// Room for what comes next: the role (leader or follower), the ISR and
// the followers' fetch positions move the high watermark in cluster
// mode, and open transactions hold the last stable offset; both slot in
// beside hw and pending.
type Core struct {
	rules Rules
	// hw is the high watermark: offsets below it are durable under the
	// topic's flush policy here and, when this replica leads in a
	// cluster, on every member of the ISR. It only grows while the log is
	// open in one role (becoming leader may start it lower: see Lead).
	hw int64
	// local is the end of what is durable here under the flush policy;
	// alone, the high watermark is local.
	local int64
	// lead is the replication state while this replica leads in a
	// cluster (core_replica.go); nil alone or as a follower.
	lead *leaderState
	// follower: this replica follows in a cluster (Follow), and its high
	// watermark is its leader's (FollowerHighWatermark), never what is
	// durable here, which may be a tail the leader never committed.
	follower bool
	// start is the log start offset the core opened at: a follower's high
	// watermark before its leader says more.
	start int64
	// waitingFor is the end offset of the newest durability wait asked
	// for (0: none outstanding).
	waitingFor int64
	// pending are produce answers waiting for their offsets to become
	// durable, in no particular order (duplicates of earlier batches join
	// late).
	pending []pendingAck

	producers    *idempotence.State
	ended        []endedTxn // transactions whose markers the high watermark has not passed (core_txn.go)
	sinceSnap    int64      // bytes appended since the last producer-state snapshot
	snapAt       int64      // offset of the last snapshot written, -1 none
	lastExpiryMs int64
	scratch      []byte
	verifying    verifyState // KIP-890 guards (core_verify.go)
	expireMs     int64       // producer.id.expiration.ms (ExpireProducers); 0: the default
}

// pendingAck is a produce answer waiting for durability.
type pendingAck struct {
	end int64 // offsets below end must be durable
	ack Ack
	// all: acks=all, answered once end is below the high watermark (in a
	// cluster: on every ISR member); otherwise once it is durable here.
	all bool
}

// NewCore starts a partition's produce state on an open log: producer
// state loaded (from a snapshot at snapAt, -1 none, plus the log after
// it), high watermark from the log start up to what is durable.
func NewCore(rules Rules, producers *idempotence.State, snapAt, logStart, nowMs int64, log LogState) (*Core, Effects) {
	if producers == nil {
		producers = idempotence.New()
	}
	c := &Core{rules: rules, hw: logStart, local: logStart, start: logStart, producers: producers, snapAt: snapAt, lastExpiryMs: nowMs}
	var fx Effects
	c.advance(log, &fx)
	return c, fx
}

// HighWatermark is the end of what readers may see.
func (c *Core) HighWatermark() int64 { return c.hw }

// Rules are the produce rules in force.
func (c *Core) Rules() Rules { return c.rules }

// Producers is the producer state (for tests and snapshots).
func (c *Core) Producers() *idempotence.State { return c.producers }

// Pending is how many produce answers wait for durability.
func (c *Core) Pending() int { return len(c.pending) }

// Produce validates one partition's batch at nowMs and checks it against
// the producer state. When the batch is to be appended it returns an
// Append (and no effects yet); otherwise the effects answer it: an error,
// or a duplicate of an earlier batch answered with that batch's offsets
// once they are durable.
func (c *Core) Produce(p Produce, nowMs int64, log LogState) (*Append, Effects) {
	var fx Effects
	if p.Acks == -1 {
		if isr := c.isrSize(); isr < c.rules.MinInsync {
			c.answer(&fx, Ack{Ticket: p.Ticket}, kerr.NotEnoughReplicas,
				fmt.Sprintf("acks=all needs min.insync.replicas=%d in sync; the ISR has %d", c.rules.MinInsync, isr))
			return nil, fx
		}
	}
	// segment.Log.Append verifies the CRC before writing anything.
	rules := c.rules
	rules.fromCoordinator = p.Coordinator
	v := validateProduce(p.Records, p.Version, rules, nowMs, false, &c.scratch)
	if v.code != kerr.None {
		c.answer(&fx, Ack{Ticket: p.Ticket, RecordErrors: v.records}, v.code, v.msg)
		return nil, fx
	}
	if need, code, msg := c.verifyTxn(p, &v.header, nowMs); code != kerr.None {
		c.answer(&fx, Ack{Ticket: p.Ticket}, code, msg)
		return nil, fx
	} else if need != nil {
		fx.Verify = need
		return nil, fx
	}
	chk := c.producers.Check(&v.header)
	switch chk.Verdict {
	case idempotence.Reject:
		c.answer(&fx, Ack{Ticket: p.Ticket}, kerr.Code(chk.Code), chk.Reason)
		return nil, fx
	case idempotence.Duplicate:
		// A retry whose first answer was lost: answer with the original
		// offsets, once they are durable.
		ack := Ack{Ticket: p.Ticket, BaseOffset: chk.Prior.FirstOffset, LogAppendTime: -1}
		if c.rules.LogAppendTime {
			ack.LogAppendTime = chk.Prior.Timestamp
		}
		c.whenDurable(pendingAck{end: chk.Prior.LastOffset + 1, ack: ack, all: p.Acks == -1}, log, &fx)
		return nil, fx
	}
	return &Append{Records: p.Records, header: v.header, ticket: p.Ticket, all: p.Acks == -1}, fx
}

// Appended takes the outcome of an Append: err from segment.Log.Append,
// or res and the log's state after it.
func (c *Core) Appended(a *Append, res segment.AppendResult, err error, nowMs int64, log LogState) Effects {
	var fx Effects
	if err != nil {
		code, msg := AppendErrorCode(err)
		if code == kerr.KafkaStorageError {
			fx.Problem = &Problem{Msg: "append failed", Err: err}
		}
		c.answer(&fx, Ack{Ticket: a.ticket}, code, msg)
		return fx
	}
	ts := a.header.MaxTimestamp
	if res.LogAppendTime >= 0 {
		ts = res.LogAppendTime
	}
	if c.recordAppended(&a.header, a.marker, res.FirstOffset, ts) {
		fx.HighWatermarkMoved = true // the last stable offset moved: read_committed fetches may read on
	}
	c.sinceSnap += int64(len(a.Records))
	c.whenDurable(pendingAck{end: res.LastOffset + 1, ack: Ack{Ticket: a.ticket, BaseOffset: res.FirstOffset, LogAppendTime: res.LogAppendTime}, all: a.all}, log, &fx)
	if c.sinceSnap >= min(SnapshotEveryBytes, log.SegmentBytes) {
		fx.Snapshot = true
	}
	return fx
}

// AppendErrorCode maps an error of segment.Log.Append to a Kafka code and
// message.
func AppendErrorCode(err error) (kerr.Code, string) {
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

// Durable takes a durability report: offsets below end are durable, or
// err says they never will be.
func (c *Core) Durable(end int64, err error, log LogState) Effects {
	var fx Effects
	if end >= c.waitingFor {
		c.waitingFor = 0
	}
	if err != nil {
		code, msg := kerr.KafkaStorageError, "the partition's log failed to fsync; see the broker log"
		if errors.Is(err, segment.ErrTruncated) || errors.Is(err, segment.ErrClosed) {
			code, msg = kerr.NotLeaderOrFollower, "the partition's log closed before the write was durable"
		} else {
			fx.Problem = &Problem{Msg: "fsync failed; produce requests are refused until restart", Err: err}
		}
		c.failPending(&fx, code, msg)
		return fx
	}
	c.raiseLocal(min(end, log.End), &fx)
	if len(c.pending) > 0 {
		c.advance(log, &fx)
	}
	return fx
}

// Reconfigure applies an altered topic config; log is the state under
// the new config (a policy that no longer waits for fsync acknowledges at
// once).
func (c *Core) Reconfigure(rules Rules, log LogState) Effects {
	c.rules = rules
	var fx Effects
	c.advance(log, &fx)
	return fx
}

// Closed ends the core when its log closed: a clean close fsynced
// everything, so waiting produces succeed; otherwise they fail and the
// client retries (idempotent producers are deduplicated after restart).
func (c *Core) Closed(cleanly bool) Effects {
	var fx Effects
	if cleanly {
		for _, p := range c.pending {
			c.answer(&fx, p.ack, kerr.None, "")
		}
		clear(c.pending)
		c.pending = c.pending[:0]
		return fx
	}
	c.failPending(&fx, kerr.NotLeaderOrFollower, "the partition's log closed before the write was durable")
	return fx
}

// EncodeSnapshot returns the producer state as of log offset end, for
// the shell to write; producers silent past their expiry are forgotten
// first (at most once a minute).
func (c *Core) EncodeSnapshot(nowMs, end int64) []byte {
	if nowMs-c.lastExpiryMs > expiryEveryMs {
		c.expire(nowMs)
	}
	c.sinceSnap = 0
	return c.producers.Encode(end)
}

// SnapshotWritten records that the snapshot at end is on disk.
func (c *Core) SnapshotWritten(end int64) { c.snapAt = end }

// SnapshotStale reports whether the producer state at log end end differs
// from the last snapshot written (a close then writes one).
func (c *Core) SnapshotStale(end int64) bool { return c.snapAt != end }

// whenDurable answers a produce once its offsets are below the high
// watermark, asking for a durability wait if needed.
func (c *Core) whenDurable(p pendingAck, log LogState, fx *Effects) {
	if c.settles(p) {
		c.settle(fx, p)
		return
	}
	c.pending = append(c.pending, p)
	c.advance(log, fx)
}

// settles reports whether p can be answered now.
func (c *Core) settles(p pendingAck) bool {
	if p.all {
		return p.end <= c.hw
	}
	return p.end <= c.local
}

// settle answers p: acks=all once the ISR has it, unless the ISR shrank
// below min.insync.replicas since the append
// (NOT_ENOUGH_REPLICAS_AFTER_APPEND, as Kafka: the records are written,
// the producer is told they may not survive).
func (c *Core) settle(fx *Effects, p pendingAck) {
	if p.all {
		if isr := c.isrSize(); isr < c.rules.MinInsync {
			c.answer(fx, p.ack, kerr.NotEnoughReplicasAfterAppend,
				fmt.Sprintf("written, but the ISR has %d replicas, fewer than min.insync.replicas=%d", isr, c.rules.MinInsync))
			return
		}
	}
	c.answer(fx, p.ack, kerr.None, "")
}

// advance moves the high watermark towards the log end: at once when the
// flush policy acknowledges without fsync or the data is already
// fsynced, else it asks for a durability wait (unless one that covers
// the end is out: its report asks again).
func (c *Core) advance(log LogState, fx *Effects) {
	end := log.End
	if end <= c.local {
		return
	}
	switch log.Policy {
	case segment.FlushInterval, segment.FlushNever:
		c.raiseLocal(end, fx)
		return
	}
	if rp := log.RecoveryPoint; rp > c.local {
		c.raiseLocal(min(rp, end), fx)
		if end <= c.local {
			return
		}
	}
	if end <= c.waitingFor {
		return
	}
	c.waitingFor = end
	fx.WaitDurable = end
}

// raiseLocal records that offsets below end are durable here, moves the
// high watermark as far as that allows, and answers what it covers.
func (c *Core) raiseLocal(end int64, fx *Effects) {
	if end > c.local {
		c.local = end
	}
	if c.follower {
		return
	}
	c.raise(c.replicatedTo(), fx)
}

// raise moves the high watermark up to hw (never down) and answers the
// produces that are then settled.
func (c *Core) raise(hw int64, fx *Effects) {
	if hw > c.hw {
		c.hw = hw
		fx.HighWatermarkMoved = true
	}
	kept := c.pending[:0]
	for _, p := range c.pending {
		if c.settles(p) {
			c.settle(fx, p)
		} else {
			kept = append(kept, p)
		}
	}
	clear(c.pending[len(kept):])
	c.pending = kept
}

// failPending answers every waiting produce with code.
func (c *Core) failPending(fx *Effects, code kerr.Code, msg string) {
	for _, p := range c.pending {
		c.answer(fx, p.ack, code, msg)
	}
	clear(c.pending)
	c.pending = c.pending[:0]
	c.waitingFor = 0
}

// answer adds ack with code to the effects; an error answer has no
// offsets.
func (c *Core) answer(fx *Effects, ack Ack, code kerr.Code, msg string) {
	ack.Code, ack.Msg = code, msg
	if code != kerr.None {
		ack.BaseOffset, ack.LogAppendTime = -1, -1
	}
	fx.Acks = append(fx.Acks, ack)
}
