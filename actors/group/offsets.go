package group

import (
	"cmp"
	"slices"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetCommit handles an OffsetCommit (v0-v9; v0 and v1 are treated as
// simple commits). Members of the group commit with their member id and
// the current generation; a "simple" consumer (assign(), no group
// management) commits with generation -1 and no member id, which is
// allowed only while the group has no members. Accepted offsets are
// appended to the log and become visible, and are answered, from
// OnAppended.
func (g *Group) OffsetCommit(t Ticket, req *kmsg.OffsetCommitRequest, now time.Time) Effects {
	g.begin()
	g.commit(t, req, now)
	return g.end()
}

func (g *Group) commit(t Ticket, req *kmsg.OffsetCommitRequest, now time.Time) {
	generation, memberID := req.Generation, req.MemberID
	if req.Version < 1 {
		generation, memberID = -1, ""
	}
	var instance *string
	if req.Version >= 7 {
		instance = req.InstanceID
	}
	code := g.validateCommit(generation, memberID, instance, now)
	if code != kerr.None {
		g.reply(t, commitResponse(req, func(string, int32) kerr.Code { return code }))
		return
	}

	expire := int64(-1)
	if req.Version >= 2 && req.Version <= 4 && req.RetentionTimeMillis >= 0 {
		expire = now.UnixMilli() + req.RetentionTimeMillis
	}
	codes := map[topicPartition]kerr.Code{}
	values := map[topicPartition]OffsetValue{}
	var recs []Record
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			tp := topicPartition{rt.Topic, rp.Partition}
			epoch := int32(-1)
			if req.Version >= 6 {
				epoch = rp.LeaderEpoch
			}
			ov, rec, code := g.offsetRecord(tp, rp.Offset, epoch, rp.Metadata, now, expire)
			if code == kerr.None {
				if _, dup := values[tp]; !dup {
					g.pendingCommits[tp]++
				}
				values[tp] = ov
				recs = append(recs, rec)
			}
			codes[tp] = code
		}
	}
	if len(recs) == 0 {
		g.reply(t, commitResponse(req, func(topic string, p int32) kerr.Code { return codes[topicPartition{topic, p}] }))
		return
	}
	g.appendRecords(recs, func(code kerr.Code, _ time.Time) {
		for tp, ov := range values {
			if g.pendingCommits[tp]--; g.pendingCommits[tp] <= 0 {
				delete(g.pendingCommits, tp)
			}
			if code != kerr.None {
				codes[tp] = offsetAppendError(code)
				continue
			}
			if g.state != Dead {
				g.offsets[tp] = ov
			}
		}
		g.reply(t, commitResponse(req, func(topic string, p int32) kerr.Code { return codes[topicPartition{topic, p}] }))
	})
}

// offsetRecord is the value and record of one partition's commit, or
// OFFSET_METADATA_TOO_LARGE.
func (g *Group) offsetRecord(tp topicPartition, offset int64, epoch int32, metadata *string, now time.Time, expire int64) (OffsetValue, Record, kerr.Code) {
	meta := ""
	if metadata != nil {
		meta = *metadata
	}
	if len(meta) > g.cfg.OffsetMetadataMaxBytes {
		return OffsetValue{}, Record{}, kerr.OffsetMetadataTooLarge
	}
	ov := OffsetValue{Offset: offset, LeaderEpoch: epoch, Metadata: meta, CommitTimestamp: now.UnixMilli(), ExpireTimestamp: expire}
	return ov, Record{Key: OffsetKeyBytes(g.id, tp.topic, tp.partition), Value: OffsetValueBytes(ov)}, kerr.None
}

