package api

import (
	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/wire"
)

// authorized reports whether the request's principal, from its client's
// host, may perform op on the resource typ/name; true without an
// authorizer. A denial is logged (rate-bounded) by the authorizer.
func authorized(s *Services, req *wire.Request, op acl.Operation, typ acl.ResourceType, name string) bool {
	a := s.Env.Auth
	return a == nil || a.Authorize(req.Session.Principal(), req.ClientAddr, op, typ, name)
}

// clusterAuthorized is authorized on the cluster resource.
func clusterAuthorized(s *Services, req *wire.Request, op acl.Operation) bool {
	return authorized(s, req, op, acl.ResourceCluster, acl.ClusterName)
}
