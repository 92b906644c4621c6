package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// ListOffsets (v1-9).
var listOffsets = API{Key: kmsg.ListOffsets, Handle: handleListOffsets}

// handleListOffsets answers ListOffsets v1+ from the partition actors.
// Consumers (replica id -1) see offsets below the high watermark; with
// read_committed the bound is the last stable offset, which equals the
// high watermark while transactions are not implemented.
func handleListOffsets(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.ListOffsetsRequest)
	resp := body.ResponseKind().(*kmsg.ListOffsetsResponse)
	routes := s.Env.Routes.Load()
	var parts fanOut
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
			msg := &partition.ListOffsets{Timestamp: rp.Timestamp, CurrentEpoch: rp.CurrentLeaderEpoch, Follower: body.ReplicaID >= 0, Out: sp}
			if code := parts.to(routes, rt.Topic, rp.Partition, msg); code != kerr.None {
				sp.ErrorCode = int16(code)
			}
		}
	}
	parts.send(s.Env, func(timedOut bool) {
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
		env.Reply(req, resp)
	})
}
