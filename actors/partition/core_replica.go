package partition

import (
	"slices"

	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Replication, the leader's half (Kafka's Partition: follower fetch
// state, high watermark, ISR changes). A leader knows each follower's
// position from its fetches: a follower that fetches from offset F has
// every offset below F. The high watermark is the least of the leader's
// own durable end and the positions of the ISR members (the ISR as the
// controller last confirmed it, plus members an AlterPartition in flight
// adds: Kafka's "maximal ISR", so an acknowledgement never counts on a
// replica that is about to join but has not got the data). A follower
// that has been behind the leader's end for longer than
// replica.lag.time.max.ms is proposed out of the ISR; one that has caught
// up to the high watermark (and to the start of this leader's epoch) is
// proposed in; one proposal at a time, confirmed or refused by the
// controller (ISRUpdated).
//
// How positions mean durability: a samsa follower under a flush policy
// that fsyncs tells its leader two positions in each fetch, its fetch
// offset (what it holds, where to read next) and, in samsa's tagged field
// (wire.FetchDurableEndTag), its durable end (what it has fsynced). The
// high watermark and joining the ISR count the durable end, so the high
// watermark is what every ISR member has on disk; being caught up for
// replica.lag.time.max.ms counts the fetch offset, as in Kafka, so a
// follower that fetches while its fsync runs is not taken for slow. A
// fetch without the tag (a Kafka follower, or a flush policy that does
// not fsync, whose durable end is what it appended) counts its fetch
// offset for both, as Kafka does.

// Leadership is what the controller's LeaderAndIsr says of a partition
// this replica leads.
type Leadership struct {
	Me             int32
	LeaderEpoch    int32
	PartitionEpoch int32 // the state znode's version, AlterPartition's check
	Replicas       []int32
	ISR            []int32
	LagMaxMs       int64 // replica.lag.time.max.ms
}

// ISRProposal is an AlterPartition for the shell to send the controller;
// the answer comes back through ISRUpdated.
type ISRProposal struct {
	LeaderEpoch    int32
	PartitionEpoch int32
	ISR            []int32
}

// ISROutcome is how an ISR proposal was answered.
type ISROutcome uint8

const (
	// ISRChanged: the ISR and partition epoch answered are in force.
	ISRChanged ISROutcome = iota + 1
	// ISRRefused: the controller says it did not apply the proposal
	// (INELIGIBLE_REPLICA, OPERATION_NOT_ATTEMPTED, INVALID_REQUEST), and
	// no earlier attempt of it did either; the leader may propose again.
	ISRRefused
	// ISRFenced: any other refusal (FENCED_LEADER_EPOCH,
	// INVALID_UPDATE_VERSION, NOT_LEADER_OR_FOLLOWER, ...). An earlier
	// attempt whose answer was lost may have applied it, so the members
	// it adds keep counting for the high watermark until the next
	// LeaderAndIsr says what is in force (Kafka's leader does the same).
	ISRFenced
)

type followerState struct {
	end          int64 // its durable end (its fetch offset without one): it has every offset below on disk
	caughtUpMs   int64 // when it last was at the leader's end (Kafka's lastCaughtUpTimeMs)
	lastFetchMs  int64
	lastFetchEnd int64 // the leader's end at its last fetch
}

type leaderState struct {
	Leadership
	followers  map[int32]*followerState
	epochStart int64   // the log end when this epoch began: a joining follower must have reached it
	proposed   []int32 // the ISR an AlterPartition in flight asks for; nil: none
}

// maximal is the ISR the high watermark waits for: the confirmed one and
// any member a proposal adds.
func (l *leaderState) maximal() []int32 {
	if l.proposed == nil {
		return l.ISR
	}
	out := slices.Clone(l.ISR)
	for _, id := range l.proposed {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// Lead makes the core the leader's (cluster mode) at nowMs: followers
// start as caught up now (so none is dropped before it had a chance to
// fetch), and the high watermark starts at hw, what this replica knew as
// follower (never above what is durable here), since a replica that just
// became leader cannot know the ISR has more; the followers' first
// fetches raise it.
func (c *Core) Lead(l Leadership, hw, nowMs int64, log LogState) Effects {
	ls := &leaderState{Leadership: l, followers: make(map[int32]*followerState), epochStart: log.End}
	for _, id := range l.Replicas {
		if id != l.Me {
			ls.followers[id] = &followerState{end: -1, caughtUpMs: nowMs, lastFetchMs: nowMs}
		}
	}
	c.lead = ls
	c.follower = false
	var fx Effects
	// What is durable here first: a follower's core does not track it as
	// it appends, and the starting high watermark may not pass it.
	c.advance(log, &fx)
	c.hw = min(max(hw, 0), c.local)
	fx.HighWatermarkMoved = true
	c.raise(c.replicatedTo(), &fx)
	return fx
}

// Follow makes the core a follower's: leadership ends, produce answers
// still waiting fail NOT_LEADER_OR_FOLLOWER (the client retries on the
// new leader, and an idempotent producer's retry is recognised there),
// and the high watermark becomes the leader's (FollowerHighWatermark). A
// core that did not lead (just opened, as follower) drops the high
// watermark NewCore gave it from what is durable here: that may be a
// tail no leader committed, and a follower that became leader would
// start its high watermark there (Lead) and show it to consumers.
func (c *Core) Follow() Effects {
	var fx Effects
	if c.lead == nil && !c.follower {
		c.hw = c.start
	}
	c.follower = true
	c.lead = nil
	c.failPending(&fx, kerr.NotLeaderOrFollower, "this broker is no longer the partition's leader")
	return fx
}

// FollowerHighWatermark sets a follower's high watermark from its
// leader's (a fetch response): never past its own end.
func (c *Core) FollowerHighWatermark(leaderHW int64, log LogState) Effects {
	var fx Effects
	if hw := min(leaderHW, log.End); hw > c.hw {
		c.hw = hw
		fx.HighWatermarkMoved = true
	}
	return fx
}

// Truncated tells a follower's core its log was cut back to end (a
// divergent tail): the high watermark and what is durable here follow.
func (c *Core) Truncated(end int64) {
	c.hw = min(c.hw, end)
	c.local = min(c.local, end)
	c.waitingFor = 0
}

// Leading reports whether the core leads (cluster mode).
func (c *Core) Leading() bool { return c.lead != nil }

// Fetching reports whether follower id has fetched this partition since
// this replica began to lead it (false when not leading or not a
// replica). A follower's fetcher asks for a partition in every fetch once
// it has asked for it at all.
func (c *Core) Fetching(id int32) bool {
	if c.lead == nil {
		return false
	}
	f, ok := c.lead.followers[id]
	return ok && f.end >= 0
}

// ISR is the confirmed ISR (nil alone or as follower).
func (c *Core) ISR() []int32 {
	if c.lead == nil {
		return nil
	}
	return c.lead.ISR
}

// isrSize counts the ISR for min.insync.replicas: alone, the one replica.
func (c *Core) isrSize() int {
	if c.lead == nil {
		return 1
	}
	return len(c.lead.ISR)
}

// replicatedTo is where the high watermark may go: what is durable here,
// and, leading, no further than every member of the maximal ISR has.
func (c *Core) replicatedTo() int64 {
	hw := c.local
	if c.lead == nil {
		return hw
	}
	for _, id := range c.lead.maximal() {
		if f, ok := c.lead.followers[id]; ok && f.end < hw {
			hw = f.end
		}
	}
	return hw
}

// FollowerFetched records a follower's fetch from offset, with durable
// its durable end (negative: not given, the fetch offset counts) at
// nowMs: its position, whether it is caught up, and what that does to the
// high watermark and the ISR. Caught up is judged by the fetch offset (a
// follower that keeps fetching keeps up, whatever its disk's pace),
// the high watermark and joining the ISR by the durable end (an ISR
// member has on disk all that was acknowledged). A durable end past the
// fetch offset is not believed past it. A fetch from a replica that is
// not one of the partition's replicas changes nothing (false).
func (c *Core) FollowerFetched(id int32, offset, durable, nowMs int64, log LogState) (Effects, bool) {
	var fx Effects
	if c.lead == nil {
		return fx, false
	}
	f, ok := c.lead.followers[id]
	if !ok {
		return fx, false
	}
	if durable < 0 || durable > offset {
		durable = offset
	}
	switch {
	case offset >= log.End:
		f.caughtUpMs = max(f.caughtUpMs, nowMs)
	case offset >= f.lastFetchEnd:
		f.caughtUpMs = max(f.caughtUpMs, f.lastFetchMs)
	}
	f.end, f.lastFetchEnd, f.lastFetchMs = durable, log.End, nowMs
	c.raise(c.replicatedTo(), &fx)
	if c.lead.proposed == nil && !slices.Contains(c.lead.ISR, id) && durable >= c.hw && durable >= c.lead.epochStart {
		c.propose(append(slices.Clone(c.lead.ISR), id), &fx)
	}
	return fx, true
}

// CheckISR proposes to drop followers of the ISR that have not caught up
// with the leader's end (logEnd) for longer than replica.lag.time.max.ms
// (the shell calls it periodically). A follower that has the whole log
// (durably, when it says what is durable) stays, however long since it
// fetched, as in Kafka (isCaughtUp): on an idle partition nothing is
// waiting for it, and once records arrive it is dropped at the next check
// unless it fetches them. One whose fetch came before its fsync did is
// judged by its durable end: if it never reports the fsync done (its
// disk hangs), it stops fetching and is dropped, and acks=all does not
// wait for it forever.
func (c *Core) CheckISR(nowMs, logEnd int64) Effects {
	var fx Effects
	if c.lead == nil || c.lead.proposed != nil {
		return fx
	}
	keep := make([]int32, 0, len(c.lead.ISR))
	for _, id := range c.lead.ISR {
		if f, ok := c.lead.followers[id]; ok && f.end < logEnd && nowMs-f.caughtUpMs > c.lead.LagMaxMs {
			continue
		}
		keep = append(keep, id)
	}
	if len(keep) < len(c.lead.ISR) {
		c.propose(keep, &fx)
	}
	return fx
}

func (c *Core) propose(isr []int32, fx *Effects) {
	c.lead.proposed = isr
	fx.AlterISR = &ISRProposal{LeaderEpoch: c.lead.LeaderEpoch, PartitionEpoch: c.lead.PartitionEpoch, ISR: isr}
}

// ISRUpdated takes the answer to proposal prop: with ISRChanged, the ISR
// and partition epoch now in force; with ISRRefused the next fetch or
// check may propose again; with ISRFenced the proposal stays in flight
// (its added members counted, no other proposed) until Lead. An answer
// to any proposal but the one in flight changes nothing: it answers one
// of an earlier leadership (a LeaderAndIsr came in between), and the
// state it names may be older than the one in force, or it would end the
// wait of the proposal in flight, whose added members the high watermark
// must keep counting.
func (c *Core) ISRUpdated(prop ISRProposal, isr []int32, partitionEpoch int32, outcome ISROutcome, log LogState) Effects {
	var fx Effects
	if c.lead == nil || c.lead.proposed == nil || prop.LeaderEpoch != c.lead.LeaderEpoch ||
		prop.PartitionEpoch != c.lead.PartitionEpoch || !slices.Equal(prop.ISR, c.lead.proposed) {
		return fx
	}
	switch outcome {
	case ISRFenced:
		return fx
	case ISRChanged:
		c.lead.ISR, c.lead.PartitionEpoch = slices.Clone(isr), partitionEpoch
	}
	c.lead.proposed = nil
	c.raise(c.replicatedTo(), &fx)
	return fx
}

// Replicated records batches a follower appended as the leader wrote
// them (records, appended whole): the producer state learns them, so a
// follower that becomes leader answers duplicates and sequence gaps as
// the old leader would have.
func (c *Core) Replicated(records []byte, log LogState) Effects {
	var fx Effects
	for len(records) >= wire.BatchHeaderSize {
		h, err := wire.ParseBatchHeader(records)
		if err != nil || h.Size() > int64(len(records)) {
			break
		}
		if h.ProducerID >= 0 {
			c.replicatedBatch(&h, records[:h.Size()], &fx)
		}
		records = records[h.Size():]
		c.sinceSnap += h.Size()
	}
	if c.sinceSnap >= min(SnapshotEveryBytes, log.SegmentBytes) {
		fx.Snapshot = true
	}
	return fx
}
