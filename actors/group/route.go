package group

import "github.com/twmb/franz-go/pkg/kmsg"

// GroupsOf names the groups a request concerns, for a router that keeps
// one actor per group: the request (or, for a batch, its part) goes to
// each named group's actor, whose coordinator is the leader of
// PartitionFor(id). all is true for ListGroups, which concerns every
// group. ok is false for a request that is not a group API.
//
// Batched requests (DescribeGroups, DeleteGroups, OffsetFetch v8+) are
// answered per group (Group.Describe, Group.DeleteGroups,
// Group.OffsetFetch answer for their own group only) and the answers
// put back together with MergeResponses; ListGroups likewise from every
// group's ListEntry.
func GroupsOf(req kmsg.Request) (ids []string, all, ok bool) {
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		return []string{r.Group}, false, true
	case *kmsg.SyncGroupRequest:
		return []string{r.Group}, false, true
	case *kmsg.HeartbeatRequest:
		return []string{r.Group}, false, true
	case *kmsg.LeaveGroupRequest:
		return []string{r.Group}, false, true
	case *kmsg.OffsetCommitRequest:
		return []string{r.Group}, false, true
	case *kmsg.OffsetDeleteRequest:
		return []string{r.Group}, false, true
	case *kmsg.TxnOffsetCommitRequest:
		return []string{r.Group}, false, true
	case *kmsg.OffsetFetchRequest:
		if r.Version < 8 {
			return []string{r.Group}, false, true
		}
		for _, g := range r.Groups {
			ids = append(ids, g.Group)
		}
		return ids, false, true
	case *kmsg.DescribeGroupsRequest:
		return append([]string(nil), r.Groups...), false, true
	case *kmsg.ConsumerGroupDescribeRequest:
		return append([]string(nil), r.Groups...), false, true
	case *kmsg.ConsumerGroupHeartbeatRequest:
		return []string{r.Group}, false, true
	case *kmsg.DeleteGroupsRequest:
		return append([]string(nil), r.Groups...), false, true
	case *kmsg.ListGroupsRequest:
		return nil, true, true
	}
	return nil, false, false
}

// MergeResponses joins per-group answers to one batched request
// (DescribeGroups, DeleteGroups, OffsetFetch v8+, ListGroups) into the
// first one, keeping the order of parts; give the parts in the order of
// the request's groups. A top-level error of any part (ListGroups) wins.
// Other kinds return the first part unchanged.
func MergeResponses(parts ...kmsg.Response) kmsg.Response {
	if len(parts) == 0 {
		return nil
	}
	switch first := parts[0].(type) {
	case *kmsg.DescribeGroupsResponse:
		for _, p := range parts[1:] {
			first.Groups = append(first.Groups, p.(*kmsg.DescribeGroupsResponse).Groups...)
		}
	case *kmsg.ConsumerGroupDescribeResponse:
		for _, p := range parts[1:] {
			first.Groups = append(first.Groups, p.(*kmsg.ConsumerGroupDescribeResponse).Groups...)
		}
	case *kmsg.DeleteGroupsResponse:
		for _, p := range parts[1:] {
			first.Groups = append(first.Groups, p.(*kmsg.DeleteGroupsResponse).Groups...)
		}
	case *kmsg.OffsetFetchResponse:
		for _, p := range parts[1:] {
			first.Groups = append(first.Groups, p.(*kmsg.OffsetFetchResponse).Groups...)
		}
	case *kmsg.ListGroupsResponse:
		for _, p := range parts[1:] {
			lp := p.(*kmsg.ListGroupsResponse)
			first.Groups = append(first.Groups, lp.Groups...)
			if first.ErrorCode == 0 {
				first.ErrorCode = lp.ErrorCode
			}
		}
	}
	return parts[0]
}
