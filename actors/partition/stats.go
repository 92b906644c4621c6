package partition

import (
	"sync/atomic"

	"github.com/samsa-io/samsa/segment"
)

// Stats are a partition's figures for the broker's metrics
// (actors/metrics), kept in its View so that they outlive the actor's
// restarts and cost the produce and fetch paths an atomic add each, no
// lookup: the metrics read them when scraped. Written by the partition
// actor only.
type Stats struct {
	messagesIn atomic.Int64 // records appended as the leader
	bytesIn    atomic.Int64 // bytes of the batches appended as the leader
	bytesOut   atomic.Int64 // record bytes read for consumers' fetches
	isrShrinks atomic.Int64
	isrExpands atomic.Int64

	role     atomic.Int32 // RoleNone, RoleLeader or RoleFollower
	replicas atomic.Int32 // assigned replicas
	isr      atomic.Int32 // in-sync replicas as the leader knows them
	log      atomic.Pointer[segment.Log]
}

// The roles a partition reports.
const (
	RoleNone     = 0 // its log is not open (offline, closing, deleted)
	RoleLeader   = 1
	RoleFollower = 2
)

// StatsSnapshot is one reading of a partition's Stats.
type StatsSnapshot struct {
	MessagesIn, BytesIn, BytesOut int64
	ISRShrinks, ISRExpands        int64
	Role                          int32
	Replicas, ISR                 int32
	// Of the open log; zero when it is not open.
	Size           int64
	Segments       int
	LogStartOffset int64
	LogEndOffset   int64
	HighWatermark  int64 // -1 unless the partition leads
	// KnownHighWatermark is HighWatermark when leading; a follower's is
	// the leader's as it last said (one fetch round old at most); -1
	// when the log is not open.
	KnownHighWatermark int64
}

// Stats reads the view's figures.
func (v *View) Stats() StatsSnapshot {
	s := &v.stats
	out := StatsSnapshot{MessagesIn: s.messagesIn.Load(), BytesIn: s.bytesIn.Load(), BytesOut: s.bytesOut.Load(),
		ISRShrinks: s.isrShrinks.Load(), ISRExpands: s.isrExpands.Load(), Role: s.role.Load(),
		Replicas: s.replicas.Load(), ISR: s.isr.Load(), HighWatermark: v.hw.Load()}
	out.KnownHighWatermark = out.HighWatermark
	if l := s.log.Load(); l != nil {
		out.Size, out.Segments, out.LogStartOffset, out.LogEndOffset = l.Size(), l.SegmentCount(), l.LogStartOffset(), l.LogEndOffset()
		if out.KnownHighWatermark < 0 {
			out.KnownHighWatermark = l.HighWatermark()
		}
	}
	return out
}

// countAppend counts a leader's append of records records in size bytes.
func (p *partitionActor) countAppend(records, size int64) {
	if p.view != nil {
		p.view.stats.messagesIn.Add(records)
		p.view.stats.bytesIn.Add(size)
	}
}

// countFetched counts record bytes read for a consumer.
func (p *partitionActor) countFetched(size int64) {
	if p.view != nil && size > 0 {
		p.view.stats.bytesOut.Add(size)
	}
}

// publishRole publishes the partition's role, replicas and ISR after a
// change of any of them.
func (p *partitionActor) publishRole() {
	if p.view == nil {
		return
	}
	s := &p.view.stats
	s.log.Store(p.plog)
	replicas := int32(max(1, len(p.spec.Replicas)))
	isr := replicas // alone, every replica is this one
	switch {
	case p.plog == nil:
		s.role.Store(RoleNone)
	case p.spec.Follower:
		s.role.Store(RoleFollower)
	default:
		s.role.Store(RoleLeader)
		if p.core != nil && p.core.Leading() {
			isr = int32(len(p.core.ISR()))
		}
	}
	s.replicas.Store(replicas)
	s.isr.Store(isr)
}

// publishedISR is the role and ISR size last published.
func (p *partitionActor) publishedISR() (leading bool, isr int) {
	if p.view == nil {
		return false, 0
	}
	return p.view.stats.role.Load() == RoleLeader, int(p.view.stats.isr.Load())
}

// countISRChange counts a change of a led partition's ISR, grown or
// shrunk from before: one the leader proposed and the controller
// accepted, or one the controller made (a replica's broker died or came
// back).
func (p *partitionActor) countISRChange(before, after int) {
	if p.view == nil {
		return
	}
	switch {
	case after < before:
		p.view.stats.isrShrinks.Add(1)
	case after > before:
		p.view.stats.isrExpands.Add(1)
	}
}
