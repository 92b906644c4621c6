package sharegroup

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// existing returns a group's share partition if it was ever started
// (here, or before a restart), without starting one.
func (a *coordinatorActor) existing(group string, tp TopicPartition) *Partition {
	k := partKey{group, tp}
	if p := a.parts[k]; p != nil {
		return p
	}
	if s, ok := a.restored[k]; ok {
		p := RestorePartition(s, a.settingsOf(group).limits)
		a.parts[k] = p
		delete(a.restored, k)
		return p
	}
	return nil
}

// describeOffsets serves DescribeShareGroupOffsets: each share
// partition's start offset and (v1) lag; -1 for partitions the group
// never started, as Kafka answers them.
func (a *coordinatorActor) describeOffsets(r *kmsg.DescribeShareGroupOffsetsRequest) *kmsg.DescribeShareGroupOffsetsResponse {
	resp := r.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	resp.Version = r.Version
	routes := a.env.Routes.Load()
	for _, g := range r.Groups {
		out := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
		out.GroupID = g.GroupID
		started := a.startedTopics(g.GroupID)
		if a.groups[g.GroupID] == nil && len(started) == 0 {
			out.ErrorCode = int16(kerr.GroupIDNotFound)
			resp.Groups = append(resp.Groups, out)
			continue
		}
		topics := g.Topics
		if topics == nil {
			for _, name := range started {
				topics = append(topics, kmsg.DescribeShareGroupOffsetsRequestGroupTopic{Topic: name})
			}
		}
		shape := func(name string) ([16]byte, int) {
			if info := routes.Topics[name]; info != nil {
				return info.ID, len(info.Partitions)
			}
			return [16]byte{}, -1
		}
		out.Topics = offsetsTopics(topics, shape, func(_, _ int, rp *kmsg.DescribeShareGroupOffsetsResponseGroupTopicPartition, tp TopicPartition) {
			if sp := a.existing(g.GroupID, tp); sp != nil {
				rp.StartOffset = sp.Start()
				_, view, _ := a.resolve(tp)
				if hw, _, ok := view.Bounds(); ok {
					rp.Lag = sp.Lag(hw)
				}
			}
		})
		resp.Groups = append(resp.Groups, out)
	}
	return resp
}

// startedTopics names the topics a group has share partitions of.
func (a *coordinatorActor) startedTopics(group string) []string {
	ids := map[[16]byte]bool{}
	for k := range a.parts {
		if k.group == group {
			ids[k.tp.Topic] = true
		}
	}
	for k := range a.restored {
		if k.group == group {
			ids[k.tp.Topic] = true
		}
	}
	var names []string
	for name, t := range a.env.Routes.Load().Topics {
		if ids[t.ID] {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// offsetsTopics lays out the topics' entries of a DescribeShareGroupOffsets
// answer, the partitions asked or (none named) all of them, each with
// nothing known yet (-1s) or UNKNOWN_TOPIC_OR_PARTITION; fill completes
// each partition that exists. shape is a topic's id and partition count
// (-1: no such topic).
func offsetsTopics(topics []kmsg.DescribeShareGroupOffsetsRequestGroupTopic, shape func(string) ([16]byte, int),
	fill func(ti, pi int, rp *kmsg.DescribeShareGroupOffsetsResponseGroupTopicPartition, tp TopicPartition)) []kmsg.DescribeShareGroupOffsetsResponseGroupTopic {
	var out []kmsg.DescribeShareGroupOffsetsResponseGroupTopic
	for ti, t := range topics {
		rt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
		id, n := shape(t.Topic)
		rt.Topic, rt.TopicID = t.Topic, id
		parts := t.Partitions
		if parts == nil {
			for i := range max(n, 0) {
				parts = append(parts, int32(i))
			}
		}
		for pi, p := range parts {
			rp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
			rp.Partition, rp.StartOffset, rp.LeaderEpoch, rp.Lag = p, -1, -1, -1
			if p < 0 || int(p) >= n {
				rp.ErrorCode = int16(kerr.UnknownTopicOrPartition)
			} else {
				fill(ti, pi, &rp, TopicPartition{id, p})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		out = append(out, rt)
	}
	return out
}
