package partition

import (
	"errors"
	"time"

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

// listOffsets answers one partition of ListOffsets into m.Out (whose
// Timestamp, Offset and LeaderEpoch start at -1).
func (p *partitionActor) listOffsets(m *ListOffsets) {
	ts, follower, out := m.Timestamp, m.Follower, m.Out
	if code := p.servable(m.CurrentEpoch); code != kerr.None {
		out.ErrorCode = int16(code)
		return
	}
	// What a reader may see: the high watermark (read_committed: the
	// last stable offset), or the log end for a follower.
	bound := p.highWatermark()
	if m.ReadCommitted {
		bound = p.lastStableOffset()
	}
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

// deleteRecords answers one partition of DeleteRecords into m.Out.
func (p *partitionActor) deleteRecords(m *DeleteRecords) {
	offset, out := m.Offset, m.Out
	if p.plog == nil || p.spec.Follower {
		out.ErrorCode = int16(p.servable(-1))
		return
	}
	hw := p.highWatermark()
	if offset == -1 {
		offset = hw
	}
	if offset < 0 || offset > hw {
		out.ErrorCode = int16(kerr.OffsetOutOfRange)
		out.LowWatermark = p.plog.LogStartOffset()
		return
	}
	before := p.plog.LogStartOffset()
	if _, err := p.plog.DeleteRecordsBefore(offset); err != nil {
		code := kerr.KafkaStorageError
		if errors.Is(err, segment.ErrOffsetOutOfRange) {
			code = kerr.OffsetOutOfRange
		}
		p.log.Error("DeleteRecords failed", append(p.attrs(), "offset", offset, "err", err)...)
		out.ErrorCode = int16(code)
		return
	}
	out.LowWatermark = p.plog.LogStartOffset()
	if out.LowWatermark > before {
		// Persist the new log start now (segment writes it with the
		// directory's checkpoint), so a crash does not bring the deleted
		// records back.
		if c, ok := p.dir.(Checkpointer); ok {
			if err := c.Checkpoint(); err != nil {
				p.log.Warn("log start offset checkpoint not written; deleted records may reappear after a crash",
					append(p.attrs(), "err", err)...)
			}
		}
	}
}

// endOffsetForEpoch answers one partition of OffsetForLeaderEpoch.
func (p *partitionActor) endOffsetForEpoch(m *EndOffsetForEpoch) {
	if code := p.servable(m.CurrentEpoch); code != kerr.None {
		m.Out.ErrorCode = int16(code)
		return
	}
	m.Out.LeaderEpoch, m.Out.EndOffset = p.plog.EndOffsetForEpoch(m.Epoch)
}

var errLogOffline = errors.New("partition: the log is offline")

// offline is the code a request for this partition gets while it has no
// log: UNKNOWN_TOPIC_OR_PARTITION once its topic is deleted (as Kafka
// answers), NOT_LEADER_OR_FOLLOWER while its log cannot open or is
// closing (the client refreshes its metadata and retries).
func (p *partitionActor) offline() kerr.Code {
	if p.deleted {
		return kerr.UnknownTopicOrPartition
	}
	return kerr.NotLeaderOrFollower
}

// servable is the code for a request at the client's leader epoch
// (currentEpoch, -1: unchecked): the partition must have its log, and the
// epochs agree (CheckLeaderEpoch).
func (p *partitionActor) servable(currentEpoch int32) kerr.Code {
	if p.plog == nil {
		return p.offline()
	}
	if p.spec.Follower {
		return kerr.NotLeaderOrFollower
	}
	return CheckLeaderEpoch(currentEpoch, p.spec.LeaderEpoch)
}

// readChunk reads batches of the partition from offset from, below the
// high watermark (ReadChunk). It returns the bytes,
// the next offset to read and the end the load stops at (the high
// watermark when the load began is not tracked: a partition that a load
// reads is written only by the loading coordinator, which writes nothing
// while it loads).
func (p *partitionActor) readChunk(m *ReadChunk) (data []byte, next, end int64, err error) {
	if p.plog == nil {
		return nil, 0, 0, errLogOffline
	}
	from, maxBytes := m.From, m.MaxBytes
	if maxBytes <= 0 || maxBytes > ChunkBytes {
		maxBytes = ChunkBytes
	}
	end = p.highWatermark()
	if p.core != nil && p.core.Leading() && !m.Committed {
		// A new leader's log is the partition's: its coordinator loads
		// all of it, as Kafka's does, not only what its high watermark
		// (which starts low and waits for the followers) already covers.
		end = p.plog.LogEndOffset()
	}
	if from < p.plog.LogStartOffset() {
		from = p.plog.LogStartOffset()
	}
	if from >= end {
		return nil, end, end, nil
	}
	data, next, err = p.plog.ReadBytes(segment.ReadRequest{Offset: from, MaxBytes: int64(maxBytes), MaxOffset: end, MinOneBatch: true})
	if err == nil && next <= from {
		next = end // nothing below the watermark after all
	}
	return data, next, end, err
}

// retain applies retention to the partition's log.
func (p *partitionActor) retain(now time.Time) {
	if p.plog == nil {
		return
	}
	res, err := p.plog.DeleteExpired(now.UnixMilli())
	if err != nil {
		p.log.Error("retention failed", append(p.attrs(), "err", err)...)
		return
	}
	if res.DeletedSegments > 0 {
		p.log.Info("retention deleted old segments", append(p.attrs(), "segments", res.DeletedSegments,
			"bytes", res.DeletedBytes, "log_start_offset", res.LogStartOffset)...)
	}
}

// CheckLeaderEpoch compares a client's current leader epoch (-1: not
// given) with the partition's: an older one is FENCED_LEADER_EPOCH (the
// client's metadata is stale), a newer one UNKNOWN_LEADER_EPOCH (ours is).
func CheckLeaderEpoch(client, ours int32) kerr.Code {
	switch {
	case client < 0 || client == ours:
		return kerr.None
	case client < ours:
		return kerr.FencedLeaderEpoch
	}
	return kerr.UnknownLeaderEpoch
}
