package partition

import (
	"errors"
	"slices"
	"time"

	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Replication is a cluster-mode partition's link to the rest of the
// cluster, shared by every partition of the broker.
type Replication struct {
	// Me is this broker's id.
	Me int32
	// LagMax is replica.lag.time.max.ms: a follower behind for longer
	// leaves the ISR.
	LagMax time.Duration
	// AlterISR sends an ISR proposal to the controller and calls done,
	// from any goroutine, with the outcome (ISROutcome) and, changed, the
	// ISR and partition epoch in force.
	AlterISR func(topic string, id [16]byte, partition int32, p ISRProposal, done func(isr []int32, partitionEpoch int32, outcome ISROutcome))
	// RackAware is replica.selector.class set to Kafka's
	// RackAwareReplicaSelector (KIP-392): a leader points a consumer that
	// names its rack at an in-sync follower in that rack.
	RackAware bool
	// RackOf is a live broker's rack ("" for none) as the cluster view
	// has it; false for a broker the view does not list. Any goroutine.
	RackOf func(id int32) (string, bool)
	// LeaderThrottle, if set, is leader.replication.throttled.rate
	// (actors/replica's Throttle): a follower out of the ISR of a
	// throttled partition is sent nothing while the quota is exceeded,
	// and what throttled partitions send counts against it.
	LeaderThrottle LeaderThrottle
	// Parked, if set, lets a partition that grows answer at once a
	// follower's fetch parked without it (see ParkedReplicaFetches).
	Parked *ParkedReplicaFetches
}

// LeaderThrottle is the leader side of a replication quota.
type LeaderThrottle interface {
	Hold(topic string, partition int32, inSync bool) bool
	Throttled(topic string, partition int32) bool
	Record(n int)
}

// Messages of replication.
type (
	// ReplicaAppend hands a follower the batches its fetcher got from the
	// leader, with the leader's high watermark (Records may be empty: a
	// fetch that only moved the high watermark). With Durable set, Reply
	// gets the new log end at once and Durable gets it once it is durable
	// (at once, before Reply, when it already is or the flush policy does
	// not fsync), so the fetcher can fetch on while the fsync runs and
	// tell the leader the durable end as it moves. Without Durable, Reply
	// waits for durability under a flush policy that fsyncs. Both are
	// called on any goroutine.
	ReplicaAppend struct {
		Records  []byte
		LeaderHW int64
		// From is the log end the fetch was made from: an answer to a
		// fetch from elsewhere (a previous leader's fetcher, overtaken
		// by a truncation) would leave a gap or a seam, and is refused.
		From int64
		// LeaderLogStart is the leader's log start offset (-1: not
		// known): the follower's log start follows it, as Kafka's does
		// (maybeIncrementLogStartOffset), so retention and DeleteRecords
		// on the leader reach the replicas.
		LeaderLogStart int64
		Reply          func(end int64, err error)
		Durable        func(end int64, err error)
	}
	// ReplicaTruncate cuts a follower's log back to To (a tail that
	// diverged from the leader's), and Reply gets the new end. With
	// DivergingEpoch >= 0 (the leader's diverging_epoch answer: its epoch
	// and end offset To), the cut is at the lesser of To and where that
	// epoch ends here, as Kafka's followers truncate: a tail of an epoch
	// the leader never had is cut too.
	ReplicaTruncate struct {
		To             int64
		DivergingEpoch int32
		Reply          func(end int64, err error)
	}
	// ReplicaPosition asks a follower where its fetcher should fetch
	// from; Reply gets its position, its whole log durable.
	ReplicaPosition struct {
		Reply func(ReplicaAt, error)
	}
	isrUpdated struct {
		prop           ISRProposal // the proposal answered
		isr            []int32
		partitionEpoch int32
		outcome        ISROutcome
	}
	checkISR struct{ epoch int32 }
)

// ReplicaAt is a follower's position: its log end and the epoch of its
// last batch, its log start, which its fetches tell the leader as Kafka's
// do, and its durable end (every offset below is fsynced, or counts as
// such under a flush policy that does not fsync).
type ReplicaAt struct {
	End       int64
	LastEpoch int32
	LogStart  int64
	Durable   int64
}

// errStaleFetch refuses a fetch answer made from another log end.
var errStaleFetch = errors.New("partition: the fetch answer is for another position of the log")

// ErrNotFollower answers a replica message to a partition that does not
// follow (it leads, or its log is offline).
var ErrNotFollower = errors.New("partition: not a follower here")

// lead starts leadership in the core (cluster mode).
func (p *partitionActor) lead(m *SetRole) {
	if p.core == nil || p.repl == nil {
		return
	}
	l := Leadership{Me: p.repl.Me, LeaderEpoch: m.LeaderEpoch, PartitionEpoch: m.PartitionEpoch, Replicas: m.Replicas, ISR: m.ISR,
		LagMaxMs: p.repl.LagMax.Milliseconds()}
	start := max(p.followerHW, p.plog.LogStartOffset())
	if p.core.Leading() {
		start = p.core.HighWatermark() // a new epoch of the same leadership: never backwards
	}
	p.carry(p.core.Lead(l, start, p.nowMs(), p.logState()))
	p.armISRCheck(m.LeaderEpoch)
}

// follow ends leadership in the core; waiting produces fail over.
func (p *partitionActor) follow() {
	if p.isrTimer != nil {
		p.isrTimer.Stop()
		p.isrTimer = nil
	}
	if p.core != nil && p.core.Leading() {
		p.followerHW = p.core.HighWatermark()
		p.carry(p.core.Follow())
	}
	p.dropReplicaWaiters()
}

func (p *partitionActor) armISRCheck(epoch int32) {
	if p.repl == nil || p.repl.LagMax <= 0 {
		return
	}
	if p.isrTimer != nil {
		p.isrTimer.Stop()
	}
	self, root := p.self, p.root
	p.isrTimer = time.AfterFunc(p.repl.LagMax/2, func() { root.Send(self, &checkISR{epoch: epoch}) })
}

func (p *partitionActor) onCheckISR(m *checkISR) {
	if p.core == nil || !p.core.Leading() || m.epoch != p.spec.LeaderEpoch {
		return
	}
	p.carry(p.core.CheckISR(p.nowMs(), p.plog.LogEndOffset()))
	p.armISRCheck(m.epoch)
}

// proposeISR sends the core's ISR proposal to the controller.
func (p *partitionActor) proposeISR(prop *ISRProposal) {
	if p.repl == nil || p.repl.AlterISR == nil {
		return
	}
	self, root := p.self, p.root
	p.log.Info("proposing an ISR change", append(p.attrs(), "isr", prop.ISR, "leader_epoch", prop.LeaderEpoch)...)
	p.repl.AlterISR(p.spec.Topic, p.spec.ID, p.spec.Partition, *prop, func(isr []int32, epoch int32, outcome ISROutcome) {
		root.Send(self, &isrUpdated{prop: *prop, isr: isr, partitionEpoch: epoch, outcome: outcome})
	})
}

func (p *partitionActor) onISRUpdated(m *isrUpdated) {
	if p.core == nil || p.plog == nil {
		return
	}
	before := len(p.core.ISR())
	if m.outcome == ISRChanged {
		p.log.Info("ISR changed", append(p.attrs(), "isr", m.isr, "partition_epoch", m.partitionEpoch)...)
	}
	p.carry(p.core.ISRUpdated(m.prop, m.isr, m.partitionEpoch, m.outcome, p.logState()))
	if p.core.Leading() {
		p.countISRChange(before, len(p.core.ISR()))
	}
	p.publishRole()
}

// serveReplicaFetch answers a follower's fetch: up to the log end (not
// the high watermark), with the follower's position recorded first so
// the high watermark in the answer already counts it; a follower whose
// last fetched epoch ended earlier here is told where it diverged
// (KIP-320) and truncates.
func (p *partitionActor) serveReplicaFetch(f *FetchSlot) {
	f.Res, f.Diverging, f.DurableHonoured = nil, nil, false
	f.Code, f.HW, f.LSO, f.LogStart = 0, -1, -1, -1
	switch {
	case p.plog == nil:
		f.Code = p.offline()
	case p.core == nil || !p.core.Leading():
		f.Code = kerr.NotLeaderOrFollower
	case f.LeaderEpoch >= 0 && f.LeaderEpoch < p.spec.LeaderEpoch:
		f.Code = kerr.FencedLeaderEpoch
	case f.LeaderEpoch > p.spec.LeaderEpoch:
		f.Code = kerr.UnknownLeaderEpoch
	}
	if f.Code != kerr.None {
		f.Op.Complete(f)
		return
	}
	l := p.plog
	f.LogStart = l.LogStartOffset()
	if f.Follower.LastFetchedEpoch >= 0 {
		if epoch, end := l.EndOffsetForEpoch(f.Follower.LastFetchedEpoch); epoch < f.Follower.LastFetchedEpoch || end < f.Offset {
			f.Diverging = &EpochEnd{Epoch: epoch, EndOffset: end}
			f.HW, f.LSO = p.core.HighWatermark(), p.core.HighWatermark()
			f.Op.Complete(f)
			return
		}
	}
	if f.Offset < f.LogStart || f.Offset > l.LogEndOffset() {
		f.Code = kerr.OffsetOutOfRange
		f.Op.Complete(f)
		return
	}
	durable := int64(-1)
	if f.Follower.Durable {
		durable = f.Follower.DurableEnd
	}
	fx, replica := p.core.FollowerFetched(f.Follower.ID, f.Offset, durable, p.nowMs(), p.logState())
	p.carry(fx)
	f.DurableHonoured = replica && f.Follower.Durable
	f.HW = p.core.HighWatermark()
	f.LSO = f.HW
	if p.leaderThrottled(f.Follower.ID) {
		// Kafka answers a throttled follower with no records; the fetch
		// still waits its max wait for other partitions.
		if f.Wait && f.Bytes() < f.Op.MinBytes() {
			p.replicaWaiters.add(Waiter{Op: f.Op, Slot: f.Slot, Round: f.Round, offset: l.LogEndOffset(), sizeAt: l.Size()})
		}
		f.Op.Complete(f)
		return
	}
	res, err := l.Read(segment.ReadRequest{Offset: f.Offset, MaxBytes: f.MaxBytes, MaxOffset: -1, MinOneBatch: true})
	switch {
	case err == nil && res.Bytes > 0:
		f.Res = res
		if t := p.repl.throttle(); t != nil && t.Throttled(p.spec.Topic, p.spec.Partition) {
			t.Record(int(res.Bytes))
		}
	case err == nil:
		res.Release()
	case errors.Is(err, segment.ErrOffsetOutOfRange):
		f.Code = kerr.OffsetOutOfRange
	default:
		f.Code = kerr.KafkaStorageError
		p.log.Error("replica fetch read failed", append(p.attrs(), "offset", f.Offset, "err", err)...)
	}
	if f.Wait && f.Code == 0 && f.Bytes() < f.Op.MinBytes() {
		p.replicaWaiters.add(Waiter{Op: f.Op, Slot: f.Slot, Round: f.Round, offset: l.LogEndOffset(), sizeAt: l.Size()})
		p.repl.parked().park(f.Follower.ID, f.Op, f.Round)
	}
	f.Op.Complete(f)
}

// FollowerFetch is what a follower's fetch says beyond a consumer's: who
// it is, the epoch of its last batch (-1: unchecked) for the divergence
// check, and, with Durable, its durable end (samsa's
// wire.FetchDurableEndTag; without, its fetch offset is its position, as
// a Kafka follower's).
type FollowerFetch struct {
	ID               int32
	LastFetchedEpoch int32
	Durable          bool
	DurableEnd       int64
}

// EpochEnd is where a leader epoch ends in the leader's log (Fetch's
// diverging_epoch).
type EpochEnd struct {
	Epoch     int32
	EndOffset int64
}

// wakeReplicas tells followers' parked fetches that the log grew, and
// answers at once the parked fetch of an in-sync follower that has not
// fetched this partition yet (one sent before it followed it). Once every
// follower fetches the partition, that is one look-up in the core each.
func (p *partitionActor) wakeReplicas() {
	if p.plog == nil {
		return
	}
	if p.core != nil && p.repl.parked() != nil {
		for _, r := range p.core.ISR() {
			if r != p.repl.Me && !p.core.Fetching(r) {
				p.repl.parked().hurry(r)
			}
		}
	}
	if len(p.replicaWaiters) == 0 {
		return
	}
	end, size := p.plog.LogEndOffset(), p.plog.Size()
	kept := p.replicaWaiters[:0]
	for _, w := range p.replicaWaiters {
		switch {
		case w.Op.Stale(w.Round):
		case end > w.offset:
			w.Op.Progress(w.Round, w.Slot, max(size-w.sizeAt, 1))
		default:
			kept = append(kept, w)
		}
	}
	clear(p.replicaWaiters[len(kept):])
	p.replicaWaiters = kept
}

// parked is r.Parked, nil for a nil r (a broker alone).
func (r *Replication) parked() *ParkedReplicaFetches {
	if r == nil {
		return nil
	}
	return r.Parked
}

func (p *partitionActor) dropReplicaWaiters() {
	for _, w := range p.replicaWaiters {
		if !w.Op.Stale(w.Round) {
			w.Op.Progress(w.Round, w.Slot, 1)
		}
	}
	p.replicaWaiters = nil
}

// followerAppend appends what the fetcher brought.
func (p *partitionActor) followerAppend(m *ReplicaAppend) {
	if p.plog == nil || p.core == nil || !p.spec.Follower {
		m.Reply(0, ErrNotFollower)
		return
	}
	now := p.nowMs()
	if len(m.Records) > 0 && m.From != p.plog.LogEndOffset() {
		m.Reply(0, errStaleFetch)
		return
	}
	if len(m.Records) > 0 {
		if _, err := p.plog.AppendReplicated(m.Records, now); err != nil {
			p.log.Error("cannot append what the leader sent", append(p.attrs(), "err", err)...)
			m.Reply(0, err)
			return
		}
		p.carry(p.core.Replicated(m.Records, p.logState()))
	}
	p.carry(p.core.FollowerHighWatermark(m.LeaderHW, p.logState()))
	p.followerHW = p.core.HighWatermark()
	p.followLogStart(m.LeaderLogStart)
	end := p.plog.LogEndOffset()
	if m.Durable != nil {
		p.whenDurable(end, m.Durable)
		m.Reply(end, nil)
		return
	}
	p.whenDurable(end, m.Reply)
}

// whenDurable calls fn with end once every offset below it is durable
// (at once when it is, or the flush policy does not fsync).
func (p *partitionActor) whenDurable(end int64, fn func(int64, error)) {
	switch p.plog.Config().FlushPolicy {
	case segment.FlushInterval, segment.FlushNever:
		fn(end, nil)
	default:
		if end <= p.plog.RecoveryPoint() || end == 0 {
			fn(end, nil)
			return
		}
		p.plog.WhenDurable(end-1, func(err error) { fn(end, err) })
	}
}

// durableEnd is what whenDurable would answer at once: the log end under
// a policy that does not fsync, else what is fsynced.
func (p *partitionActor) durableEnd() int64 {
	end := p.plog.LogEndOffset()
	switch p.plog.Config().FlushPolicy {
	case segment.FlushInterval, segment.FlushNever:
		return end
	}
	return min(end, p.plog.RecoveryPoint())
}

// followerTruncate cuts a divergent tail and rebuilds the produce core
// (the producer state of the cut batches goes with them).
func (p *partitionActor) followerTruncate(m *ReplicaTruncate) {
	if p.plog == nil || !p.spec.Follower {
		m.Reply(0, ErrNotFollower)
		return
	}
	before := p.plog.LogEndOffset()
	to := m.To
	if m.DivergingEpoch >= 0 {
		if _, own := p.plog.EndOffsetForEpoch(m.DivergingEpoch); own >= 0 {
			to = min(to, own)
		}
	}
	end, err := p.plog.TruncateTo(max(to, p.plog.LogStartOffset()))
	if err != nil {
		p.log.Error("cannot truncate the log to the leader's", append(p.attrs(), "to", m.To, "err", err)...)
		m.Reply(0, err)
		return
	}
	if end < before {
		p.log.Warn("truncated a tail that diverged from the leader", append(p.attrs(), "from", before, "to", end)...)
	}
	now := p.nowMs()
	producers, snapAt := p.loadProducers(now)
	core, fx := NewCore(RulesOf(p.spec.Config), producers, snapAt, p.plog.LogStartOffset(), now, p.logState())
	p.core = core
	p.carry(fx)
	p.carry(p.core.Follow()) // the high watermark is the leader's, not what is durable here
	p.followerHW = min(p.followerHW, end)
	p.carry(p.core.FollowerHighWatermark(p.followerHW, p.logState()))
	m.Reply(end, nil)
}

func (p *partitionActor) replicaPosition(m *ReplicaPosition) {
	if p.plog == nil {
		m.Reply(ReplicaAt{LastEpoch: -1, LogStart: -1, Durable: -1}, ErrNotFollower)
		return
	}
	if p.durableEnd() < p.plog.LogEndOffset() {
		// A tail not yet fsynced (a leader's last appends, or a policy
		// changed from never): made durable now, so the fetcher starts
		// from a durable end. Rare (a new role, a truncation), and
		// whatever flush was due for the tail is only done sooner; a
		// wait instead could wait for ever on a tail no flush is due for.
		if err := p.plog.Flush(); err != nil {
			p.log.Error("cannot fsync the log before fetching on", append(p.attrs(), "err", err)...)
			m.Reply(ReplicaAt{LastEpoch: -1, LogStart: -1, Durable: -1}, err)
			return
		}
	}
	m.Reply(ReplicaAt{End: p.plog.LogEndOffset(), LastEpoch: p.plog.LatestEpoch(), LogStart: p.plog.LogStartOffset(), Durable: p.durableEnd()}, nil)
}

// followLogStart raises a follower's log start to its leader's, never
// past its own high watermark (the leader's log start is at most the
// leader's, and what this follower has fetched is past it, or the fetch
// would have been out of range): whole segments below it go, as on the
// leader. The directory's checkpoints are written at once, as after a
// DeleteRecords on the leader, so a crash does not bring the records
// back here.
func (p *partitionActor) followLogStart(leaderStart int64) {
	to := min(leaderStart, p.highWatermark())
	before := p.plog.LogStartOffset()
	if to <= before {
		return
	}
	if _, err := p.plog.DeleteRecordsBefore(to); err != nil {
		p.log.Warn("cannot raise the log start offset to the leader's", append(p.attrs(), "to", to, "err", err)...)
		return
	}
	p.log.Debug("log start offset follows the leader's", append(p.attrs(), "from", before, "to", p.plog.LogStartOffset())...)
	if c, ok := p.dir.(Checkpointer); ok {
		if err := c.Checkpoint(); err != nil {
			p.log.Warn("log start offset checkpoint not written; deleted records may reappear after a crash", append(p.attrs(), "err", err)...)
		}
	}
}

func (r *Replication) throttle() LeaderThrottle {
	if r == nil {
		return nil
	}
	return r.LeaderThrottle
}

// leaderThrottled is Kafka's shouldLeaderThrottle for follower id.
func (p *partitionActor) leaderThrottled(id int32) bool {
	t := p.repl.throttle()
	return t != nil && t.Hold(p.spec.Topic, p.spec.Partition, slices.Contains(p.core.ISR(), id))
}
