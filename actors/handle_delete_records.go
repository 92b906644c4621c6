package actors

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// handleDeleteRecords raises partitions' log start offsets (DeleteRecords
// v0-2). Offset -1 means the high watermark; beyond the high watermark is
// OFFSET_OUT_OF_RANGE; below the current log start nothing changes. The
// answer's low watermark is the log start offset afterwards.
func handleDeleteRecords(b *Broker, req *wire.Request) {
	body := req.Body.(*kmsg.DeleteRecordsRequest)
	resp := body.ResponseKind().(*kmsg.DeleteRecordsResponse)
	routes := b.Routes()
	var tasks partitionTasks
	resp.Topics = make([]kmsg.DeleteRecordsResponseTopic, len(body.Topics))
	for i := range body.Topics {
		rt := &body.Topics[i]
		st := &resp.Topics[i]
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.DeleteRecordsResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			rp, sp := &rt.Partitions[j], &st.Partitions[j]
			sp.Default()
			sp.Partition, sp.LowWatermark = rp.Partition, -1
			pid, code := lookupPartition(routes, rt.Topic, rp.Partition)
			if code != kerr.None {
				sp.ErrorCode = int16(code)
				continue
			}
			tasks.add(pid, func(p *partitionActor) { p.deleteRecords(rp.Offset, sp) })
		}
	}
	tasks.start(b, func(timedOut bool) {
		if timedOut {
			resp = body.ResponseKind().(*kmsg.DeleteRecordsResponse)
			for _, rt := range body.Topics {
				st := kmsg.NewDeleteRecordsResponseTopic()
				st.Topic = rt.Topic
				for _, rp := range rt.Partitions {
					sp := kmsg.NewDeleteRecordsResponseTopicPartition()
					sp.Partition, sp.LowWatermark, sp.ErrorCode = rp.Partition, -1, int16(kerr.RequestTimedOut)
					st.Partitions = append(st.Partitions, sp)
				}
				resp.Topics = append(resp.Topics, st)
			}
		}
		reply(req, resp)
	})
}

// checkpointer is the part of a data directory that persists log start
// offsets (segment.Dir).
type checkpointer interface{ Checkpoint() error }

// deleteRecords answers one partition of DeleteRecords into out.
func (p *partitionActor) deleteRecords(offset int64, out *kmsg.DeleteRecordsResponseTopicPartition) {
	if p.plog == nil {
		out.ErrorCode = int16(kerr.NotLeaderOrFollower)
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
		if c, ok := p.dir.(checkpointer); ok {
			if err := c.Checkpoint(); err != nil {
				p.log.Warn("log start offset checkpoint not written; deleted records may reappear after a crash",
					append(p.attrs(), "err", err)...)
			}
		}
	}
}
