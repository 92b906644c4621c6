package sharegroup

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/wire/kerr"
)

// routeCluster answers, in cluster mode, what another broker must serve
// and parks what must wait for a share partition's state; it reports
// whether it took c. Membership and the offsets admin APIs belong to the
// group's coordinator (NOT_COORDINATOR elsewhere: the client finds it
// again); ShareFetch and ShareAcknowledge to the leaders of the data
// partitions (NOT_LEADER_OR_FOLLOWER per partition elsewhere, answered as
// they are served).
func (a *coordinatorActor) routeCluster(c *Call) bool {
	if a.cl == nil {
		return false
	}
	one := func(groupID string) bool {
		if code := a.coordinates(groupID); code != kerr.None {
			replyError(c, code)
			return true
		}
		return false
	}
	switch r := c.Req.Body.(type) {
	case *kmsg.ShareGroupHeartbeatRequest:
		if one(r.GroupID) {
			return true
		}
		a.cl.remember(r.GroupID, r.SubscribedTopicNames)
		return false
	case *kmsg.AlterShareGroupOffsetsRequest:
		return one(r.GroupID)
	case *kmsg.DeleteShareGroupOffsetsRequest:
		return one(r.GroupID)
	case *kmsg.ShareGroupDescribeRequest:
		resp := a.describe(r)
		for i := range resp.Groups {
			g := &resp.Groups[i]
			if code := a.coordinates(g.GroupID); code != kerr.None {
				*g = kmsg.NewShareGroupDescribeResponseGroup()
				g.GroupID, g.ErrorCode, g.AuthorizedOperations = r.GroupIDs[i], int16(code), -2147483648
			}
		}
		env.Reply(c.Req, resp)
		return true
	case *kmsg.DescribeShareGroupOffsetsRequest:
		for _, g := range r.Groups {
			if code := a.coordinates(g.GroupID); code != kerr.None {
				replyError(c, code)
				return true
			}
		}
		a.describeOffsetsCluster(c, r)
		return true
	case *kmsg.ShareFetchRequest, *kmsg.ShareAcknowledgeRequest:
		return a.prepare(c)
	}
	return false
}
