package group

import (
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Heartbeat handles a Heartbeat (v0-v4): it restarts the member's session
// timer and tells it whether a rebalance is under way.
func (g *Group) Heartbeat(t Ticket, req *kmsg.HeartbeatRequest, now time.Time) Effects {
	g.begin()
	g.reply(t, g.heartbeat(req, now))
	return g.end()
}

func (g *Group) heartbeat(req *kmsg.HeartbeatRequest, now time.Time) *kmsg.HeartbeatResponse {
	r := kmsg.NewPtrHeartbeatResponse()
	r.Version = req.Version
	code := func() kerr.Code {
		var instance *string
		if req.Version >= 3 {
			instance = req.InstanceID
		}
		switch {
		case req.Group == "":
			return kerr.InvalidGroupID
		case g.state == Dead:
			return kerr.CoordinatorNotAvailable
		case g.fenced(instance, req.MemberID):
			return kerr.FencedInstanceID
		}
		if g.cg != nil {
			return g.classicHeartbeat(req, now)
		}
		m := g.get(req.MemberID)
		switch {
		case m == nil:
			return kerr.UnknownMemberID
		case req.Generation != g.generation:
			return kerr.IllegalGeneration
		}
		switch g.state {
		case Empty:
			return kerr.UnknownMemberID
		case PreparingRebalance:
			g.heartbeatFrom(m, now)
			return kerr.RebalanceInProgress
		default:
			// CompletingRebalance answers NONE like Stable: a member
			// may heartbeat between its JoinGroup answer and its
			// SyncGroup.
			g.heartbeatFrom(m, now)
			return kerr.None
		}
	}()
	r.ErrorCode = int16(code)
	return r
}
