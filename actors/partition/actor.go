package partition

import (
	"errors"
	"io/fs"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/samsa-io/samsa/actors/gather"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire/kerr"
)

// LogDir is what a partition actor needs from a data directory;
// segment.Dir provides it.
type LogDir interface {
	Open(topic string, partition int32, cfg segment.Config) (*segment.Log, segment.RecoveryReport, error)
	Remove(topic string, partition int32) error
	Close() error
}

// Checkpointer is the part of a data directory that persists recovery
// points and log start offsets (segment.Dir).
type Checkpointer interface{ Checkpoint() error }

// HWCheckpointer is the part of a data directory that persists the
// partitions' high watermarks (segment.Dir's replication-offset-checkpoint).
type HWCheckpointer interface{ CheckpointHighWatermarks() error }

// Config is what a partition actor is made from. Spec and View are shared
// by the actor's incarnations (a supervised restart starts from the
// latest spec and republishes the same view).
type Config struct {
	// Spec is the partition's latest spec; reconfigurations store into it.
	Spec *atomic.Pointer[metadata.PartitionSpec]
	View *View // published for the fetch path; nil: none
	Dir  LogDir
	Log  *slog.Logger
	Now  func() time.Time // the broker's clock; nil: time.Now
	// Startup, if set, is told once the first open is over.
	Startup *StartReport
	// Replication links a cluster-mode partition to the cluster; nil
	// alone.
	Replication *Replication
	// Txn links the partition to the broker's transactions (KIP-890
	// verification, producer.id.expiration.ms); nil: none.
	Txn *TxnLink
}

// NewActor returns a partition actor for cfg (to spawn through
// actor.PropsFromProducer, with Supervisor as its parent's strategy).
func NewActor(cfg Config) actor.Actor {
	return &partitionActor{spec: *cfg.Spec.Load(), latest: cfg.Spec, view: cfg.View, dir: cfg.Dir, log: cfg.Log,
		now: cfg.Now, startup: cfg.Startup, repl: cfg.Replication, txn: cfg.Txn}
}

// partitionActor owns one partition's segment.Log: it opens (and
// recovers) it, carries out its produce core's effects, serves reads,
// applies config changes and retention, reports its size, closes it
// cleanly when stopped, and removes its files when its topic is deleted.
type partitionActor struct {
	spec metadata.PartitionSpec
	// latest is shared by the actor's incarnations: the spec a restart
	// starts from (nil in tests that build the actor by hand).
	latest *atomic.Pointer[metadata.PartitionSpec]
	// view is published for the fetch path (view.go), shared by
	// incarnations; nil in tests that build the actor by hand.
	view *View
	dir  LogDir
	log  *slog.Logger
	now  func() time.Time // the broker's clock (Options.Now); nil: time.Now

	plog    *segment.Log
	openErr error // the log could not be opened: the partition is offline

	startup    *StartReport // first open, shared by incarnations
	deleted    bool
	wasOffline bool

	produceSide // actor_produce.go: the produce core (high watermark, producer state, acks waiting for fsync)
	verifySide  // actor_verify.go: produces waiting for their transaction's coordinator (KIP-890)
	txn         *TxnLink

	// Replication (cluster mode; actor_replica.go).
	repl           *Replication
	followerHW     int64 // the high watermark as the leader last said, while following
	isrTimer       *time.Timer
	replicaWaiters waiters // followers' fetches parked for the log to grow (stale ones pruned on add)
}

// StartReport tells whoever waits for a partition's first open (the
// broker's start, or the CreateTopics, CreatePartitions or auto-creating
// Metadata request that made it) that it is over (opened, failed, or the
// actor gave up): exactly once, whichever incarnation gets there, so a
// panic during the first open cannot leave anyone waiting.
type StartReport struct {
	slot gather.Slot
	done atomic.Bool
}

// NewStartReport reports into slot.
func NewStartReport(slot gather.Slot) *StartReport { return &StartReport{slot: slot} }

func (r *StartReport) report() {
	if r != nil && r.done.CompareAndSwap(false, true) {
		r.slot.Put(0)
	}
}

