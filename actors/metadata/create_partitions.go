package metadata

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// CreatePartitions handles a CreatePartitions request (v0-3): a topic's
// partition count can only grow.
func (s *State) CreatePartitions(req *kmsg.CreatePartitionsRequest) (*kmsg.CreatePartitionsResponse, Effects) {
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	counts := make(map[string]int, len(req.Topics))
	for _, t := range req.Topics {
		counts[t.Topic]++
	}
	next := s.snap.clone()
	index := make(map[string]int, len(next.Topics))
	for i, t := range next.Topics {
		index[t.Name] = i
	}
	dirs := make(map[string]int)
	type grown struct {
		at   int // index into resp.Topics
		name string
		from int
	}
	var changed []grown
	for _, rt := range req.Topics {
		out := kmsg.NewCreatePartitionsResponseTopic()
		out.Topic = rt.Topic
		e := s.checkGrowth(&rt, counts[rt.Topic])
		if e == nil && !req.ValidateOnly {
			t := &next.Topics[index[rt.Topic]]
			from := len(t.Partitions)
			for i := int32(from); i < rt.Count; i++ {
				t.Partitions = append(t.Partitions, Partition{Index: i, Dir: s.pickDir(dirs)})
			}
			changed = append(changed, grown{at: len(resp.Topics), name: rt.Topic, from: from})
		}
		if e != nil {
			out.ErrorCode, out.ErrorMessage = e.code.Int16(), str(e.msg)
		}
		resp.Topics = append(resp.Topics, out)
	}
	if len(changed) == 0 {
		return resp, Effects{}
	}
	if err := s.commit(next); err != nil {
		for _, c := range changed {
			resp.Topics[c.at].ErrorCode = kerr.KafkaStorageError.Int16()
			resp.Topics[c.at].ErrorMessage = str("Could not persist the partitions: " + err.Error())
		}
		return resp, Effects{}
	}
	var eff Effects
	for _, c := range changed {
		t := s.byName[c.name]
		eff.Start = append(eff.Start, s.specs(t, t.Partitions[c.from:])...)
	}
	return resp, eff
}

func (s *State) checkGrowth(rt *kmsg.CreatePartitionsRequestTopic, seen int) *topicError {
	if seen > 1 {
		return fail(kerr.InvalidRequest, "Topic '%s' appears more than once in the request.", rt.Topic)
	}
	t, ok := s.byName[rt.Topic]
	if !ok {
		return fail(kerr.UnknownTopicOrPartition, "This broker has no topic '%s'.", rt.Topic)
	}
	have := int32(len(t.Partitions))
	switch {
	case rt.Count < have:
		return fail(kerr.InvalidPartitions, "Topic '%s' has %d partitions, more than the requested %d; partitions can only be added.", rt.Topic, have, rt.Count)
	case rt.Count == have:
		return fail(kerr.InvalidPartitions, "Topic '%s' already has %d partitions.", rt.Topic, have)
	case rt.Count > MaxPartitionsPerTopic:
		return fail(kerr.InvalidPartitions, "Number of partitions %d is above the limit of %d per topic.", rt.Count, MaxPartitionsPerTopic)
	}
	if rt.Assignment != nil {
		if int32(len(rt.Assignment)) != rt.Count-have {
			return fail(kerr.InvalidReplicaAssignment, "The assignment lists %d partitions; %d are being added.", len(rt.Assignment), rt.Count-have)
		}
		for _, a := range rt.Assignment {
			if len(a.Replicas) != 1 || a.Replicas[0] != s.snap.BrokerID {
				return fail(kerr.InvalidReplicaAssignment, "Each new partition must be assigned to broker %d alone, the only broker.", s.snap.BrokerID)
			}
		}
	}
	return nil
}
