package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// gated runs gate before next when an authorizer is on; a gate that
// answered the whole request (refused it) stops it there. Without an
// authorizer the cost is the one nil check.
func gated(gate func(*Services, *wire.Request) (answered bool), next func(*Services, *wire.Request)) func(*Services, *wire.Request) {
	return func(s *Services, req *wire.Request) {
		if s.Env.Auth != nil && gate(s, req) {
			return
		}
		next(s, req)
	}
}

// gateMetadata applies Kafka's rules to Metadata: a named topic the
// client may not DESCRIBE is answered TOPIC_AUTHORIZATION_FAILED; one
// that does not exist and would be auto-created needs CREATE on the
// cluster or the topic (else TOPIC_AUTHORIZATION_FAILED); a request for
// all topics lists only those the client may DESCRIBE; the authorized
// operations fields, when asked, are the client's.
func gateMetadata(s *Services, req *wire.Request) bool {
	body := req.Body.(*kmsg.MetadataRequest)
	a, principal := s.Env.Auth, req.Session.Principal()
	all := body.Topics == nil || body.Version == 0 && len(body.Topics) == 0
	autoCreate := (body.Version < 4 || body.AllowAutoTopicCreation) && s.Env.Config != nil &&
		config.ParseBool(s.Env.Config.Value(config.KeyAutoCreateTopics))
	var createCluster *bool
	named := make(map[string]bool)
	var denied []string
	if !all {
		kept, dropped := splitBy(body.Topics, func(t *kmsg.MetadataRequestTopic) bool {
			if t.Topic == nil {
				return true // by id: decided on the answer, which has the name
			}
			name := *t.Topic
			if !a.Authorize(principal, req.ClientAddr, acl.OpDescribe, acl.ResourceTopic, name) {
				return false
			}
			if autoCreate && !topicExists(s, name) {
				if createCluster == nil {
					ok := a.Allowed(principal, req.ClientAddr, acl.OpCreate, acl.ResourceCluster, acl.ClusterName)
					createCluster = &ok
				}
				if !*createCluster && !a.Authorize(principal, req.ClientAddr, acl.OpCreate, acl.ResourceTopic, name) {
					return false
				}
			}
			named[name] = true
			return true
		})
		for _, t := range dropped {
			denied = append(denied, *t.Topic)
		}
		body.Topics = kept
		if len(kept) == 0 && body.Version == 0 {
			body.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("")}} // v0 reads an empty list as all
			named[""] = false
		}
	}
	amendReply(req, func(r kmsg.Response) {
		resp := r.(*kmsg.MetadataResponse)
		resp.Topics, _ = splitBy(resp.Topics, func(t *kmsg.MetadataResponseTopic) bool {
			name := ""
			if t.Topic != nil {
				name = *t.Topic
			}
			if all {
				return a.Allowed(principal, req.ClientAddr, acl.OpDescribe, acl.ResourceTopic, name)
			}
			ok, asked := named[name]
			if !asked { // asked by id
				return a.Authorize(principal, req.ClientAddr, acl.OpDescribe, acl.ResourceTopic, name)
			}
			return ok
		})
		for _, name := range denied {
			t := kmsg.NewMetadataResponseTopic()
			t.Topic, t.ErrorCode = kmsg.StringPtr(name), int16(kerr.TopicAuthorizationFailed)
			resp.Topics = append(resp.Topics, t)
		}
		if body.Version >= 8 && body.IncludeTopicAuthorizedOperations {
			for i := range resp.Topics {
				if t := &resp.Topics[i]; t.ErrorCode == 0 && t.Topic != nil {
					t.AuthorizedOperations = operations(a, req, acl.ResourceTopic, *t.Topic)
				}
			}
		}
		if body.Version >= 8 && body.Version <= 10 && body.IncludeClusterAuthorizedOperations {
			resp.AuthorizedOperations = operations(a, req, acl.ResourceCluster, acl.ClusterName)
		}
	})
	return false
}

// topicExists reports whether the broker knows the topic: its own
// routing table, or in cluster mode the cluster's view.
func topicExists(s *Services, name string) bool {
	if s.Env.Routes.Load().Topics[name] != nil {
		return true
	}
	if s.Env.Cluster == nil {
		return false
	}
	v := s.Env.Cluster.Load()
	return v != nil && v.Topics[name] != nil
}

// supportedOperations are the operations reported, per resource type, in
// authorized-operations bitfields (Kafka's per-type lists).
var supportedOperations = map[acl.ResourceType][]acl.Operation{
	acl.ResourceTopic: {acl.OpRead, acl.OpWrite, acl.OpCreate, acl.OpDescribe, acl.OpDelete, acl.OpAlter,
		acl.OpDescribeConfigs, acl.OpAlterConfigs},
	acl.ResourceGroup: {acl.OpRead, acl.OpDescribe, acl.OpDelete, acl.OpDescribeConfigs, acl.OpAlterConfigs},
	acl.ResourceCluster: {acl.OpCreate, acl.OpClusterAction, acl.OpDescribeConfigs, acl.OpAlterConfigs,
		acl.OpIdempotentWrite, acl.OpAlter, acl.OpDescribe},
}

// operations is the bitfield (bit n: operation code n) of what the
// client may do on the resource.
func operations(a *acl.Authorizer, req *wire.Request, typ acl.ResourceType, name string) int32 {
	var bits int32
	for _, op := range supportedOperations[typ] {
		if a.Allowed(req.Session.Principal(), req.ClientAddr, op, typ, name) {
			bits |= 1 << op
		}
	}
	return bits
}
