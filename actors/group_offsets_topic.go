package actors

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire"
)

// OffsetsTopic is the internal topic that holds committed offsets and group
// metadata, in Kafka's record formats (actors/group/records.go).
const OffsetsTopic = "__consumer_offsets"

// ensureOffsetsTopic creates __consumer_offsets (offsets.topic.num.partitions
// partitions, compacted, offsets.topic.segment.bytes segments) unless it
// exists, inside the metadata actor, and calls done (on the metadata
// actor's goroutine or a gather's) with its partition count once its logs
// are open, and whether it was just made (0 and an error if it cannot
// be). An
// existing topic keeps its partition count: groups live where their
// records are.
func (b *Broker) ensureOffsetsTopic(done func(partitions int32, created bool, err error)) {
	n, _ := strconv.Atoi(b.cfg.Value("offsets.topic.num.partitions"))
	segBytes := b.cfg.Value("offsets.topic.segment.bytes")
	create := func(a *metadataActor, _ *wire.Request) {
		if t, ok := a.state.Topic(OffsetsTopic); ok {
			done(int32(len(t.Partitions)), false, nil)
			return
		}
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = OffsetsTopic, int32(n), 1
		for _, kv := range [][2]string{{"cleanup.policy", "compact"}, {"segment.bytes", segBytes}, {"compression.type", "producer"}} {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = kv[0], &kv[1]
			rt.Configs = append(rt.Configs, c)
		}
		req.Topics = append(req.Topics, rt)
		resp, eff := a.state.CreateTopics(req, a.now())
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
			msg := "no answer"
			if len(resp.Topics) == 1 && resp.Topics[0].ErrorMessage != nil {
				msg = *resp.Topics[0].ErrorMessage
			}
			done(0, false, fmt.Errorf("actors: create %s: %s", OffsetsTopic, msg))
			return
		}
		a.b.log.Info("internal topic created", "topic", OffsetsTopic, "partitions", n)
		a.apply(eff, func() { done(int32(n), true, nil) })
	}
	b.system.Root.Send(b.meta, &adminRequest{req: &wire.Request{Header: wire.RequestHeader{APIKey: int16(kmsg.CreateTopics)}, Reply: func(*wire.Response) {}}, handle: create})
}

// buildGroupBatch encodes records as one uncompressed RecordBatch v2 (no
// producer id, offsets and epoch filled in by the partition), timestamped
// nowMs. A nil value is a tombstone.
func buildGroupBatch(records []group.Record, nowMs int64) []byte {
	b := make([]byte, wire.BatchHeaderSize, wire.BatchHeaderSize+64*len(records))
	var rec kmsg.Record
	for i, r := range records {
		rec = kmsg.Record{OffsetDelta: int32(i), Key: r.Key, Value: r.Value}
		rec.Length = 0
		start := len(b)
		b = rec.AppendTo(b)
		// AppendTo wrote length 0 (one varint byte): re-encode with the
		// real length of what follows it.
		rec.Length = int32(len(b) - start - 1)
		b = rec.AppendTo(b[:start])
	}
	be := binary.BigEndian
	be.PutUint32(b[wire.BatchLengthPos:], uint32(len(b)-int(wire.BatchLogOverhead)))
	be.PutUint32(b[wire.BatchLeaderEpochPos:], 0xffffffff)
	b[wire.BatchMagicPos] = 2
	be.PutUint16(b[wire.BatchAttributesPos:], 0)
	be.PutUint32(b[wire.BatchLastOffsetDeltaPos:], uint32(len(records)-1))
	be.PutUint64(b[wire.BatchBaseTimestampPos:], uint64(nowMs))
	be.PutUint64(b[wire.BatchMaxTimestampPos:], uint64(nowMs))
	be.PutUint64(b[wire.BatchProducerIDPos:], ^uint64(0))
	be.PutUint16(b[wire.BatchProducerEpochPos:], 0xffff)
	be.PutUint32(b[wire.BatchBaseSequencePos:], 0xffffffff)
	be.PutUint32(b[wire.BatchRecordCountPos:], uint32(len(records)))
	be.PutUint32(b[wire.BatchCRCPos:], wire.CRC32C(b[wire.BatchAttributesPos:]))
	return b
}

// loadChunkBytes is how much of a __consumer_offsets partition one load
// step reads: the partition actor is busy for one such read at a time, so
// produce and fetch to it interleave with a long load.
const loadChunkBytes = 4 << 20

// maxDecompressed bounds one batch's records after decompression on load.
const maxDecompressed = 256 << 20

// readLoadChunk reads batches of the partition from offset from, below
// the high watermark, inside the partition actor. It returns the bytes,
// the next offset to read and the end the load stops at (the high
// watermark when the load began is not tracked: a partition that a load
// reads is written only by the loading coordinator, which writes nothing
// while it loads).
func (p *partitionActor) readLoadChunk(from int64) (data []byte, next, end int64, err error) {
	if p.plog == nil {
		return nil, 0, 0, errors.New("actors: the partition's log is offline")
	}
	end = p.highWatermark()
	if from < p.plog.LogStartOffset() {
		from = p.plog.LogStartOffset()
	}
	if from >= end {
		return nil, end, end, nil
	}
	data, next, err = p.plog.ReadBytes(segment.ReadRequest{Offset: from, MaxBytes: loadChunkBytes, MaxOffset: end, MinOneBatch: true})
	if err == nil && next <= from {
		next = end // nothing below the watermark after all
	}
	return data, next, end, err
}

// replayBatches feeds every record of data (whole batches) to fn as key
// and value (nil for a tombstone), skipping control batches. It stops at
// the first batch that does not parse. Records may alias data or a fresh
// decompression buffer; neither is reused, so the core may keep them.
func replayBatches(data []byte, fn func(key, value []byte)) error {
	for len(data) > 0 {
		h, err := wire.ParseBatchHeader(data)
		if err != nil {
			return err
		}
		size := h.Size()
		if size > int64(len(data)) {
			return fmt.Errorf("actors: batch of %d bytes, %d left", size, len(data))
		}
		batch := data[:size]
		data = data[size:]
		if h.IsControl() {
			continue
		}
		it, _, err := wire.NewBatchRecordIter(batch, nil, maxDecompressed)
		if err != nil {
			return err
		}
		var rec wire.Record
		for it.Next(&rec) {
			fn(rec.Key, rec.Value)
		}
		if err := it.Err(); err != nil {
			return err
		}
	}
	return nil
}
