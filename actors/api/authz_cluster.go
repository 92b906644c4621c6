package api

import (
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// gateClusterOp refuses a request unless the client may op on the
// cluster: CLUSTER_ACTION for the inter-broker and controller APIs,
// ALTER for elections and reassignments, DESCRIBE for listing them. The
// refusal is the response's top-level error code.
func gateClusterOp(op acl.Operation) func(*Services, *wire.Request) bool {
	return func(s *Services, req *wire.Request) bool {
		if clusterAuthorized(s, req, op) {
			return false
		}
		env.Reply(req, topLevelError(req.Body, kerr.ClusterAuthorizationFailed))
		return true
	}
}

// topLevelError is req's response with its top-level ErrorCode set to
// code: every API gateClusterOp guards has one (ElectLeaders from v1;
// v0 clients get an empty answer).
func topLevelError(req kmsg.Request, code kerr.Code) kmsg.Response {
	resp := req.ResponseKind()
	if f := reflect.ValueOf(resp).Elem().FieldByName("ErrorCode"); f.IsValid() && f.Kind() == reflect.Int16 && f.CanSet() {
		f.SetInt(int64(code))
	}
	return resp
}

// gateInitProducerID: WRITE on the transactional id for a transactional
// producer; for an idempotent one IDEMPOTENT_WRITE on the cluster or, as
// Kafka 3.x allows, WRITE on some topic.
func gateInitProducerID(s *Services, req *wire.Request) bool {
	body := req.Body.(*kmsg.InitProducerIDRequest)
	code := kerr.None
	if body.TransactionalID != nil {
		if !authorized(s, req, acl.OpWrite, acl.ResourceTransactionalID, *body.TransactionalID) {
			code = kerr.TransactionalIDAuthorizationFailed
		}
	} else if !clusterAllowed(s, req, acl.OpIdempotentWrite) &&
		!s.Env.Auth.AnyAllowed(req.Session.Principal(), req.ClientAddr, acl.OpWrite, acl.ResourceTopic) {
		clusterAuthorized(s, req, acl.OpIdempotentWrite) // logs the denial
		code = kerr.ClusterAuthorizationFailed
	}
	if code == kerr.None {
		return false
	}
	resp := body.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = int16(code), -1, -1
	env.Reply(req, resp)
	return true
}

// gateFindCoordinator: DESCRIBE on the group or the transactional id
// looked up.
func gateFindCoordinator(s *Services, req *wire.Request) bool {
	body := req.Body.(*kmsg.FindCoordinatorRequest)
	typ, code := acl.ResourceGroup, kerr.GroupAuthorizationFailed
	switch body.CoordinatorType {
	case coordinatorKeyGroup:
	case coordinatorKeyTransaction:
		typ, code = acl.ResourceTransactionalID, kerr.TransactionalIDAuthorizationFailed
	default:
		return false // refused as it is without ACLs
	}
	if body.Version < 4 {
		if authorized(s, req, acl.OpDescribe, typ, body.CoordinatorKey) {
			return false
		}
		resp := body.ResponseKind().(*kmsg.FindCoordinatorResponse)
		resp.ErrorCode, resp.NodeID, resp.Port = int16(code), -1, -1
		env.Reply(req, resp)
		return true
	}
	kept, denied := splitBy(body.CoordinatorKeys, func(k *string) bool { return authorized(s, req, acl.OpDescribe, typ, *k) })
	if len(denied) == 0 {
		return false
	}
	body.CoordinatorKeys = kept
	amendReply(req, func(r kmsg.Response) {
		resp := r.(*kmsg.FindCoordinatorResponse)
		for _, k := range denied {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key, c.ErrorCode, c.NodeID, c.Port = k, int16(code), -1, -1
			resp.Coordinators = append(resp.Coordinators, c)
		}
	})
	return false
}
