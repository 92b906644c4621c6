package api

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// DescribeAcls, CreateAcls and DeleteAcls (v0-3) manage the ACLs
// (kafka-acls.sh, admin clients). Without an authorizer they answer
// SECURITY_DISABLED; the caller needs DESCRIBE (describe) or ALTER
// (create, delete) on the cluster. Creating and deleting persist (a file
// fsync, or ZooKeeper round trips), so they run off the gnet loop.
var aclAPIs = []API{
	{Key: kmsg.DescribeACLs, Handle: handleDescribeACLs},
	{Key: kmsg.CreateACLs, Handle: handleCreateACLs},
	{Key: kmsg.DeleteACLs, Handle: handleDeleteACLs},
}

// noAuthorizer is the message of SECURITY_DISABLED, as Kafka words it.
const noAuthorizer = "No Authorizer is configured."

// aclChangeRefused is why a CreateAcls or DeleteAcls is refused as a
// whole (every binding or filter gets it): no authorizer, or no ALTER on
// the cluster; kerr.None when it may go ahead.
func aclChangeRefused(s *Services, req *wire.Request) (kerr.Code, *string) {
	switch {
	case s.Env.Auth == nil:
		return kerr.SecurityDisabled, kmsg.StringPtr(noAuthorizer)
	case !clusterAuthorized(s, req, acl.OpAlter):
		return kerr.ClusterAuthorizationFailed, nil
	}
	return kerr.None, nil
}

func handleDescribeACLs(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.DescribeACLsRequest)
	resp := body.ResponseKind().(*kmsg.DescribeACLsResponse)
	f := describeFilter(body)
	switch {
	case s.Env.Auth == nil:
		resp.ErrorCode, resp.ErrorMessage = int16(kerr.SecurityDisabled), kmsg.StringPtr(noAuthorizer)
	case !clusterAuthorized(s, req, acl.OpDescribe):
		resp.ErrorCode = int16(kerr.ClusterAuthorizationFailed)
	case f.Validate() != nil:
		resp.ErrorCode, resp.ErrorMessage = int16(kerr.InvalidRequest), kmsg.StringPtr(f.Validate().Error())
	default:
		resp.Resources = describedResources(s.Env.Auth.State().Bindings(f))
	}
	env.Reply(req, resp)
}

func handleCreateACLs(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.CreateACLsRequest)
	resp := body.ResponseKind().(*kmsg.CreateACLsResponse)
	resp.Results = make([]kmsg.CreateACLsResponseResult, len(body.Creations))
	if code, msg := aclChangeRefused(s, req); code != kerr.None {
		for i := range resp.Results {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = int16(code), msg
		}
		env.Reply(req, resp)
		return
	}
	bindings := make([]acl.Binding, len(body.Creations))
	for i := range body.Creations {
		bindings[i] = creationBinding(body.Version, &body.Creations[i])
	}
	go func() {
		for i, err := range s.Env.Auth.Create(bindings) {
			if err != nil {
				resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = aclErrorCode(err), kmsg.StringPtr(err.Error())
			}
		}
		s.Env.Log.Info("ACLs created", "bindings", len(bindings), "principal", req.Session.Principal(), "client", req.ClientAddr)
		env.Reply(req, resp)
	}()
}

func handleDeleteACLs(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.DeleteACLsRequest)
	resp := body.ResponseKind().(*kmsg.DeleteACLsResponse)
	resp.Results = make([]kmsg.DeleteACLsResponseResult, len(body.Filters))
	if code, msg := aclChangeRefused(s, req); code != kerr.None {
		for i := range resp.Results {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = int16(code), msg
		}
		env.Reply(req, resp)
		return
	}
	filters := make([]acl.Filter, len(body.Filters))
	for i := range body.Filters {
		filters[i] = deleteFilter(body.Version, &body.Filters[i])
	}
	go func() {
		matched, errs := s.Env.Auth.Delete(filters)
		n := 0
		for i := range resp.Results {
			if errs[i] != nil {
				resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = aclErrorCode(errs[i]), kmsg.StringPtr(errs[i].Error())
				continue
			}
			for _, b := range matched[i] {
				resp.Results[i].MatchingACLs = append(resp.Results[i].MatchingACLs, matchingACL(b))
			}
			n += len(matched[i])
		}
		s.Env.Log.Info("ACLs deleted", "bindings", n, "principal", req.Session.Principal(), "client", req.ClientAddr)
		env.Reply(req, resp)
	}()
}

// aclErrorCode is the code of a failed creation or deletion: the store
// failing is the server's error, anything else the request's.
func aclErrorCode(err error) int16 {
	if errors.Is(err, acl.ErrStore) {
		return int16(kerr.UnknownServerError)
	}
	return int16(kerr.InvalidRequest)
}
