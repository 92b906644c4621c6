package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// ListOffsets (v1-9).
var listOffsets = API{Key: kmsg.ListOffsets, Handle: handleListOffsets}

// handleListOffsets answers ListOffsets v1+ from the partition actors.
// Consumers (replica id -1) see offsets below the high watermark; with
// read_committed (v2+) the bound is the last stable offset.
func handleListOffsets(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.ListOffsetsRequest)
	resp := body.ResponseKind().(*kmsg.ListOffsetsResponse)
	routes := s.Env.Routes.Load()
	parts := newFanOut(partitionsOf(body.Topics, func(t *kmsg.ListOffsetsRequestTopic) int { return len(t.Partitions) }),
		func(p *kmsg.ListOffsetsResponseTopicPartition) { p.ErrorCode = int16(kerr.RequestTimedOut) })
	resp.Topics = make([]kmsg.ListOffsetsResponseTopic, len(body.Topics))
	for i := range body.Topics {
		rt := &body.Topics[i]
		st := &resp.Topics[i]
		st.Topic = rt.Topic
		denied := !authorized(s, req, acl.OpDescribe, acl.ResourceTopic, rt.Topic)
		st.Partitions = make([]kmsg.ListOffsetsResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			rp, sp := &rt.Partitions[j], &st.Partitions[j]
			sp.Default()
			sp.Partition = rp.Partition
			if denied {
				sp.ErrorCode = taf
				continue
			}
			code := parts.to(routes, rt.Topic, rp.Partition, sp, func(out *kmsg.ListOffsetsResponseTopicPartition) partition.Request {
				return &partition.ListOffsets{Timestamp: rp.Timestamp, CurrentEpoch: rp.CurrentLeaderEpoch, Follower: body.ReplicaID >= 0,
					ReadCommitted: body.Version >= 2 && body.IsolationLevel == 1, Out: out}
			})
			sp.ErrorCode = int16(code)
		}
	}
	parts.send(s.Env, func(bool) { env.Reply(req, resp) })
}
