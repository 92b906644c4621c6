package sharegroup

import (
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/actors/shards"
	"github.com/samsa-io/samsa/wire/kerr"
)

// fetchOp is one ShareFetch in progress: its response, the session's
// partitions and, per partition, the read in flight.
type fetchOp struct {
	call     *Call
	req      *kmsg.ShareFetchRequest
	resp     *kmsg.ShareFetchResponse
	group    string
	member   string
	sess     *Session // the share session the fetch acquires for
	parts    []TopicPartition
	acks     map[TopicPartition]kerr.Code
	deadline time.Time
	left     int // records still to acquire (MaxRecords)
	pending  int
	reads    []fetchRead
	touched  map[partKey]bool
	// round numbers the reads of this fetch; waiters and timers of an
	// earlier round are stale (actor_wait.go). Read by partition actors.
	round atomic.Int32
	self  *actor.PID
	root  *actor.RootContext
}

type fetchRead struct {
	view  *partition.View // nil: the partition is not waited on
	hw    int64           // the high watermark the round saw
	from  int64
	chunk *shards.Chunk
	code  kerr.Code
	runs  []AcquiredRun
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// shareFetch serves ShareFetch: the session epoch, the acknowledgements
// it carries, then acquisition from every partition of the session.
func (a *coordinatorActor) shareFetch(c *Call, r *kmsg.ShareFetchRequest) {
	resp := r.ResponseKind().(*kmsg.ShareFetchResponse)
	resp.Version = r.Version
	resp.AcquisitionLockTimeoutMillis = int32(a.settingsOf(deref(r.GroupID)).limits.LockDuration.Milliseconds())
	group, member := deref(r.GroupID), deref(r.MemberID)
	var add, forget []TopicPartition
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			add = append(add, TopicPartition{t.TopicID, p.Partition})
		}
	}
	for _, t := range r.ForgottenTopicsData {
		for _, p := range t.Partitions {
			forget = append(forget, TopicPartition{t.TopicID, p})
		}
	}
	sess, code := a.useSession(group, member, r.ShareSessionEpoch, add, forget, true)
	if code != kerr.None {
		replyError(c, code)
		return
	}
	now, touched := a.now(), map[partKey]bool{}
	acks := map[TopicPartition]kerr.Code{}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			if len(p.AcknowledgementBatches) == 0 {
				continue
			}
			tp := TopicPartition{t.TopicID, p.Partition}
			batches := make([]ackBatch, len(p.AcknowledgementBatches))
			for i, b := range p.AcknowledgementBatches {
				batches[i] = ackBatch{b.FirstOffset, b.LastOffset, b.AcknowledgeTypes}
			}
			acks[tp] = a.acknowledge(group, member, tp, batches, now, touched)
		}
	}
	op := &fetchOp{call: c, req: r, resp: resp, group: group, member: member, acks: acks, touched: touched,
		deadline: now.Add(time.Duration(r.MaxWaitMillis) * time.Millisecond), left: int(r.MaxRecords), self: a.self, root: a.root}
	if op.left <= 0 {
		op.left = 500
	}
	if sess == nil {
		// The final epoch: acknowledgements only; the member's locks go.
		a.releaseMember(group, member)
		for tp := range acks {
			op.parts = append(op.parts, tp)
		}
		op.reads = make([]fetchRead, len(op.parts))
		a.finish(op)
		return
	}
	op.sess, op.parts = sess, append([]TopicPartition(nil), sess.Partitions...)
	a.startRound(op)
}

// startRound reads every session partition that has something to
// acquire, from its first available offset.
func (a *coordinatorActor) startRound(op *fetchOp) {
	now := a.now()
	a.unpark(op)
	op.reads = make([]fetchRead, len(op.parts))
	for i, tp := range op.parts {
		// servable first: in cluster mode a partition this broker has no
		// replica of is NOT_LEADER_OR_FOLLOWER, not an unknown topic.
		code := a.servable(op.group, tp)
		name, view, resolved := a.resolve(tp)
		if code == kerr.None {
			code = resolved
		}
		if code != kerr.None {
			op.reads[i].code = code
			continue
		}
		_, had := a.parts[partKey{op.group, tp}]
		p, ok := a.sharePartition(op.group, tp, view)
		if ok && !had {
			// Where a new share partition starts is state too: a leader
			// after this one must not start it again at a later offset.
			op.touched[partKey{op.group, tp}] = true
		}
		if !ok {
			op.reads[i].code = kerr.NotLeaderOrFollower
			continue
		}
		hw, _, _ := view.Bounds()
		op.reads[i].view, op.reads[i].hw = view, hw
		if p == nil {
			continue // its start is being looked up (by_duration)
		}
		from := p.NextAvailable(now)
		if from >= hw || (a.cfg.Limits.MaxInFlight > 0 && from-p.Start() >= a.cfg.Limits.MaxInFlight) {
			continue
		}
		op.reads[i].from = from
		op.pending++
		slot, self, root := i, a.self, a.root
		if a.sizes == nil {
			a.sizes = readSizes{}
		}
		budget := a.sizes.budget(partKey{op.group, tp}, op.left)
		shards.ReadCommitted(a.env, name, tp.Partition, from, budget, func(ch shards.Chunk) { root.Send(self, &chunkRead{op, slot, ch}) })
	}
	if op.pending == 0 {
		a.endRound(op)
	}
}

func (a *coordinatorActor) onChunk(m *chunkRead) {
	m.op.reads[m.slot].chunk = &m.chunk
	if m.op.pending--; m.op.pending == 0 {
		a.endRound(m.op)
	}
}

