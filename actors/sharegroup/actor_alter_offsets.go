package sharegroup

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// refuseNonEmpty answers NON_EMPTY_GROUP, as Kafka does, when a group
// whose share offsets are to change has members.
func (a *coordinatorActor) refuseNonEmpty(c *Call, id string) bool {
	if g := a.groups[id]; g == nil || len(g.Members) == 0 {
		return false
	}
	replyError(c, kerr.NonEmptyGroup)
	return true
}

// alterOffsets serves AlterShareGroupOffsets: each named share partition
// starts over at the given offset, its in-flight state dropped.
func (a *coordinatorActor) alterOffsets(c *Call, r *kmsg.AlterShareGroupOffsetsRequest) {
	if a.refuseNonEmpty(c, r.GroupID) {
		return
	}
	resp := r.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
	resp.Version = r.Version
	touched := map[partKey]bool{}
	for _, t := range r.Topics {
		rt := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		rt.Topic = t.Topic
		id, n := a.topicShape(t.Topic)
		rt.TopicID = id
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			switch {
			case p.Partition < 0 || int(p.Partition) >= n:
				rp.ErrorCode = int16(kerr.UnknownTopicOrPartition)
			case p.StartOffset < 0:
				rp.ErrorCode = int16(kerr.InvalidRequest)
			default:
				k := partKey{r.GroupID, TopicPartition{id, p.Partition}}
				delete(a.restored, k)
				a.parts[k] = NewPartition(p.StartOffset, a.settingsOf(r.GroupID).limits)
				touched[k] = true
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if a.groups[r.GroupID] == nil && len(touched) > 0 {
		a.groups[r.GroupID] = NewGroup(r.GroupID)
	}
	a.reply(c, resp, touched)
}

// deleteOffsets serves DeleteShareGroupOffsets: the group forgets its
// share partitions of each topic (tombstones in the state topic); a
// later fetch starts them again from share.auto.offset.reset.
func (a *coordinatorActor) deleteOffsets(c *Call, r *kmsg.DeleteShareGroupOffsetsRequest) {
	if a.refuseNonEmpty(c, r.GroupID) {
		return
	}
	resp := r.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
	resp.Version = r.Version
	touched := map[partKey]bool{}
	for _, t := range r.Topics {
		rt := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
		rt.Topic = t.Topic
		id, n := a.topicShape(t.Topic)
		if n < 0 {
			rt.ErrorCode = int16(kerr.UnknownTopicOrPartition)
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		rt.TopicID = id
		for i := range n {
			k := partKey{r.GroupID, TopicPartition{id, int32(i)}}
			// In cluster mode the share partitions live on their
			// leaders: every partition gets its tombstone.
			if a.cl != nil || a.parts[k] != nil || hasKey(a.restored, k) {
				delete(a.parts, k)
				delete(a.restored, k)
				touched[k] = true
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	a.reply(c, resp, touched)
}

func hasKey(m map[partKey]Snapshot, k partKey) bool {
	_, ok := m[k]
	return ok
}
