package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// DescribeProducers (v0, KIP-664): the producers in partitions' producer
// state, what kafka-transactions.sh describe-producers, find-hanging and
// abort read. Served whether or not the broker runs transaction
// coordinators, as Kafka does: idempotent producers have state too.
var describeProducers = API{Key: kmsg.DescribeProducers, Handle: handleDescribeProducers}

// handleDescribeProducers asks each partition's actor here for its
// producer state. Kafka's codes: a malformed topic name is
// INVALID_TOPIC_EXCEPTION and an unknown one UNKNOWN_TOPIC_OR_PARTITION
// for all its partitions; a partition that exists but has no replica
// here is NOT_LEADER_OR_FOLLOWER (the admin client then finds the leader
// again).
func handleDescribeProducers(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.DescribeProducersRequest)
	resp := body.ResponseKind().(*kmsg.DescribeProducersResponse)
	routes := s.Env.Routes.Load()
	parts := newFanOut(partitionsOf(body.Topics, func(t *kmsg.DescribeProducersRequestTopic) int { return len(t.Partitions) }),
		func(p *kmsg.DescribeProducersResponseTopicPartition) {
			p.ErrorCode, p.ActiveProducers = int16(kerr.RequestTimedOut), nil
		})
	resp.Topics = make([]kmsg.DescribeProducersResponseTopic, len(body.Topics))
	for i := range body.Topics {
		rt, st := &body.Topics[i], &resp.Topics[i]
		st.Default()
		st.Topic = rt.Topic
		denied := !authorized(s, req, acl.OpRead, acl.ResourceTopic, rt.Topic)
		st.Partitions = make([]kmsg.DescribeProducersResponseTopicPartition, len(rt.Partitions))
		topicCode, topicMsg := kerr.None, ""
		if err := metadata.ValidateTopicName(rt.Topic); err != nil {
			topicCode, topicMsg = kerr.InvalidTopicException, err.Error()
		}
		for j, p := range rt.Partitions {
			sp := &st.Partitions[j]
			sp.Default()
			sp.Partition = p
			if topicCode != kerr.None {
				sp.ErrorCode, sp.ErrorMessage = int16(topicCode), &topicMsg
				continue
			}
			if denied {
				sp.ErrorCode = taf
				continue
			}
			code := parts.to(routes, rt.Topic, p, sp, func(out *kmsg.DescribeProducersResponseTopicPartition) partition.Request {
				return &partition.DescribeProducers{Out: out}
			})
			if code == kerr.UnknownTopicOrPartition && s.Env.Cluster != nil && partitionExists(s, rt.Topic, p) {
				code = kerr.NotLeaderOrFollower // in the cluster, not on this broker
			}
			sp.ErrorCode = int16(code)
		}
	}
	parts.send(s.Env, func(bool) { env.Reply(req, resp) })
}
