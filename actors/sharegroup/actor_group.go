package sharegroup

import (
	"crypto/rand"
	"encoding/base64"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// assignor is the only server assignor samsa has, named as Kafka's.
const assignor = "simple"

// newMemberID is a member id made by the coordinator.
func newMemberID() string {
	var id [16]byte
	_, _ = rand.Read(id[:])
	return base64.RawURLEncoding.EncodeToString(id[:])
}

func (a *coordinatorActor) heartbeat(c *Call, r *kmsg.ShareGroupHeartbeatRequest) *kmsg.ShareGroupHeartbeatResponse {
	resp := r.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	resp.Version = r.Version
	if r.GroupID == "" {
		resp.ErrorCode = int16(kerr.InvalidRequest)
		msg := "the group id is empty"
		resp.ErrorMessage = &msg
		return resp
	}
	g := a.groups[r.GroupID]
	if g == nil {
		if r.MemberEpoch != 0 {
			resp.ErrorCode = int16(kerr.UnknownMemberID)
			return resp
		}
		g = NewGroup(r.GroupID)
		a.groups[r.GroupID] = g
	}
	res := g.Heartbeat(Heartbeat{
		MemberID: r.MemberID, ClientID: c.ClientID, ClientHost: c.Client, RackID: r.RackID,
		MemberEpoch: r.MemberEpoch, Subscribed: r.SubscribedTopicNames,
	}, a.topics(), a.now())
	if res.Code != kerr.None {
		resp.ErrorCode = int16(res.Code)
		return resp
	}
	if res.Left {
		a.releaseMember(r.GroupID, r.MemberID)
	}
	id := r.MemberID
	resp.MemberID = &id
	resp.MemberEpoch = res.Epoch
	resp.HeartbeatIntervalMillis = int32(a.settingsOf(r.GroupID).heartbeatInterval.Milliseconds())
	if res.Assigned != nil {
		resp.Assignment = &kmsg.ShareGroupHeartbeatResponseAssignment{}
		resp.Assignment.TopicPartitions = sortedAssignment(res.Assigned)
	}
	return resp
}

func sortedAssignment(as Assignment) []kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition {
	var out []kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition
	for id, ps := range as {
		out = append(out, kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition{TopicID: id, Partitions: slices.Clone(ps)})
	}
	slices.SortFunc(out, func(x, y kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition) int {
		return slices.Compare(x.TopicID[:], y.TopicID[:])
	})
	return out
}

func (a *coordinatorActor) describe(r *kmsg.ShareGroupDescribeRequest) *kmsg.ShareGroupDescribeResponse {
	resp := r.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	resp.Version = r.Version
	names := map[[16]byte]string{}
	for name, t := range a.topics() {
		names[t.ID] = name
	}
	for _, id := range r.GroupIDs {
		out := kmsg.NewShareGroupDescribeResponseGroup()
		out.GroupID = id
		out.AuthorizedOperations = -2147483648
		g := a.groups[id]
		if g == nil {
			out.ErrorCode = int16(kerr.GroupIDNotFound)
			msg := "Group " + id + " not found."
			out.ErrorMessage = &msg
			resp.Groups = append(resp.Groups, out)
			continue
		}
		out.GroupState, out.GroupEpoch, out.AssignmentEpoch, out.Assignor = g.State(), g.Epoch, g.Epoch, assignor
		ids := make([]string, 0, len(g.Members))
		for mid := range g.Members {
			ids = append(ids, mid)
		}
		slices.Sort(ids)
		for _, mid := range ids {
			m := g.Members[mid]
			dm := kmsg.NewShareGroupDescribeResponseGroupMember()
			dm.MemberID, dm.RackID, dm.MemberEpoch, dm.ClientID, dm.ClientHost = m.ID, m.RackID, m.Epoch, m.ClientID, m.ClientHost
			dm.SubscribedTopicNames = slices.Clone(m.Subscribed)
			for _, tp := range sortedAssignment(m.Assigned) {
				t := kmsg.NewShareGroupDescribeResponseGroupMemberAssignmentTopicPartition()
				t.TopicID, t.Topic, t.Partitions = tp.TopicID, names[tp.TopicID], tp.Partitions
				dm.Assignment.TopicPartitions = append(dm.Assignment.TopicPartitions, t)
			}
			out.Members = append(out.Members, dm)
		}
		resp.Groups = append(resp.Groups, out)
	}
	return resp
}
