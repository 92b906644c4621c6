package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// The admin APIs' gates (see gated): the topics or resources the client
// may not act on are taken out of the request and answered with Kafka's
// error when the rest comes back from the metadata actor.

var taf = int16(kerr.TopicAuthorizationFailed)

// gateCreateTopics: CREATE on the cluster, or else on each topic.
func gateCreateTopics(s *Services, req *wire.Request) bool {
	body := req.Body.(*kmsg.CreateTopicsRequest)
	if clusterAllowed(s, req, acl.OpCreate) {
		return false
	}
	kept, denied := splitBy(body.Topics, func(t *kmsg.CreateTopicsRequestTopic) bool {
		return authorized(s, req, acl.OpCreate, acl.ResourceTopic, t.Topic)
	})
	if len(denied) == 0 {
		return false
	}
	body.Topics = kept
	amendReply(req, func(r kmsg.Response) {
		resp := r.(*kmsg.CreateTopicsResponse)
		for _, t := range denied {
			rt := kmsg.NewCreateTopicsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.NumPartitions, rt.ReplicationFactor = t.Topic, taf, -1, -1
			resp.Topics = append(resp.Topics, rt)
		}
	})
	return false
}

// gateDeleteTopics: DELETE on each topic (by name; v6 may name by id,
// decided once the name is known to the metadata actor's answer).
func gateDeleteTopics(s *Services, req *wire.Request) bool {
	body := req.Body.(*kmsg.DeleteTopicsRequest)
	var denied []string
	body.TopicNames, _ = splitBy(body.TopicNames, func(t *string) bool {
		if authorized(s, req, acl.OpDelete, acl.ResourceTopic, *t) {
			return true
		}
		denied = append(denied, *t)
		return false
	})
	byID := false
	body.Topics, _ = splitBy(body.Topics, func(t *kmsg.DeleteTopicsRequestTopic) bool {
		if t.Topic == nil {
			byID = true
			return true
		}
		if authorized(s, req, acl.OpDelete, acl.ResourceTopic, *t.Topic) {
			return true
		}
		denied = append(denied, *t.Topic)
		return false
	})
	if byID {
		// A topic named by id only: decided before asking, by its name.
		// An id no one knows is left to the metadata actor's answer
		// (UNKNOWN_TOPIC_ID).
		body.Topics, _ = splitBy(body.Topics, func(t *kmsg.DeleteTopicsRequestTopic) bool {
			if t.Topic != nil {
				return true
			}
			name, ok := topicNameByID(s, t.TopicID)
			if ok && !authorized(s, req, acl.OpDelete, acl.ResourceTopic, name) {
				denied = append(denied, name)
				return false
			}
			return true
		})
	}
	if len(denied) == 0 {
		return false
	}
	amendReply(req, func(r kmsg.Response) {
		resp := r.(*kmsg.DeleteTopicsResponse)
		for _, name := range denied {
			rt := kmsg.NewDeleteTopicsResponseTopic()
			rt.Topic, rt.ErrorCode = kmsg.StringPtr(name), taf
			resp.Topics = append(resp.Topics, rt)
		}
	})
	return false
}

// gateCreatePartitions: ALTER on each topic.
func gateCreatePartitions(s *Services, req *wire.Request) bool {
	body := req.Body.(*kmsg.CreatePartitionsRequest)
	kept, denied := splitBy(body.Topics, func(t *kmsg.CreatePartitionsRequestTopic) bool {
		return authorized(s, req, acl.OpAlter, acl.ResourceTopic, t.Topic)
	})
	if len(denied) == 0 {
		return false
	}
	body.Topics = kept
	amendReply(req, func(r kmsg.Response) {
		resp := r.(*kmsg.CreatePartitionsResponse)
		for _, t := range denied {
			rt := kmsg.NewCreatePartitionsResponseTopic()
			rt.Topic, rt.ErrorCode = t.Topic, taf
			resp.Topics = append(resp.Topics, rt)
		}
	})
	return false
}

// configResource is a config resource's type and name, with the error a
// denial of it is answered with.
type configResource struct {
	typ  kmsg.ConfigResourceType
	name string
	code int16
}

// configAllowed decides op on a config resource: a topic's own ACLs
// (TOPIC_AUTHORIZATION_FAILED), the cluster's for a broker or broker
// logger (CLUSTER_AUTHORIZATION_FAILED). Other types pass on to the
// metadata actor, which refuses them.
func configAllowed(s *Services, req *wire.Request, op acl.Operation, typ kmsg.ConfigResourceType, name string) (int16, bool) {
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		return taf, authorized(s, req, op, acl.ResourceTopic, name)
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
		return int16(kerr.ClusterAuthorizationFailed), clusterAuthorized(s, req, op)
	}
	return 0, true
}

