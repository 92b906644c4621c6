package sharegroup

import (
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupType is a share group's type and protocol type in ListGroups.
const groupType = "share"

// ListGroups asks the share coordinator for its part of a ListGroups
// answer: the share groups this broker coordinates that pass the
// request's filters. Reply runs on the actor's goroutine.
type ListGroups struct {
	Req   *kmsg.ListGroupsRequest
	Reply func(*kmsg.ListGroupsResponse)
}

// ListGroups sends l to the coordinator; a broker without one answers no
// share groups.
func (s *Service) ListGroups(l *ListGroups) {
	if s == nil {
		resp := kmsg.NewPtrListGroupsResponse()
		resp.Version = l.Req.Version
		l.Reply(resp)
		return
	}
	s.env.Send(s.pid, l)
}

// listGroups lists the share groups this broker coordinates (v4's state
// filter and v5's type filter compared without regard to case, as
// Kafka does; empty filters pass every group), sorted by id.
func (a *coordinatorActor) listGroups(r *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := kmsg.NewPtrListGroupsResponse()
	resp.Version = r.Version
	if len(r.TypesFilter) > 0 && !containsFold(r.TypesFilter, groupType) {
		return resp
	}
	for _, id := range slices.Sorted(maps.Keys(a.groups)) {
		g := a.groups[id]
		if len(r.StatesFilter) > 0 && !containsFold(r.StatesFilter, g.State()) {
			continue
		}
		if a.coordinates(id) != 0 {
			continue // the coordinator moved; the tick forgets the group
		}
		e := kmsg.NewListGroupsResponseGroup()
		e.Group, e.ProtocolType, e.GroupState, e.GroupType = id, groupType, g.State(), groupType
		resp.Groups = append(resp.Groups, e)
	}
	return resp
}

func containsFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) })
}