// endRound acquires from what was read; a round that got nothing waits
// for something to acquire (park) until the max wait is over.
func (a *coordinatorActor) endRound(op *fetchOp) {
	now := a.now()
	got := false
	op.resp.Topics = op.resp.Topics[:0]
	for i, tp := range op.parts {
		rd := &op.reads[i]
		if rd.chunk == nil || rd.chunk.Err != nil || rd.chunk.TimedOut || len(rd.chunk.Data) == 0 || op.left <= 0 {
			continue
		}
		p := a.parts[partKey{op.group, tp}]
		if p == nil {
			continue
		}
		data := rd.chunk.Data
		a.sizes.learn(partKey{op.group, tp}, rd.from, rd.chunk.Next, len(data))
		last := lastWholeOffset(data, rd.chunk.End)
		runs := p.Acquire(op.member, rd.from, last, op.left, now)
		if len(runs) == 0 {
			continue
		}
		if stop := runs[len(runs)-1].Last; stop < last {
			if end := batchEnd(data, stop); end > stop {
				runs = append(runs, p.AcquireRest(op.member, stop+1, min(end, last), now)...)
			}
		}
		got = true
		op.touched[partKey{op.group, tp}] = true
		for _, run := range runs {
			op.left -= int(run.Last - run.First + 1)
		}
		rd.chunk.Data = batchesCovering(data, runs)
		rd.runs = runs
	}
	if !got && now.Before(op.deadline) && len(op.acks) == 0 {
		a.park(op, now)
		return
	}
	a.finish(op)
}

// retry runs a new round of a waiting fetch woken in round (a wake of an
// earlier round is stale: the fetch read again since, or answered). In
// cluster mode membership lives on the coordinator, not here.
func (a *coordinatorActor) retry(op *fetchOp, round int32) {
	if op.round.Load() != round {
		return
	}
	if g := a.groups[op.group]; a.cl == nil && (g == nil || g.Members[op.member] == nil) {
		a.unpark(op)
		op.resp.ErrorCode = int16(kerr.UnknownMemberID)
		a.reply(op.call, op.resp, nil)
		return
	}
	if a.sessions[[2]string{op.group, op.member}] != op.sess {
		// The share session closed (its member's locks released) or
		// started over while the fetch waited: records acquired now
		// would be locked for a consumer that no longer reads them.
		a.finish(op)
		return
	}
	a.startRound(op)
}

// finish lays out the response and replies once the touched share
// partitions' state is durable.
func (a *coordinatorActor) finish(op *fetchOp) {
	a.unpark(op)
	byTopic := map[[16]byte]int{}
	for i, tp := range op.parts {
		rd := op.reads[i]
		ack, hasAck := op.acks[tp]
		if rd.code == kerr.None && len(rd.runs) == 0 && !hasAck {
			// Partitions with nothing to say are left out.
			continue
		}
		ti, ok := byTopic[tp.Topic]
		if !ok {
			ti = len(op.resp.Topics)
			byTopic[tp.Topic] = ti
			t := kmsg.NewShareFetchResponseTopic()
			t.TopicID = tp.Topic
			op.resp.Topics = append(op.resp.Topics, t)
		}
		p := kmsg.NewShareFetchResponseTopicPartition()
		p.Partition = tp.Partition
		p.ErrorCode = int16(rd.code)
		p.AcknowledgeErrorCode = int16(ack)
		p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = -1, -1
		// Empty, never null: Kafka answers MemoryRecords.EMPTY, and
		// Java's share consumer was seen to stop fetching after an
		// entry with null records.
		p.Records = []byte{}
		if len(rd.runs) > 0 {
			p.Records = rd.chunk.Data
			for _, run := range rd.runs {
				ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
				ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = run.First, run.Last, run.Deliveries
				p.AcquiredRecords = append(p.AcquiredRecords, ar)
			}
		}
		op.resp.Topics[ti].Partitions = append(op.resp.Topics[ti].Partitions, p)
	}
	a.reply(op.call, op.resp, op.touched)
}

// lastWholeOffset is the last offset of the last whole batch in data,
// below end (the high watermark the read stopped at).
func lastWholeOffset(data []byte, end int64) int64 {
	last := int64(-1)
	for _, h := range eachWholeBatch(data) {
		last = h.LastOffset()
	}
	return min(last, end-1)
}

// batchEnd is the last offset of the batch of data that holds offset o
// (o itself when none does).
func batchEnd(data []byte, o int64) int64 {
	for _, h := range eachWholeBatch(data) {
		if h.BaseOffset <= o && o <= h.LastOffset() {
			return h.LastOffset()
		}
	}
	return o
}

// batchesCovering keeps the whole batches of data that hold an acquired
// offset (the client reads only acquired records out of them).
func batchesCovering(data []byte, runs []AcquiredRun) []byte {
	// Usually the covering batches are one stretch of data (a fetch
	// acquires from the first available offset on): that stretch is
	// answered as it is, without copying it.
	var spans [][2]int
	for pos, h := range eachWholeBatch(data) {
		end := pos + int(h.Size())
		if covers(runs, h.BaseOffset, h.LastOffset()) {
			if n := len(spans); n > 0 && spans[n-1][1] == pos {
				spans[n-1][1] = end
			} else {
				spans = append(spans, [2]int{pos, end})
			}
		}
	}
	switch len(spans) {
	case 0:
		return nil
	case 1:
		return data[spans[0][0]:spans[0][1]]
	}
	var out []byte
	for _, sp := range spans {
		out = append(out, data[sp[0]:sp[1]]...)
	}
	return out
}

// covers reports whether any of runs holds an offset of base..last.
func covers(runs []AcquiredRun, base, last int64) bool {
	for _, r := range runs {
		if r.First <= last && r.Last >= base {
			return true
		}
	}
	return false
}
