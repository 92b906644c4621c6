package sharegroup

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/shards"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// retryEvery is how often a ShareFetch that acquired nothing looks again
// before its max wait runs out: records arrive by produce and come back
// by lock expiry, and a short poll of the actor's own state serves both
// without hooking the partitions' high-watermark waiters.
const retryEvery = 50 * time.Millisecond

// fetchOp is one ShareFetch in progress: its response, the session's
// partitions and, per partition, the read in flight.
type fetchOp struct {
	call     *Call
	req      *kmsg.ShareFetchRequest
	resp     *kmsg.ShareFetchResponse
	group    string
	member   string
	parts    []TopicPartition
	acks     map[TopicPartition]kerr.Code
	deadline time.Time
	left     int // records still to acquire (MaxRecords)
	pending  int
	reads    []fetchRead
	touched  map[partKey]bool
}

type fetchRead struct {
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
	resp.AcquisitionLockTimeoutMillis = int32(a.cfg.Limits.LockDuration.Milliseconds())
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
		deadline: now.Add(time.Duration(r.MaxWaitMillis) * time.Millisecond), left: int(r.MaxRecords)}
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
	op.parts = append([]TopicPartition(nil), sess.Partitions...)
	a.startRound(op)
}

// startRound reads every session partition that has something to
// acquire, from its first available offset.
func (a *coordinatorActor) startRound(op *fetchOp) {
	now := a.now()
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
		from := p.NextAvailable(now)
		if from >= hw || (a.cfg.Limits.MaxInFlight > 0 && from-p.Start() >= a.cfg.Limits.MaxInFlight) {
			continue
		}
		op.reads[i].from = from
		op.pending++
		slot, self, root := i, a.self, a.root
		shards.ReadChunk(a.env, name, tp.Partition, from, func(ch shards.Chunk) { root.Send(self, &chunkRead{op, slot, ch}) })
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
// and tries again until the max wait is over.
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
		last := lastWholeOffset(data, rd.chunk.End)
		runs := p.Acquire(op.member, rd.from, last, op.left, now)
		if len(runs) == 0 {
			continue
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
		self, root := a.self, a.root
		time.AfterFunc(min(retryEvery, op.deadline.Sub(now)), func() { root.Send(self, &retryFetch{op}) })
		return
	}
	a.finish(op)
}

func (a *coordinatorActor) retry(op *fetchOp) {
	if g := a.groups[op.group]; a.cl == nil && (g == nil || g.Members[op.member] == nil) {
		op.resp.ErrorCode = int16(kerr.UnknownMemberID)
		a.reply(op.call, op.resp, nil)
		return
	}
	a.startRound(op)
}

// finish lays out the response and replies once the touched share
// partitions' state is durable.
func (a *coordinatorActor) finish(op *fetchOp) {
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
	for len(data) >= int(wire.BatchHeaderSize) {
		h, err := wire.ParseBatchHeader(data)
		if err != nil || h.Size() > int64(len(data)) {
			break
		}
		last = h.LastOffset()
		data = data[h.Size():]
	}
	return min(last, end-1)
}

// batchesCovering keeps the whole batches of data that hold an acquired
// offset (the client reads only acquired records out of them).
func batchesCovering(data []byte, runs []AcquiredRun) []byte {
	var out []byte
	for len(data) >= int(wire.BatchHeaderSize) {
		h, err := wire.ParseBatchHeader(data)
		if err != nil || h.Size() > int64(len(data)) {
			break
		}
		b := data[:h.Size()]
		data = data[h.Size():]
		for _, r := range runs {
			if r.First <= h.LastOffset() && r.Last >= h.BaseOffset {
				out = append(out, b...)
				break
			}
		}
	}
	return out
}