// validateCommit checks who may commit: a member of the current
// generation, or a simple consumer while the group has no members.
func (g *Group) validateCommit(generation int32, memberID string, instance *string, now time.Time) kerr.Code {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable
	}
	if !g.exists() && generation >= 0 {
		// An unknown group and a generation: a member of a group that
		// is gone.
		return kerr.IllegalGeneration
	}
	if g.cg != nil {
		return g.validateConsumerCommit(generation, memberID)
	}
	if generation >= 0 || memberID != "" || instance != nil {
		m := g.get(memberID)
		switch {
		case g.fenced(instance, memberID):
			return kerr.FencedInstanceID
		case m == nil:
			return kerr.UnknownMemberID
		case generation != g.generation:
			return kerr.IllegalGeneration
		}
		switch g.state {
		case CompletingRebalance:
			// Its JoinGroup answer is newer than its assignment:
			// let it finish the rebalance first.
			return kerr.RebalanceInProgress
		case Stable, PreparingRebalance:
			// Still allowed while rebalancing: the heartbeat answer
			// tells the member to rejoin.
			g.heartbeatFrom(m, now)
		}
		return kerr.None
	}
	if g.state != Empty && len(g.members) > 0 {
		return kerr.UnknownMemberID
	}
	return kerr.None
}

// commitResponse mirrors the request's topics and partitions with codes.
func commitResponse(req *kmsg.OffsetCommitRequest, code func(topic string, partition int32) kerr.Code) *kmsg.OffsetCommitResponse {
	r := kmsg.NewPtrOffsetCommitResponse()
	r.Version = req.Version
	for _, rt := range req.Topics {
		t := kmsg.NewOffsetCommitResponseTopic()
		t.Topic = rt.Topic
		t.TopicID = rt.TopicID
		for _, rp := range rt.Partitions {
			p := kmsg.NewOffsetCommitResponseTopicPartition()
			p.Partition = rp.Partition
			p.ErrorCode = int16(code(rt.Topic, rp.Partition))
			t.Partitions = append(t.Partitions, p)
		}
		r.Topics = append(r.Topics, t)
	}
	return r
}

// FetchedOffset is one partition's committed offset as OffsetFetch
// returns it.
type FetchedOffset struct {
	Topic       string
	Partition   int32
	Offset      int64 // -1 when nothing is committed
	LeaderEpoch int32 // -1 when unknown
	Metadata    string
	Code        kerr.Code // None, or UNSTABLE_OFFSET_COMMIT
}

// TopicPartitions names partitions to fetch; nil means every committed
// partition of the group.
type TopicPartitions map[string][]int32

// FetchOffsets returns the group's committed offsets for the partitions
// asked (nil: all committed ones, sorted by topic then partition). A
// partition with no commit reads -1. With requireStable, a partition whose
// commit is still being appended reads UNSTABLE_OFFSET_COMMIT (the client
// retries). OffsetFetch is allowed in every state; an unknown or deleted
// group simply has no offsets.
func (g *Group) FetchOffsets(asked TopicPartitions, requireStable bool) []FetchedOffset {
	var out []FetchedOffset
	live := g.state != Dead
	if asked == nil {
		if !live {
			return nil
		}
		for tp, ov := range g.offsets {
			out = append(out, FetchedOffset{Topic: tp.topic, Partition: tp.partition, Offset: ov.Offset, LeaderEpoch: ov.LeaderEpoch, Metadata: ov.Metadata})
		}
		slices.SortFunc(out, func(a, b FetchedOffset) int {
			return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
		})
		return out
	}
	topics := make([]string, 0, len(asked))
	for t := range asked {
		topics = append(topics, t)
	}
	slices.Sort(topics)
	for _, topic := range topics {
		for _, p := range asked[topic] {
			tp := topicPartition{topic, p}
			f := FetchedOffset{Topic: topic, Partition: p, Offset: -1, LeaderEpoch: -1}
			switch ov, ok := g.offsets[tp]; {
			case !live:
			case requireStable && (g.pendingCommits[tp] > 0 || g.unstable(tp)):
				f.Code = kerr.UnstableOffsetCommit
			case ok:
				f.Offset, f.LeaderEpoch, f.Metadata = ov.Offset, ov.LeaderEpoch, ov.Metadata
			}
			out = append(out, f)
		}
	}
	return out
}

