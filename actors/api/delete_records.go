package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// DeleteRecords (v0-2).
var deleteRecords = API{Key: kmsg.DeleteRecords, Handle: handleDeleteRecords}

// handleDeleteRecords raises partitions' log start offsets (DeleteRecords
// v0-2). Offset -1 means the high watermark; beyond the high watermark is
// OFFSET_OUT_OF_RANGE; below the current log start nothing changes. The
// answer's low watermark is the log start offset afterwards.
func handleDeleteRecords(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.DeleteRecordsRequest)
	resp := body.ResponseKind().(*kmsg.DeleteRecordsResponse)
	routes := s.Env.Routes.Load()
	parts := newFanOut(partitionsOf(body.Topics, func(t *kmsg.DeleteRecordsRequestTopic) int { return len(t.Partitions) }),
		func(p *kmsg.DeleteRecordsResponseTopicPartition) { p.ErrorCode = int16(kerr.RequestTimedOut) })
	resp.Topics = make([]kmsg.DeleteRecordsResponseTopic, len(body.Topics))
	for i := range body.Topics {
		rt := &body.Topics[i]
		st := &resp.Topics[i]
		st.Topic = rt.Topic
		denied := !authorized(s, req, acl.OpDelete, acl.ResourceTopic, rt.Topic)
		st.Partitions = make([]kmsg.DeleteRecordsResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			rp, sp := &rt.Partitions[j], &st.Partitions[j]
			sp.Default()
			sp.Partition, sp.LowWatermark = rp.Partition, -1
			if denied {
				sp.ErrorCode = taf
				continue
			}
			code := parts.to(routes, rt.Topic, rp.Partition, sp, func(out *kmsg.DeleteRecordsResponseTopicPartition) partition.Request {
				return &partition.DeleteRecords{Offset: rp.Offset, Out: out}
			})
			sp.ErrorCode = int16(code)
		}
	}
	parts.send(s.Env, func(bool) { env.Reply(req, resp) })
}
