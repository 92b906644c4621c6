package actors

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Special timestamps of ListOffsets beyond segment's (KIP-405, KIP-1005):
// with no tiered storage the earliest local offset is the log start and
// the latest tiered offset does not exist.
const (
	earliestLocalTimestamp = -4
	latestTieredTimestamp  = -5
)

// handleListOffsets answers ListOffsets v1+ from the partition actors.
// Consumers (replica id -1) see offsets below the high watermark; with
// read_committed the bound is the last stable offset, which equals the
// high watermark while transactions are not implemented.
func handleListOffsets(b *Broker, req *wire.Request) {
	body := req.Body.(*kmsg.ListOffsetsRequest)
	resp := body.ResponseKind().(*kmsg.ListOffsetsResponse)
	routes := b.Routes()
	var tasks partitionTasks
	resp.Topics = make([]kmsg.ListOffsetsResponseTopic, len(body.Topics))
	for i := range body.Topics {
		rt := &body.Topics[i]
		st := &resp.Topics[i]
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.ListOffsetsResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			rp, sp := &rt.Partitions[j], &st.Partitions[j]
			sp.Default()
			sp.Partition = rp.Partition
			pid, code := lookupPartition(routes, rt.Topic, rp.Partition)
			if code != kerr.None {
				sp.ErrorCode = int16(code)
				continue
			}
			follower := body.ReplicaID >= 0
			tasks.add(pid, func(p *partitionActor) { p.listOffset(rp.Timestamp, rp.CurrentLeaderEpoch, follower, sp) })
		}
	}
	tasks.start(b, func(timedOut bool) {
		if timedOut {
			resp = body.ResponseKind().(*kmsg.ListOffsetsResponse)
			for _, rt := range body.Topics {
				st := kmsg.NewListOffsetsResponseTopic()
				st.Topic = rt.Topic
				for _, rp := range rt.Partitions {
					sp := kmsg.NewListOffsetsResponseTopicPartition()
					sp.Partition, sp.ErrorCode = rp.Partition, int16(kerr.RequestTimedOut)
					st.Partitions = append(st.Partitions, sp)
				}
				resp.Topics = append(resp.Topics, st)
			}
		}
		reply(req, resp)
	})
}

// listOffset answers one partition of ListOffsets into out (whose
// Timestamp, Offset and LeaderEpoch start at -1).
func (p *partitionActor) listOffset(ts int64, currentEpoch int32, follower bool, out *kmsg.ListOffsetsResponseTopicPartition) {
	if p.plog == nil {
		out.ErrorCode = int16(kerr.NotLeaderOrFollower)
		return
	}
	if code := checkLeaderEpoch(currentEpoch, p.spec.LeaderEpoch); code != kerr.None {
		out.ErrorCode = int16(code)
		return
	}
	// What a reader may see: the high watermark (= last stable offset),
	// or the log end for a follower.
	bound := p.highWatermark()
	if follower {
		bound = p.plog.LogEndOffset()
	}
	switch ts {
	case segment.LatestTimestamp:
		out.Offset, out.LeaderEpoch = bound, p.spec.LeaderEpoch
		return
	case segment.EarliestTimestamp, earliestLocalTimestamp:
		start := p.plog.LogStartOffset()
		out.Offset, out.LeaderEpoch = start, p.epochAt(start)
		return
	case latestTieredTimestamp:
		return // no tiered storage: offset -1
	}
	if ts < 0 && ts != segment.MaxTimestamp {
		out.ErrorCode = int16(kerr.InvalidRequest)
		return
	}
	r, err := p.plog.OffsetForTimestamp(ts)
	if err != nil {
		code := kerr.KafkaStorageError
		if errors.Is(err, segment.ErrClosed) {
			code = kerr.NotLeaderOrFollower
		}
		p.log.Error("offset lookup by timestamp failed", append(p.attrs(), "timestamp", ts, "err", err)...)
		out.ErrorCode = int16(code)
		return
	}
	if r.Found && r.Offset >= 0 {
		r = p.exactTimestampOffset(r, ts)
	}
	if r.Found && r.Offset >= 0 && r.Offset < bound {
		out.Offset, out.Timestamp, out.LeaderEpoch = r.Offset, r.Timestamp, p.epochAt(r.Offset)
	}
}

// exactTimestampOffset narrows segment's answer inside a compressed or
// LogAppendTime batch, which segment gives at batch granularity (the
// batch's first offset or later, its max timestamp), to the record Kafka
// names: the first record at or after the answer's offset whose timestamp
// is at or after ts (ts >= 0), or equals the maximum (MaxTimestamp).
// Only that one batch is read and decompressed. On any trouble the
// coarse answer stands.
func (p *partitionActor) exactTimestampOffset(r segment.TimestampOffset, ts int64) segment.TimestampOffset {
	data, _, err := p.plog.ReadBytes(segment.ReadRequest{Offset: r.Offset, MaxBytes: 1, MaxOffset: -1, MinOneBatch: true})
	if err != nil {
		return r
	}
	h, err := wire.ParseBatchHeader(data)
	if err != nil || h.Size() > int64(len(data)) || h.BaseOffset > r.Offset || h.LastOffset() < r.Offset {
		return r
	}
	from := r.Offset
	if ts == segment.MaxTimestamp {
		from = max(h.BaseOffset, p.plog.LogStartOffset())
	}
	if h.Attributes&wire.AttrTimestampLogTime != 0 {
		// Every record carries the append time.
		return segment.TimestampOffset{Offset: from, Timestamp: h.MaxTimestamp, Found: true}
	}
	if h.Codec() == wire.CodecNone {
		return r // segment read the records itself
	}
	it, scratch, err := wire.NewBatchRecordIter(data[:h.Size()], p.scratch[:0], 32*int(p.core.Rules().MaxMessageBytes))
	p.scratch = scratch
	if err != nil {
		return r
	}
	var rec wire.Record
	for it.Next(&rec) {
		off, rts := h.BaseOffset+int64(rec.OffsetDelta), h.BaseTimestamp+rec.TimestampDelta
		if off < from {
			continue
		}
		if (ts == segment.MaxTimestamp && rts == r.Timestamp) || (ts >= 0 && rts >= ts) {
			return segment.TimestampOffset{Offset: off, Timestamp: rts, Found: true}
		}
	}
	return r
}

// epochAt is the leader epoch that wrote offset, from the log's epoch
// cache, or -1.
func (p *partitionActor) epochAt(offset int64) int32 {
	epoch := int32(-1)
	for _, e := range p.plog.Epochs() {
		if e[1] > offset {
			break
		}
		epoch = int32(e[0])
	}
	return epoch
}
