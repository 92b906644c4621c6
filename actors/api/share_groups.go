package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/sharegroup"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// shareAPIs are the share-group APIs (KIP-932), one file each.
var shareAPIs = []API{shareGroupHeartbeat, shareGroupDescribe, shareFetch, shareAcknowledge,
	describeShareGroupOffsets, alterShareGroupOffsets, deleteShareGroupOffsets}

// toShareCoordinator hands a share request to the share coordinator.
func toShareCoordinator(s *Services, req *wire.Request) {
	s.Shares.Handle(&sharegroup.Call{Req: req, ClientID: req.Header.ClientID, Client: clientHost(req.ClientAddr)})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// gateShare needs READ on the group for every share API (DESCRIBE for
// ShareGroupDescribe), as Kafka does; topics are checked as the group
// is: a member may read what its group may.
func gateShare(s *Services, req *wire.Request) bool {
	groupOK := func(op acl.Operation, id string) bool { return authorized(s, req, op, acl.ResourceGroup, id) }
	var id string
	op := acl.OpRead
	switch r := req.Body.(type) {
	case *kmsg.ShareGroupHeartbeatRequest:
		id = r.GroupID
	case *kmsg.ShareFetchRequest:
		id = deref(r.GroupID)
	case *kmsg.ShareAcknowledgeRequest:
		id = deref(r.GroupID)
	case *kmsg.AlterShareGroupOffsetsRequest:
		id = r.GroupID
	case *kmsg.DeleteShareGroupOffsetsRequest:
		id, op = r.GroupID, acl.OpDelete
	case *kmsg.DescribeShareGroupOffsetsRequest:
		for _, g := range r.Groups {
			if !groupOK(acl.OpDescribe, g.GroupID) {
				resp := r.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
				resp.Version = r.Version
				for _, g := range r.Groups {
					out := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
					out.GroupID, out.ErrorCode = g.GroupID, int16(kerr.GroupAuthorizationFailed)
					resp.Groups = append(resp.Groups, out)
				}
				env.Reply(req, resp)
				return true
			}
		}
		return false
	case *kmsg.ShareGroupDescribeRequest:
		for _, g := range r.GroupIDs {
			if !groupOK(acl.OpDescribe, g) {
				resp := r.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
				resp.Version = r.Version
				for _, g := range r.GroupIDs {
					out := kmsg.NewShareGroupDescribeResponseGroup()
					out.GroupID, out.ErrorCode = g, int16(kerr.GroupAuthorizationFailed)
					resp.Groups = append(resp.Groups, out)
				}
				env.Reply(req, resp)
				return true
			}
		}
		return false
	}
	if groupOK(op, id) {
		return false
	}
	resp := req.Body.ResponseKind()
	resp.SetVersion(req.Body.GetVersion())
	switch r := resp.(type) {
	case *kmsg.ShareGroupHeartbeatResponse:
		r.ErrorCode = int16(kerr.GroupAuthorizationFailed)
	case *kmsg.ShareFetchResponse:
		r.ErrorCode = int16(kerr.GroupAuthorizationFailed)
	case *kmsg.ShareAcknowledgeResponse:
		r.ErrorCode = int16(kerr.GroupAuthorizationFailed)
	case *kmsg.AlterShareGroupOffsetsResponse:
		r.ErrorCode = int16(kerr.GroupAuthorizationFailed)
	case *kmsg.DeleteShareGroupOffsetsResponse:
		r.ErrorCode = int16(kerr.GroupAuthorizationFailed)
	}
	env.Reply(req, resp)
	return true
}