// OffsetFetch answers an OffsetFetch for this group: v0-v7 whole, v8+ the
// entries of req.Groups that name this group (the router merges the
// per-group answers of a batched request; see Coordinator).
func (g *Group) OffsetFetch(req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	r := kmsg.NewPtrOffsetFetchResponse()
	r.Version = req.Version
	if req.Version < 8 {
		var asked TopicPartitions
		if req.Topics != nil {
			asked = TopicPartitions{}
			for _, t := range req.Topics {
				asked[t.Topic] = append(asked[t.Topic], t.Partitions...)
			}
		}
		for _, f := range g.FetchOffsets(asked, req.Version >= 7 && req.RequireStable) {
			if n := len(r.Topics); n == 0 || r.Topics[n-1].Topic != f.Topic {
				t := kmsg.NewOffsetFetchResponseTopic()
				t.Topic = f.Topic
				r.Topics = append(r.Topics, t)
			}
			p := kmsg.NewOffsetFetchResponseTopicPartition()
			p.Partition, p.Offset, p.LeaderEpoch = f.Partition, f.Offset, f.LeaderEpoch
			p.Metadata = strPtr(f.Metadata)
			p.ErrorCode = int16(f.Code)
			t := &r.Topics[len(r.Topics)-1]
			t.Partitions = append(t.Partitions, p)
		}
		return r
	}
	for _, rg := range req.Groups {
		if rg.Group != g.id {
			continue
		}
		r.Groups = append(r.Groups, g.offsetFetchGroup(rg, req.RequireStable))
	}
	return r
}

func (g *Group) offsetFetchGroup(rg kmsg.OffsetFetchRequestGroup, requireStable bool) kmsg.OffsetFetchResponseGroup {
	out := kmsg.NewOffsetFetchResponseGroup()
	out.Group = rg.Group
	if code := g.validateConsumerFetch(rg.MemberID, rg.MemberEpoch); code != kerr.None {
		out.ErrorCode = int16(code)
		return out
	}
	var asked TopicPartitions
	if rg.Topics != nil {
		asked = TopicPartitions{}
		for _, t := range rg.Topics {
			asked[t.Topic] = append(asked[t.Topic], t.Partitions...)
		}
	}
	for _, f := range g.FetchOffsets(asked, requireStable) {
		if n := len(out.Topics); n == 0 || out.Topics[n-1].Topic != f.Topic {
			t := kmsg.NewOffsetFetchResponseGroupTopic()
			t.Topic = f.Topic
			out.Topics = append(out.Topics, t)
		}
		p := kmsg.NewOffsetFetchResponseGroupTopicPartition()
		p.Partition, p.Offset, p.LeaderEpoch = f.Partition, f.Offset, f.LeaderEpoch
		p.Metadata = strPtr(f.Metadata)
		p.ErrorCode = int16(f.Code)
		t := &out.Topics[len(out.Topics)-1]
		t.Partitions = append(t.Partitions, p)
	}
	return out
}

// OffsetDelete handles an OffsetDelete (v0): an Empty group's offsets may
// all be deleted; a consumer group with members keeps the offsets of
// topics it subscribes to (GROUP_SUBSCRIBED_TO_TOPIC); any other group
// with members answers NON_EMPTY_GROUP. Deleted offsets are written as
// tombstones and answered from OnAppended.
func (g *Group) OffsetDelete(t Ticket, req *kmsg.OffsetDeleteRequest, now time.Time) Effects {
	g.begin()
	r := kmsg.NewPtrOffsetDeleteResponse()
	r.Version = req.Version
	groupCode := kerr.None
	switch {
	case req.Group == "":
		groupCode = kerr.InvalidGroupID
	case !g.exists():
		groupCode = kerr.GroupIDNotFound
	case g.state != Empty && g.protocolType != consumerProtocolType:
		groupCode = kerr.NonEmptyGroup
	}
	if groupCode != kerr.None {
		r.ErrorCode = int16(groupCode)
		g.reply(t, r)
		return g.end()
	}
	var recs []Record
	for _, rt := range req.Topics {
		ot := kmsg.NewOffsetDeleteResponseTopic()
		ot.Topic = rt.Topic
		subscribed := g.state != Empty && g.subscribed[rt.Topic]
		for _, rp := range rt.Partitions {
			op := kmsg.NewOffsetDeleteResponseTopicPartition()
			op.Partition = rp.Partition
			if subscribed {
				op.ErrorCode = int16(kerr.GroupSubscribedToTopic)
			} else if tp := (topicPartition{rt.Topic, rp.Partition}); g.hasOffset(tp) {
				delete(g.offsets, tp)
				recs = append(recs, Record{Key: OffsetKeyBytes(g.id, tp.topic, tp.partition)})
			}
			ot.Partitions = append(ot.Partitions, op)
		}
		r.Topics = append(r.Topics, ot)
	}
	if len(recs) == 0 {
		g.reply(t, r)
		return g.end()
	}
	g.appendRecords(recs, func(code kerr.Code, _ time.Time) {
		if code != kerr.None {
			r.ErrorCode = int16(groupAppendError(code))
		}
		g.reply(t, r)
	})
	return g.end()
}

