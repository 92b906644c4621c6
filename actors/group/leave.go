package group

import (
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// LeaveGroup handles a LeaveGroup (v0-v5; a batch of members from v3). A
// member given by instance id alone (empty member id) is an administrative
// removal of that static member.
func (g *Group) LeaveGroup(t Ticket, req *kmsg.LeaveGroupRequest, now time.Time) Effects {
	g.begin()
	r := kmsg.NewPtrLeaveGroupResponse()
	r.Version = req.Version
	leaving := req.Members
	if req.Version < 3 {
		leaving = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	switch {
	case req.Group == "":
		r.ErrorCode = int16(kerr.InvalidGroupID)
	case g.state == Dead:
		r.ErrorCode = int16(kerr.CoordinatorNotAvailable)
	default:
		for _, l := range leaving {
			rm := kmsg.NewLeaveGroupResponseMember()
			rm.MemberID = l.MemberID
			rm.InstanceID = l.InstanceID
			rm.ErrorCode = int16(g.leave(l.MemberID, l.InstanceID, now))
			r.Members = append(r.Members, rm)
		}
		if req.Version < 3 {
			r.ErrorCode = r.Members[0].ErrorCode
			r.Members = nil
		}
	}
	g.reply(t, r)
	return g.end()
}

func (g *Group) leave(memberID string, instanceID *string, now time.Time) kerr.Code {
	if g.cg != nil {
		return g.classicLeave(memberID, instanceID, now)
	}
	if memberID == "" {
		if instanceID == nil {
			return kerr.UnknownMemberID
		}
		cur, ok := g.staticMembers[*instanceID]
		if !ok {
			return kerr.UnknownMemberID
		}
		g.removeAndUpdate(g.get(cur), kerr.UnknownMemberID, now)
		return kerr.None
	}
	if g.pending[memberID] {
		delete(g.pending, memberID)
		g.disarm(TimerPendingMember, memberID)
		if g.state == PreparingRebalance {
			g.tryCompleteJoin(now)
		}
		return kerr.None
	}
	if g.fenced(instanceID, memberID) {
		return kerr.FencedInstanceID
	}
	m := g.get(memberID)
	if m == nil {
		return kerr.UnknownMemberID
	}
	g.removeAndUpdate(m, kerr.UnknownMemberID, now)
	return kerr.None
}
