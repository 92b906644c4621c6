package controller

import (
	"slices"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterPartition is a leader asking to change its partitions' ISR
// (Kafka's tryProcessAlterPartition). The answer is Effects.Reply, sent
// once the writes succeed; if they fail, WriteFailed's reply replaces it.
//
// Kafka's checks, in its order: the broker's epoch; per partition, a
// partition or leader epoch newer than ours (NOT_CONTROLLER: the leader
// heard from a newer controller), an older leader epoch
// (FENCED_LEADER_EPOCH), the state already as asked (success, even at an
// older partition epoch), an older partition epoch
// (INVALID_UPDATE_VERSION), RECOVERING rules (INVALID_REQUEST), and ISR
// members that are not live or are shutting down (INELIGIBLE_REPLICA;
// OPERATION_NOT_ATTEMPTED before v2). Beyond Kafka's ZooKeeper
// controller, a request from a broker that is not the partition's leader
// is refused with NOT_LEADER_OR_FOLLOWER, as KRaft does, instead of
// making it the leader.
func (c *Core) AlterPartition(req *kmsg.AlterPartitionRequest) Effects {
	c.begin()
	resp := req.ResponseKind().(*kmsg.AlterPartitionResponse)
	if b, ok := c.brokers[req.BrokerID]; !ok || b.Epoch != req.BrokerEpoch {
		resp.ErrorCode = int16(kerr.StaleBrokerEpoch)
		c.fx.Reply = resp
		return c.end()
	}
	useIDs := req.Version > 1
	var touched, succeeded []*partition
	type slot struct{ topic, part int }
	var written []slot // answers that announce a write
	for _, rt := range req.Topics {
		name := rt.Topic
		if useIDs {
			name = c.topicByID(rt.TopicID)
		}
		out := kmsg.NewAlterPartitionResponseTopic()
		out.Topic, out.TopidID = rt.Topic, rt.TopicID
		for _, rp := range rt.Partitions {
			pr := kmsg.NewAlterPartitionResponseTopicPartition()
			pr.Partition = rp.Partition
			if name == "" {
				pr.ErrorCode = int16(kerr.UnknownTopicID)
				out.Partitions = append(out.Partitions, pr)
				continue
			}
			p := c.parts[TopicPartition{name, rp.Partition}]
			if p != nil {
				touched = append(touched, p)
			}
			code, wrote := c.alterOne(req, p, rp)
			pr.ErrorCode = int16(code)
			if code == kerr.None {
				fillAlterAnswer(&pr, p.state)
				succeeded = append(succeeded, p)
			}
			if wrote {
				written = append(written, slot{len(resp.Topics), len(out.Partitions)})
			}
			out.Partitions = append(out.Partitions, pr)
		}
		resp.Topics = append(resp.Topics, out)
	}
	c.addUpdateMetadata(c.liveIDs(), touched)
	c.fx.Reply = resp
	if len(written) > 0 {
		// The written partitions were answered with their new state; if
		// the write fails they were not changed after all.
		c.reply = func(why WriteError) Effects {
			code := kerr.InvalidUpdateVersion // Kafka's answer to a BADVERSION
			if why != WriteConflict {
				code = kerr.NotController
			}
			for _, w := range written {
				pr := &resp.Topics[w.topic].Partitions[w.part]
				n := pr.Partition
				*pr = kmsg.NewAlterPartitionResponseTopicPartition()
				pr.Partition, pr.ErrorCode = n, int16(code)
			}
			return Effects{Reply: resp}
		}
	}
	// Kafka then completes the reassignments the new ISRs allow.
	c.flush()
	c.maybeCompleteReassignments(succeeded)
	return c.end()
}

// alterOne checks and applies one partition's change; wrote reports a
// state write.
func (c *Core) alterOne(req *kmsg.AlterPartitionRequest, p *partition, rp kmsg.AlterPartitionRequestTopicPartition) (code kerr.Code, wrote bool) {
	if p == nil || p.state == nil {
		return kerr.UnknownTopicOrPartition, false
	}
	cur := p.state
	isr := rp.NewISR
	if req.Version >= 3 {
		isr = nil
		for _, b := range rp.NewEpochISR {
			isr = append(isr, b.BrokerID)
		}
	}
	switch {
	case rp.PartitionEpoch > cur.Version || rp.LeaderEpoch > cur.LeaderEpoch:
		return kerr.NotController, false
	case rp.LeaderEpoch < cur.LeaderEpoch:
		return kerr.FencedLeaderEpoch, false
	case req.BrokerID != cur.Leader:
		return kerr.NotLeaderOrFollower, false
	case slices.Equal(isr, cur.ISR) && rp.LeaderRecoveryState == cur.LeaderRecoveryState:
		return kerr.None, false // already so: idempotent, before the partition epoch check
	case rp.PartitionEpoch < cur.Version:
		return kerr.InvalidUpdateVersion, false
	case rp.LeaderRecoveryState == Recovering && len(isr) > 1:
		return kerr.InvalidRequest, false
	case cur.LeaderRecoveryState == Recovered && rp.LeaderRecoveryState == Recovering:
		return kerr.InvalidRequest, false
	}
	for _, b := range isr {
		if !c.online(b) {
			if req.Version > 1 {
				return kerr.IneligibleReplica, false
			}
			return kerr.OperationNotAttempted, false
		}
	}
	s := cur.clone()
	s.ISR = slices.Clone(isr)
	s.LeaderRecoveryState = rp.LeaderRecoveryState
	c.write(p, s)
	return kerr.None, true
}

func fillAlterAnswer(pr *kmsg.AlterPartitionResponseTopicPartition, s *PartitionState) {
	pr.LeaderID = s.Leader
	pr.LeaderEpoch = s.LeaderEpoch
	pr.ISR = nonNil(s.ISR)
	pr.LeaderRecoveryState = s.LeaderRecoveryState
	pr.PartitionEpoch = s.Version
}

func (c *Core) topicByID(id TopicID) string {
	if id == (TopicID{}) {
		return ""
	}
	for _, name := range sortedKeys(c.topics) {
		if c.topics[name].id == id {
			return name
		}
	}
	return ""
}
