package group

import (
	"slices"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerMemberType is ConsumerGroupDescribe v1's member type of a
// member that speaks the consumer protocol (0 would be classic).
const (
	consumerMemberType = 1
	classicMemberType  = 0
)

// ConsumerGroupDescribe is the group's ConsumerGroupDescribe entry:
// GROUP_ID_NOT_FOUND for a group that does not exist or is not a
// consumer group.
func (g *Group) ConsumerGroupDescribe(version int16) kmsg.ConsumerGroupDescribeResponseGroup {
	d := kmsg.NewConsumerGroupDescribeResponseGroup()
	d.Group = g.id
	if !g.exists() || g.cg == nil {
		d.ErrorCode = int16(kerr.GroupIDNotFound)
		d.ErrorMessage = strPtr("Group " + g.id + " not found.")
		if g.exists() {
			d.ErrorMessage = strPtr("Group " + g.id + " is not a consumer group.")
		}
		d.State = Dead.String()
		return d
	}
	cg := g.cg
	d.State = cg.stateName()
	d.Epoch = cg.epoch
	d.AssignmentEpoch = cg.assignmentEpoch
	d.AssignorName = g.consumerAssignor()
	names := cg.idToName()
	describe := func(p partitions) kmsg.Assignment {
		a := kmsg.NewAssignment()
		for _, id := range p.sortedTopics() {
			tp := kmsg.NewAssignmentTopicPartition()
			tp.TopicID, tp.Topic, tp.Partitions = id, names[id], slices.Clone(p[id])
			a.TopicPartitions = append(a.TopicPartitions, tp)
		}
		return a
	}
	for _, id := range cg.sortedMembers() {
		m := cg.members[id]
		dm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		dm.MemberID, dm.InstanceID = m.id, optional(m.instanceID)
		dm.RackID = m.rackID
		dm.MemberEpoch = m.epoch
		dm.ClientID, dm.ClientHost = m.clientID, m.clientHost
		dm.SubscribedTopics = slices.Clone(m.topicNames)
		if dm.SubscribedTopics == nil {
			dm.SubscribedTopics = []string{}
		}
		dm.SubscribedTopicRegex = m.regex
		dm.Assignment = describe(m.assigned)
		dm.TargetAssignment = describe(cg.target[m.id])
		if version >= 1 {
			dm.MemberType = consumerMemberType
			if m.classic != nil {
				dm.MemberType = classicMemberType
			}
		}
		d.Members = append(d.Members, dm)
	}
	return d
}

// consumerListEntry is ListGroups' entry of a consumer group.
func (g *Group) consumerListEntry(statesFilter, typesFilter []string) (kmsg.ListGroupsResponseGroup, bool) {
	e := kmsg.NewListGroupsResponseGroup()
	state := g.cg.stateName()
	if len(statesFilter) > 0 && !containsFold(statesFilter, state) {
		return e, false
	}
	if len(typesFilter) > 0 && !containsFold(typesFilter, consumerProtocolType) {
		return e, false
	}
	e.Group = g.id
	e.ProtocolType = consumerProtocolType
	e.GroupState = state
	e.GroupType = consumerProtocolType
	return e, true
}
