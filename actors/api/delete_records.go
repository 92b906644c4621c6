package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

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
	var parts fanOut
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
			if code := parts.to(routes, rt.Topic, rp.Partition, &partition.DeleteRecords{Offset: rp.Offset, Out: sp}); code != kerr.None {
				sp.ErrorCode = int16(code)
			}
		}
	}
	parts.send(s.Env, func(timedOut bool) {
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
		env.Reply(req, resp)
	})
}
