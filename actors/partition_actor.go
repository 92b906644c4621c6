package actors

import (
	"errors"
	"io/fs"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/gather"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/segment"
)

// Messages a partition actor receives.
type (
	// reconfigure applies a new effective topic config to the live log
	// (cfg) and to produce validation (topic).
	reconfigure struct {
		cfg   segment.Config
		topic config.Topic
	}
	// reportLog asks for the log's size, answered into a gather slot.
	reportLog struct {
		g    *gather.Gather
		slot int
	}
	// deletePartition closes the log, removes its files and stops the
	// actor; the gather slot is filled when the files are gone.
	deletePartition struct {
		done *gather.Gather
		slot int
	}
	// partitionHealth tells the metadata actor whether a partition's log
	// is open (sent by the partition to its parent after each open).
	partitionHealth struct {
		id        metadata.TopicID
		partition int32
		offline   bool
	}
)

// partitionActor owns one partition's segment.Log. On this issue it
// opens, reconfigures, reports on, closes and deletes its log; produce and
// fetch plug in next (see doc.go).
type partitionActor struct {
	spec metadata.PartitionSpec
	// latest is shared by the actor's incarnations: the spec a restart
	// starts from (nil in tests that build the actor by hand).
	latest *atomic.Pointer[metadata.PartitionSpec]
	// view is published for the fetch path (partition_view.go), shared by
	// incarnations; nil in tests that build the actor by hand.
	view *partitionView
	dir  logDir
	log  *slog.Logger
	now  func() time.Time // the broker's clock (Options.Now); nil: time.Now

	plog    *segment.Log
	openErr error // the log could not be opened: the partition is offline

	startup    *startReport // first open, shared by incarnations
	deleted    bool
	wasOffline bool

	produceSide // partition_produce.go: the produce core (high watermark, producer state, acks waiting for fsync)
}

// startReport tells whoever waits for a partition's first open (NewBroker,
// or the CreateTopics, CreatePartitions or auto-creating Metadata request
// that made it) that it is over (opened, failed, or the actor gave up):
// exactly once, whichever incarnation gets there, so a panic during the
// first open cannot leave anyone waiting.
type startReport struct {
	g    *gather.Gather
	slot int
	done atomic.Bool
}

func (r *startReport) report() {
	if r != nil && r.done.CompareAndSwap(false, true) {
		r.g.Put(r.slot, 0)
	}
}

func (p *partitionActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		p.open()
		p.startProduce(ctx)
		if p.openErr != nil || p.wasOffline {
			p.wasOffline = p.openErr != nil
			ctx.Send(ctx.Parent(), &partitionHealth{id: p.spec.ID, partition: p.spec.Partition, offline: p.openErr != nil})
		}
	case *reconfigure:
		if p.plog != nil {
			p.plog.SetConfig(m.cfg)
		}
		p.spec.Config = m.topic
		if p.latest != nil {
			spec := p.spec
			p.latest.Store(&spec)
		}
		p.reconfigureProduce()
	case *produceRequest:
		p.produce(m)
	case *durableUpTo:
		p.durable(m)
	case *partitionTask:
		p.runTask(m)
	case *partitionFetch:
		p.serveFetch(m)
	case *applyRetention:
		p.retain(m.now)
	case *reportLog:
		var size int64
		if p.plog != nil {
			size = p.plog.Size()
		}
		m.g.Put(m.slot, size)
	case *deletePartition:
		p.remove()
		m.done.Put(m.slot, 0)
		ctx.Stop(ctx.Self())
	case *actor.Restarting, *actor.Stopping:
		p.close()
	case *actor.Stopped:
		p.startup.report() // stopped by its supervisor before it ever opened
	}
}

func (p *partitionActor) attrs() []any {
	return []any{"topic", p.spec.Topic, "partition", p.spec.Partition, "dir", p.spec.Dir}
}

// open opens (and if needed recovers) the log. Supervision restarts come
// back here: the log on disk is the partition's durable state.
func (p *partitionActor) open() {
	start := time.Now()
	l, rep, err := p.dir.Open(p.spec.Topic, p.spec.Partition, segmentConfig(p.spec.Config))
	if err != nil {
		p.openErr = err
		p.log.Error("partition log cannot be opened; the partition is offline", append(p.attrs(), "err", err)...)
	} else {
		p.plog, p.openErr = l, nil
		switch {
		case rep.TruncatedBytes > 0:
			p.log.Warn("partition log recovered with a damaged tail cut off", append(p.attrs(),
				"truncated_bytes", rep.TruncatedBytes, "lost_from_offset", rep.LostFromOffset, "lost_to_offset", rep.LostToOffset,
				"reason", rep.Reason, "segments_scanned", rep.SegmentsScanned)...)
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
	p.stopProduce()
	err := p.plog.Close()
	if err != nil {
		p.log.Error("partition log did not close cleanly; it will be recovered on next start", append(p.attrs(), "err", err)...)
	}
	p.closedProduce(err == nil)
	p.plog = nil
}

// remove deletes the partition's files; segment closes the open log
// itself, without a pointless final flush.
func (p *partitionActor) remove() {
	if p.deleted {
		return
	}
	p.hideView()
	p.deleted, p.plog = true, nil
	p.closedProduce(false)
	if err := p.dir.Remove(p.spec.Topic, p.spec.Partition); err != nil && !errors.Is(err, fs.ErrNotExist) {
		p.log.Error("partition files could not be removed", append(p.attrs(), "err", err)...)
	}
}

// partitionSupervisor restarts a failing partition actor (which re-opens
// its log from disk) up to 5 times a minute, then stops it: a partition
// that keeps failing is offline until the broker restarts, and the rest
// of the broker keeps serving.
func partitionSupervisor() actor.SupervisorStrategy {
	return actor.NewOneForOneStrategy(5, time.Minute, func(any) actor.Directive { return actor.RestartDirective })
}