func (p *partitionActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		p.open()
		p.startProduce(ctx)
		p.publishRole()
		if p.openErr != nil || p.wasOffline {
			p.wasOffline = p.openErr != nil
			ctx.Send(ctx.Parent(), &Health{ID: p.spec.ID, Partition: p.spec.Partition, Offline: p.openErr != nil})
		}
	case *Reconfigure:
		if p.plog != nil {
			p.plog.SetConfig(m.Log)
		}
		p.spec.Config = m.Topic
		if p.latest != nil {
			spec := p.spec
			p.latest.Store(&spec)
		}
		p.reconfigureProduce()
	case *SetRole:
		p.setRole(m)
	case *ReplicaAppend:
		p.followerAppend(m)
	case *ReplicaTruncate:
		p.followerTruncate(m)
	case *ReplicaPosition:
		p.replicaPosition(m)
	case *isrUpdated:
		p.onISRUpdated(m)
	case *checkISR:
		p.onCheckISR(m)
	case *ProduceRequest:
		p.produce(m)
	case *WriteMarker:
		p.writeMarker(m)
	case *verified:
		p.onVerified(m)
	case *durableUpTo:
		p.durable(m)
	case *FetchSlot:
		p.serveFetch(m)
	case *ListOffsets:
		p.listOffsets(m)
		m.Reply.Put(0)
	case *DeleteRecords:
		p.deleteRecords(m)
		m.Reply.Put(0)
	case *EndOffsetForEpoch:
		p.endOffsetForEpoch(m)
		m.Reply.Put(0)
	case *DescribeProducers:
		p.describeProducers(m)
		m.Reply.Put(0)
	case *ReadChunk:
		m.Out.Data, m.Out.Next, m.Out.End, m.Out.Err = p.readChunk(m)
		m.Reply.Put(0)
	case *ApplyRetention:
		p.retain(m.Now)
		p.expireProducers(m.Now)
	case *CleanQuery: // actor_clean.go
		p.cleanQuery(m)
	case *CleanPrepare:
		p.cleanPrepare(m)
	case *CleanCommit:
		p.cleanCommit(m)
	case *ReportSize:
		var size int64
		if p.plog != nil {
			size = p.plog.Size()
		}
		m.Reply.Put(size)
	case *Delete:
		p.remove()
		m.Reply.Put(0)
		// Stay a while as a tombstone that answers everything
		// UNKNOWN_TOPIC_OR_PARTITION: a request routed here just before
		// the routing table lost the partition may still be on its way,
		// and a message that reaches a stopped actor is dropped without
		// an answer.
		self, root := ctx.Self(), ctx.ActorSystem().Root
		time.AfterFunc(TombstoneGrace, func() { root.Stop(self) })
	case *actor.Restarting, *actor.Stopping:
		p.close()
	case *actor.Stopped:
		p.startup.report() // stopped by its supervisor before it ever opened
		if p.view.Gone() == kerr.None {
			p.view.markGone(kerr.NotLeaderOrFollower)
		}
	}
}

func (p *partitionActor) attrs() []any {
	return []any{"topic", p.spec.Topic, "partition", p.spec.Partition, "dir", p.spec.Dir}
}

// open opens (and if needed recovers) the log. Supervision restarts come
// back here: the log on disk is the partition's durable state.
func (p *partitionActor) open() {
	start := time.Now()
	l, rep, err := p.dir.Open(p.spec.Topic, p.spec.Partition, SegmentConfig(p.spec.Config))
	if err != nil {
		p.openErr = err
		p.log.Error("partition log cannot be opened; the partition is offline", append(p.attrs(), "err", err)...)
	} else {
		p.plog, p.openErr = l, nil
		cut := append(p.attrs(), "truncated_bytes", rep.TruncatedBytes, "cut_from_offset", rep.LostFromOffset,
			"cut_to_offset", rep.LostToOffset, "deleted_segments", len(rep.DeletedSegments), "reason", rep.Reason,
			"segments_scanned", rep.SegmentsScanned)
		switch {
		case rep.Lost():
			p.log.Warn("partition log recovered with records cut that may have been acknowledged", cut...)
		case rep.Cut():
			// Only an incomplete write at the end, never fsynced: under
			// the group and always policies no producer was told it was
			// durable.
			p.log.Info("partition log recovered; an incomplete write at its end was cut", cut...)
		case !rep.Clean && rep.SegmentsScanned > 0:
			p.log.Info("partition log recovered", append(p.attrs(), "segments_scanned", rep.SegmentsScanned,
				"bytes_scanned", rep.BytesScanned, "took", time.Since(start).Round(time.Millisecond))...)
		}
	}
	p.startup.report()
}

// close closes the log cleanly, so the next open skips recovery.
func (p *partitionActor) close() {
	if p.plog == nil {
		return
	}
	p.hideView()
	p.dropVerifies()
	p.stopProduce()
	err := p.plog.Close()
	if err != nil {
		p.log.Error("partition log did not close cleanly; it will be recovered on next start", append(p.attrs(), "err", err)...)
	}
	p.closedProduce(err == nil)
	p.plog = nil
	p.publishRole()
}

// remove deletes the partition's files; segment closes the open log
// itself, without a pointless final flush.
func (p *partitionActor) remove() {
	if p.deleted {
		return
	}
	p.deleted = true
	p.view.markGone(kerr.UnknownTopicOrPartition) // before its waiters wake and read again
	p.hideView()
	p.dropVerifies()
	p.plog = nil
	p.publishRole()
	p.closedProduce(false)
	if err := p.dir.Remove(p.spec.Topic, p.spec.Partition); err != nil && !errors.Is(err, fs.ErrNotExist) {
		p.log.Error("partition files could not be removed", append(p.attrs(), "err", err)...)
	}
}

// TombstoneGrace is how long a deleted partition's actor keeps answering
// UNKNOWN_TOPIC_OR_PARTITION before it stops.
const TombstoneGrace = 5 * time.Second

// Supervisor restarts a failing partition actor (which re-opens
// its log from disk) up to 5 times a minute, then stops it: a partition
// that keeps failing is offline until the broker restarts, and the rest
// of the broker keeps serving.
func Supervisor() actor.SupervisorStrategy {
	return actor.NewOneForOneStrategy(5, time.Minute, func(any) actor.Directive { return actor.RestartDirective })
}
