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
		for _, t := range topics {
			rt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
			rt.Topic = t.Topic
			info := routes.Topics[t.Topic]
			parts := t.Partitions
			if info != nil {
				rt.TopicID = info.ID
				if parts == nil {
					for i := range info.Partitions {
						parts = append(parts, int32(i))
					}
				}
			}
			for _, p := range parts {
				rp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
				rp.Partition, rp.StartOffset, rp.LeaderEpoch, rp.Lag = p, -1, -1, -1
				switch sp := a.existing(g.GroupID, TopicPartition{rt.TopicID, p}); {
				case info == nil || p < 0 || int(p) >= len(info.Partitions):
					rp.ErrorCode = int16(kerr.UnknownTopicOrPartition)
				case sp != nil:
					rp.StartOffset = sp.Start()
					if hw, _, ok := info.View(p).Bounds(); ok {
						rp.Lag = sp.Lag(hw)
					}
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			out.Topics = append(out.Topics, rt)
		}
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