func (g *Group) hasOffset(tp topicPartition) bool {
	_, ok := g.offsets[tp]
	return ok
}

// ExpireOffsets drops offsets older than offsets.retention.minutes and
// writes their tombstones; the shell calls it periodically
// (offsets.retention.check.interval.ms, 10 minutes in Kafka). The clock
// starts when the group became Empty (all offsets expire together), at the
// commit for a group that never had members, and for a Stable consumer
// group only topics it no longer subscribes to expire. A commit with an
// explicit expire timestamp (OffsetCommit v2-v4) expires then. An Empty
// group left with no offsets is dead: its tombstone is written too.
func (g *Group) ExpireOffsets(now time.Time) Effects {
	g.begin()
	if !g.exists() {
		return g.end()
	}
	nowMs := now.UnixMilli()
	retention := g.cfg.OffsetsRetention.Milliseconds()
	var base func(OffsetValue) int64
	var keep map[string]bool
	switch {
	case g.state == Empty && g.protocolType != "":
		base = func(ov OffsetValue) int64 {
			if g.stateTimestamp >= 0 {
				return g.stateTimestamp
			}
			return ov.CommitTimestamp
		}
	case g.state == Empty:
		base = func(ov OffsetValue) int64 { return ov.CommitTimestamp }
	case g.state == Stable && g.protocolType == consumerProtocolType && g.subscribed != nil:
		base = func(ov OffsetValue) int64 { return ov.CommitTimestamp }
		keep = g.subscribed
	default:
		return g.end()
	}
	var expired []topicPartition
	for tp, ov := range g.offsets {
		if keep[tp.topic] || g.pendingCommits[tp] > 0 {
			continue
		}
		if ov.ExpireTimestamp >= 0 && nowMs >= ov.ExpireTimestamp ||
			ov.ExpireTimestamp < 0 && nowMs-base(ov) >= retention {
			expired = append(expired, tp)
		}
	}
	sortTPs(expired)
	var recs []Record
	for _, tp := range expired {
		delete(g.offsets, tp)
		recs = append(recs, Record{Key: OffsetKeyBytes(g.id, tp.topic, tp.partition)})
	}
	if g.state == Empty && len(g.offsets) == 0 && len(g.pendingCommits) == 0 {
		recs = append(recs, g.die(now)...)
	}
	if len(recs) > 0 {
		g.appendRecords(recs, func(kerr.Code, time.Time) {})
	}
	return g.end()
}

// die makes the group Dead: every timer is disarmed and nothing of it
// stays but its tombstone, which die returns.
func (g *Group) die(now time.Time) []Record {
	for k := range g.timers {
		g.disarm(k.Kind, k.Member)
	}
	clear(g.pending)
	g.transition(Dead, now)
	if g.cg != nil {
		return g.dropConsumerGroup()
	}
	return []Record{{Key: GroupKeyBytes(g.id)}}
}

// sortedOffsets lists the committed partitions in order.
func (g *Group) sortedOffsets() []topicPartition {
	tps := make([]topicPartition, 0, len(g.offsets))
	for tp := range g.offsets {
		tps = append(tps, tp)
	}
	sortTPs(tps)
	return tps
}

func sortTPs(tps []topicPartition) {
	slices.SortFunc(tps, func(a, b topicPartition) int {
		return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
}
