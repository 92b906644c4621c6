package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// OffsetForLeaderEpoch (v2-4).
var offsetForLeaderEpoch = API{Key: kmsg.OffsetForLeaderEpoch, Handle: handleOffsetForLeaderEpoch}

// handleOffsetForLeaderEpoch answers OffsetForLeaderEpoch v2-4 from each
// partition's leader epoch cache: for a requested epoch, the largest
// epoch the log knows at or below it and the offset where the next epoch
// began (the log end offset for the latest); -1/-1 when the log knows no
// such epoch. Consumers use it to detect truncation after a leader change
// (librdkafka 2.1+ sends v2 whenever it has a position's epoch).
func handleOffsetForLeaderEpoch(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.OffsetForLeaderEpochRequest)
	resp := body.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	routes := s.Env.Routes.Load()
	parts := newFanOut(partitionsOf(body.Topics, func(t *kmsg.OffsetForLeaderEpochRequestTopic) int { return len(t.Partitions) }),
		func(p *kmsg.OffsetForLeaderEpochResponseTopicPartition) { p.ErrorCode = int16(kerr.RequestTimedOut) })
	resp.Topics = make([]kmsg.OffsetForLeaderEpochResponseTopic, len(body.Topics))
	for i := range body.Topics {
		rt := &body.Topics[i]
		st := &resp.Topics[i]
		st.Topic = rt.Topic
		// A follower (replica id set, v3+) needs CLUSTER_ACTION, a
		// consumer DESCRIBE on the topic, as in Kafka.
		var denied bool
		if body.Version >= 3 && body.ReplicaID >= 0 {
			denied = !clusterAuthorized(s, req, acl.OpClusterAction)
		} else {
			denied = !authorized(s, req, acl.OpDescribe, acl.ResourceTopic, rt.Topic)
		}
		st.Partitions = make([]kmsg.OffsetForLeaderEpochResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			rp, sp := &rt.Partitions[j], &st.Partitions[j]
			sp.Default()
			sp.Partition, sp.LeaderEpoch, sp.EndOffset = rp.Partition, -1, -1
			if denied {
				sp.ErrorCode = taf
				continue
			}
			code := parts.to(routes, rt.Topic, rp.Partition, sp, func(out *kmsg.OffsetForLeaderEpochResponseTopicPartition) partition.Request {
				return &partition.EndOffsetForEpoch{CurrentEpoch: rp.CurrentLeaderEpoch, Epoch: rp.LeaderEpoch, Out: out}
			})
			sp.ErrorCode = int16(code)
		}
	}
	parts.send(s.Env, func(bool) { env.Reply(req, resp) })
}