// gateConfigs gates DescribeConfigs (DESCRIBE_CONFIGS), AlterConfigs
// and IncrementalAlterConfigs (ALTER_CONFIGS) resource by resource.
func gateConfigs(s *Services, req *wire.Request) bool {
	var denied []configResource
	keep := func(op acl.Operation, typ kmsg.ConfigResourceType, name string) bool {
		code, ok := configAllowed(s, req, op, typ, name)
		if !ok {
			denied = append(denied, configResource{typ: typ, name: name, code: code})
		}
		return ok
	}
	switch body := req.Body.(type) {
	case *kmsg.DescribeConfigsRequest:
		body.Resources, _ = splitBy(body.Resources, func(r *kmsg.DescribeConfigsRequestResource) bool {
			return keep(acl.OpDescribeConfigs, r.ResourceType, r.ResourceName)
		})
	case *kmsg.AlterConfigsRequest:
		body.Resources, _ = splitBy(body.Resources, func(r *kmsg.AlterConfigsRequestResource) bool {
			return keep(acl.OpAlterConfigs, r.ResourceType, r.ResourceName)
		})
	case *kmsg.IncrementalAlterConfigsRequest:
		body.Resources, _ = splitBy(body.Resources, func(r *kmsg.IncrementalAlterConfigsRequestResource) bool {
			return keep(acl.OpAlterConfigs, r.ResourceType, r.ResourceName)
		})
	}
	if len(denied) == 0 {
		return false
	}
	amendReply(req, func(r kmsg.Response) {
		for _, d := range denied {
			switch resp := r.(type) {
			case *kmsg.DescribeConfigsResponse:
				rr := kmsg.NewDescribeConfigsResponseResource()
				rr.ResourceType, rr.ResourceName, rr.ErrorCode = d.typ, d.name, d.code
				resp.Resources = append(resp.Resources, rr)
			case *kmsg.AlterConfigsResponse:
				rr := kmsg.NewAlterConfigsResponseResource()
				rr.ResourceType, rr.ResourceName, rr.ErrorCode = d.typ, d.name, d.code
				resp.Resources = append(resp.Resources, rr)
			case *kmsg.IncrementalAlterConfigsResponse:
				rr := kmsg.NewIncrementalAlterConfigsResponseResource()
				rr.ResourceType, rr.ResourceName, rr.ErrorCode = d.typ, d.name, d.code
				resp.Resources = append(resp.Resources, rr)
			}
		}
	})
	return false
}

// gateDescribeCluster: DESCRIBE on the cluster; the authorized
// operations, when asked, are the client's.
func gateDescribeCluster(s *Services, req *wire.Request) bool {
	body := req.Body.(*kmsg.DescribeClusterRequest)
	if !clusterAuthorized(s, req, acl.OpDescribe) {
		resp := body.ResponseKind().(*kmsg.DescribeClusterResponse)
		resp.ErrorCode, resp.ControllerID = int16(kerr.ClusterAuthorizationFailed), -1
		env.Reply(req, resp)
		return true
	}
	if body.IncludeClusterAuthorizedOperations {
		amendReply(req, func(r kmsg.Response) {
			r.(*kmsg.DescribeClusterResponse).ClusterAuthorizedOperations = operations(s.Env.Auth, req, acl.ResourceCluster, acl.ClusterName)
		})
	}
	return false
}

// gateDescribeLogDirs: DESCRIBE on the cluster, else an empty answer
// (v3+ with CLUSTER_AUTHORIZATION_FAILED), as Kafka does.
func gateDescribeLogDirs(s *Services, req *wire.Request) bool {
	if clusterAuthorized(s, req, acl.OpDescribe) {
		return false
	}
	resp := req.Body.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	resp.ErrorCode = int16(kerr.ClusterAuthorizationFailed)
	env.Reply(req, resp)
	return true
}

// clusterAllowed is clusterAuthorized without logging a denial, for a
// check with a fallback (CREATE on the cluster, else on the topic).
func clusterAllowed(s *Services, req *wire.Request, op acl.Operation) bool {
	return s.Env.Auth.Allowed(req.Session.Principal(), req.ClientAddr, op, acl.ResourceCluster, acl.ClusterName)
}

// topicNameByID finds a topic's name by its id: this broker's routing
// table, or in cluster mode the cluster's view.
func topicNameByID(s *Services, id [16]byte) (string, bool) {
	for _, rt := range s.Env.Routes.Load().Topics {
		if [16]byte(rt.ID) == id {
			return rt.Name, true
		}
	}
	if s.Env.Cluster == nil {
		return "", false
	}
	if v := s.Env.Cluster.Load(); v != nil {
		if t, ok := v.TopicByID(id); ok {
			return t.Name, true
		}
	}
	return "", false
}
