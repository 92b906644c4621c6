package group

import (
	"strings"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Describe is the group's DescribeGroups entry at the given request
// version. Member metadata and assignments are shown only for a Stable
// group (otherwise they are in flux). A group that does not exist reads
// as Dead with no error before v6, GROUP_ID_NOT_FOUND from v6.
func (g *Group) Describe(version int16) kmsg.DescribeGroupsResponseGroup {
	d := kmsg.NewDescribeGroupsResponseGroup()
	d.Group = g.id
	if !g.exists() || g.cg != nil {
		d.State = Dead.String()
		if version >= 6 {
			d.ErrorCode = int16(kerr.GroupIDNotFound)
			d.ErrorMessage = strPtr("Group " + g.id + " not found.")
			if g.cg != nil {
				d.ErrorMessage = strPtr("Group " + g.id + " is not a classic group.")
			}
		}
		return d
	}
	d.State = g.state.String()
	d.ProtocolType = g.protocolType
	if g.state == Stable {
		d.Protocol = g.protocol
	}
	for _, id := range g.order {
		m := g.members[id]
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID, dm.InstanceID = m.id, optional(m.instanceID)
		dm.ClientID, dm.ClientHost = m.clientID, m.clientHost
		dm.ProtocolMetadata = []byte{}
		dm.MemberAssignment = []byte{}
		if g.state == Stable {
			dm.ProtocolMetadata = nonNil(m.metadataFor(g.protocol))
			dm.MemberAssignment = nonNil(m.assignment)
		}
		d.Members = append(d.Members, dm)
	}
	return d
}

// ListEntry is the group's ListGroups entry; ok is false when the group
// does not exist or its state is not in statesFilter (v4+, compared
// without regard to case; empty means all) or "classic" is not in
// typesFilter (v5+).
func (g *Group) ListEntry(statesFilter, typesFilter []string) (kmsg.ListGroupsResponseGroup, bool) {
	e := kmsg.NewListGroupsResponseGroup()
	if !g.exists() {
		return e, false
	}
	if g.cg != nil {
		return g.consumerListEntry(statesFilter, typesFilter)
	}
	if len(statesFilter) > 0 && !containsFold(statesFilter, g.state.String()) {
		return e, false
	}
	if len(typesFilter) > 0 && !containsFold(typesFilter, "classic") {
		return e, false
	}
	e.Group = g.id
	e.ProtocolType = g.protocolType
	e.GroupState = g.state.String()
	e.GroupType = "classic"
	return e, true
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// DeleteGroups deletes the group if it is Empty (NON_EMPTY_GROUP when it
// has members, GROUP_ID_NOT_FOUND when it does not exist): the group goes
// Dead and tombstones for its offsets and its metadata are appended. The
// answer, a DeleteGroupsResponse with this group's entry only, comes from
// OnAppended (at once when nothing is appended); the router merges the
// entries of a batched request.
func (g *Group) DeleteGroups(t Ticket, version int16, now time.Time) Effects {
	g.begin()
	r := kmsg.NewPtrDeleteGroupsResponse()
	r.Version = version
	e := kmsg.NewDeleteGroupsResponseGroup()
	e.Group = g.id
	switch {
	case !g.exists():
		e.ErrorCode = int16(kerr.GroupIDNotFound)
	case g.state != Empty:
		e.ErrorCode = int16(kerr.NonEmptyGroup)
	}
	if e.ErrorCode != 0 {
		r.Groups = append(r.Groups, e)
		g.reply(t, r)
		return g.end()
	}
	var recs []Record
	for _, tp := range g.sortedOffsets() {
		recs = append(recs, Record{Key: OffsetKeyBytes(g.id, tp.topic, tp.partition)})
	}
	clear(g.offsets)
	recs = append(recs, g.die(now)...)
	g.appendRecords(recs, func(code kerr.Code, _ time.Time) {
		e.ErrorCode = int16(groupAppendError(code))
		r.Groups = append(r.Groups, e)
		g.reply(t, r)
	})
	return g.end()
}
