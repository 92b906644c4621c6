package sharegroup

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/wire/kerr"
)

// offsetsRead brings back, for a DescribeShareGroupOffsets in cluster
// mode, the start offsets of the share partitions that have state.
type offsetsRead struct {
	call   *Call
	resp   *kmsg.DescribeShareGroupOffsetsResponse
	slots  []offsetSlot
	starts map[partKey]int64
	err    error
}

// offsetSlot is one partition entry of the answer and the share
// partition it describes.
type offsetSlot struct {
	group, topic, part int
	key                partKey
}

// describeOffsetsCluster serves DescribeShareGroupOffsets on the group's
// coordinator in cluster mode: the share partitions live on their data
// partitions' leaders, so their start offsets are read from the state
// topic, where every change is written before it is acknowledged. Topics
// not named are the ones the group's members subscribe to. Lag is -1
// (unknown): the high watermarks are on the leaders.
func (a *coordinatorActor) describeOffsetsCluster(c *Call, r *kmsg.DescribeShareGroupOffsetsRequest) {
	resp := r.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	resp.Version = r.Version
	v := a.view()
	var slots []offsetSlot
	for gi, g := range r.Groups {
		out := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
		out.GroupID = g.GroupID
		topics := g.Topics
		if topics == nil {
			for _, name := range a.subscribedTopics(g.GroupID) {
				topics = append(topics, kmsg.DescribeShareGroupOffsetsRequestGroupTopic{Topic: name})
			}
		}
		shape := func(name string) ([16]byte, int) {
			if info := v.Topics[name]; info != nil {
				return info.ID, len(info.Partitions)
			}
			return [16]byte{}, -1
		}
		out.Topics = offsetsTopics(topics, shape, func(ti, pi int, _ *kmsg.DescribeShareGroupOffsetsResponseGroupTopicPartition, tp TopicPartition) {
			slots = append(slots, offsetSlot{gi, ti, pi, partKey{g.GroupID, tp}})
		})
		resp.Groups = append(resp.Groups, out)
	}
	self, root := a.self, a.root
	a.ensureTopic(func(err error) {
		if err != nil {
			root.Send(self, &offsetsRead{call: c, err: err})
			return
		}
		go func() {
			m := &offsetsRead{call: c, resp: resp, slots: slots, starts: map[partKey]int64{}}
			for _, s := range slots {
				snap, found, err := a.readSnapshot(s.key)
				if err != nil {
					m.err = err
					break
				}
				if found {
					m.starts[s.key] = snap.Start
				}
			}
			root.Send(self, m)
		}()
	})
}

// onOffsetsRead answers a DescribeShareGroupOffsets with what was read; a
// group with neither members nor state is GROUP_ID_NOT_FOUND.
func (a *coordinatorActor) onOffsetsRead(m *offsetsRead) {
	if m.err != nil {
		a.env.Log.Warn("sharegroup: share group offsets not read", "err", m.err)
		replyError(m.call, kerr.CoordinatorNotAvailable)
		return
	}
	hasState := map[int]bool{}
	for _, s := range m.slots {
		if start, ok := m.starts[s.key]; ok {
			m.resp.Groups[s.group].Topics[s.topic].Partitions[s.part].StartOffset = start
			hasState[s.group] = true
		}
	}
	for gi := range m.resp.Groups {
		g := &m.resp.Groups[gi]
		if a.groups[g.GroupID] == nil && !hasState[gi] {
			g.Topics, g.ErrorCode = nil, int16(kerr.GroupIDNotFound)
		}
	}
	env.Reply(m.call.Req, m.resp)
}

// subscribedTopics names the topics a group's members subscribed to while
// this broker coordinated it.
func (a *coordinatorActor) subscribedTopics(groupID string) []string {
	return slices.Sorted(maps.Keys(a.cl.subscribed[groupID]))
}
