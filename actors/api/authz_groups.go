package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// gateGroups applies Kafka's rules to the group APIs: READ on the group
// to join, sync, heartbeat, leave and commit (and READ on each topic
// committed), DESCRIBE to describe it or fetch its offsets (whose topics
// need DESCRIBE too), DELETE to delete it or its offsets; ListGroups
// lists the groups the client may DESCRIBE unless it may DESCRIBE the
// cluster. A transactional commit also needs WRITE on its
// transactional id.
func gateGroups(s *Services, req *wire.Request) bool {
	refuse := func(code kerr.Code) bool {
		env.Reply(req, group.ErrorResponse(req.Body, code))
		return true
	}
	groupOK := func(op acl.Operation, id string) bool { return authorized(s, req, op, acl.ResourceGroup, id) }
	switch body := req.Body.(type) {
	case *kmsg.JoinGroupRequest:
		return !groupOK(acl.OpRead, body.Group) && refuse(kerr.GroupAuthorizationFailed)
	case *kmsg.SyncGroupRequest:
		return !groupOK(acl.OpRead, body.Group) && refuse(kerr.GroupAuthorizationFailed)
	case *kmsg.HeartbeatRequest:
		return !groupOK(acl.OpRead, body.Group) && refuse(kerr.GroupAuthorizationFailed)
	case *kmsg.LeaveGroupRequest:
		return !groupOK(acl.OpRead, body.Group) && refuse(kerr.GroupAuthorizationFailed)
	case *kmsg.OffsetCommitRequest:
		if !groupOK(acl.OpRead, body.Group) {
			return refuse(kerr.GroupAuthorizationFailed)
		}
		gateCommitTopics(s, req, &body.Topics, func(t *kmsg.OffsetCommitRequestTopic) (string, []int32) {
			return t.Topic, partitionIDs(t.Partitions, func(p *kmsg.OffsetCommitRequestTopicPartition) int32 { return p.Partition })
		}, func(r kmsg.Response, topic string, parts []int32) {
			resp := r.(*kmsg.OffsetCommitResponse)
			t := kmsg.NewOffsetCommitResponseTopic()
			t.Topic = topic
			for _, p := range parts {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, taf
				t.Partitions = append(t.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, t)
		})
	case *kmsg.TxnOffsetCommitRequest:
		if !authorized(s, req, acl.OpWrite, acl.ResourceTransactionalID, body.TransactionalID) {
			return refuse(kerr.TransactionalIDAuthorizationFailed)
		}
		if !groupOK(acl.OpRead, body.Group) {
			return refuse(kerr.GroupAuthorizationFailed)
		}
		gateCommitTopics(s, req, &body.Topics, func(t *kmsg.TxnOffsetCommitRequestTopic) (string, []int32) {
			return t.Topic, partitionIDs(t.Partitions, func(p *kmsg.TxnOffsetCommitRequestTopicPartition) int32 { return p.Partition })
		}, func(r kmsg.Response, topic string, parts []int32) {
			resp := r.(*kmsg.TxnOffsetCommitResponse)
			t := kmsg.NewTxnOffsetCommitResponseTopic()
			t.Topic = topic
			for _, p := range parts {
				rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, taf
				t.Partitions = append(t.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, t)
		})
	case *kmsg.OffsetDeleteRequest:
		if !groupOK(acl.OpDelete, body.Group) {
			return refuse(kerr.GroupAuthorizationFailed)
		}
		gateCommitTopics(s, req, &body.Topics, func(t *kmsg.OffsetDeleteRequestTopic) (string, []int32) {
			return t.Topic, partitionIDs(t.Partitions, func(p *kmsg.OffsetDeleteRequestTopicPartition) int32 { return p.Partition })
		}, func(r kmsg.Response, topic string, parts []int32) {
			resp := r.(*kmsg.OffsetDeleteResponse)
			t := kmsg.NewOffsetDeleteResponseTopic()
			t.Topic = topic
			for _, p := range parts {
				rp := kmsg.NewOffsetDeleteResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, taf
				t.Partitions = append(t.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, t)
		})
	case *kmsg.OffsetFetchRequest:
		return gateOffsetFetch(s, req, body)
	case *kmsg.DescribeGroupsRequest:
		if body.IncludeAuthorizedOperations {
			amendReply(req, func(r kmsg.Response) {
				for i := range r.(*kmsg.DescribeGroupsResponse).Groups {
					if g := &r.(*kmsg.DescribeGroupsResponse).Groups[i]; g.ErrorCode == 0 {
						g.AuthorizedOperations = operations(s.Env.Auth, req, acl.ResourceGroup, g.Group)
					}
				}
			})
		}
		gateGroupList(s, req, acl.OpDescribe, &body.Groups, func(r kmsg.Response, id string) {
			g := kmsg.NewDescribeGroupsResponseGroup()
			g.Group, g.ErrorCode = id, int16(kerr.GroupAuthorizationFailed)
			g.AuthorizedOperations = -2147483648
			resp := r.(*kmsg.DescribeGroupsResponse)
			resp.Groups = append(resp.Groups, g)
		})
	case *kmsg.ConsumerGroupHeartbeatRequest:
		return !groupOK(acl.OpRead, body.Group) && refuse(kerr.GroupAuthorizationFailed)
	case *kmsg.ConsumerGroupDescribeRequest:
		gateConsumerGroupDescribe(s, req, body)
	case *kmsg.DeleteGroupsRequest:
		gateGroupList(s, req, acl.OpDelete, &body.Groups, func(r kmsg.Response, id string) {
			g := kmsg.NewDeleteGroupsResponseGroup()
			g.Group, g.ErrorCode = id, int16(kerr.GroupAuthorizationFailed)
			resp := r.(*kmsg.DeleteGroupsResponse)
			resp.Groups = append(resp.Groups, g)
		})
	case *kmsg.ListGroupsRequest:
		if clusterAllowed(s, req, acl.OpDescribe) {
			return false
		}
		a := s.Env.Auth
		amendReply(req, func(r kmsg.Response) {
			resp := r.(*kmsg.ListGroupsResponse)
			resp.Groups, _ = splitBy(resp.Groups, func(g *kmsg.ListGroupsResponseGroup) bool {
				return a.Allowed(req.Session.Principal(), req.ClientAddr, acl.OpDescribe, acl.ResourceGroup, g.Group)
			})
		})
	}
	return false
}

// partitionIDs lists the partition numbers of a request topic.
func partitionIDs[P any](parts []P, id func(*P) int32) []int32 {
	out := make([]int32, len(parts))
	for i := range parts {
		out[i] = id(&parts[i])
	}
	return out
}

// gateCommitTopics keeps out of a commit (or offset deletion) the topics
// the client may not READ, and answers their partitions
// TOPIC_AUTHORIZATION_FAILED with the rest.
func gateCommitTopics[T any](s *Services, req *wire.Request, topics *[]T, fields func(*T) (string, []int32),
	answer func(r kmsg.Response, topic string, parts []int32)) {
	kept, denied := splitBy(*topics, func(t *T) bool {
		name, _ := fields(t)
		return authorized(s, req, acl.OpRead, acl.ResourceTopic, name)
	})
	if len(denied) == 0 {
		return
	}
	*topics = kept
	amendReply(req, func(r kmsg.Response) {
		for i := range denied {
			name, parts := fields(&denied[i])
			answer(r, name, parts)
		}
	})
}

// gateGroupList keeps out of a batch the groups the client may not op,
// answered by answer with the rest.
func gateGroupList(s *Services, req *wire.Request, op acl.Operation, groups *[]string, answer func(r kmsg.Response, id string)) {
	kept, denied := splitBy(*groups, func(id *string) bool { return authorized(s, req, op, acl.ResourceGroup, *id) })
	if len(denied) == 0 {
		return
	}
	*groups = kept
	amendReply(req, func(r kmsg.Response) {
		for _, id := range denied {
			answer(r, id)
		}
	})
}

// gateOffsetFetch: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED);
// the offsets of topics the client may not DESCRIBE are left out of an
// all-topics fetch and answered TOPIC_AUTHORIZATION_FAILED when named.
func gateOffsetFetch(s *Services, req *wire.Request, body *kmsg.OffsetFetchRequest) bool {
	a, principal := s.Env.Auth, req.Session.Principal()
	topicOK := func(name string) bool {
		return a.Allowed(principal, req.ClientAddr, acl.OpDescribe, acl.ResourceTopic, name)
	}
	if body.Version < 8 {
		if !authorized(s, req, acl.OpDescribe, acl.ResourceGroup, body.Group) {
			env.Reply(req, group.ErrorResponse(req.Body, kerr.GroupAuthorizationFailed))
			return true
		}
		named := body.Topics != nil
		amendReply(req, func(r kmsg.Response) {
			resp := r.(*kmsg.OffsetFetchResponse)
			resp.Topics, _ = splitBy(resp.Topics, func(t *kmsg.OffsetFetchResponseTopic) bool {
				if topicOK(t.Topic) {
					return true
				}
				for i := range t.Partitions {
					t.Partitions[i].ErrorCode, t.Partitions[i].Offset = taf, -1
				}
				return named
			})
		})
		return false
	}
	var denied []string
	body.Groups, _ = splitBy(body.Groups, func(g *kmsg.OffsetFetchRequestGroup) bool {
		if authorized(s, req, acl.OpDescribe, acl.ResourceGroup, g.Group) {
			return true
		}
		denied = append(denied, g.Group)
		return false
	})
	named := make(map[string]bool)
	for _, g := range body.Groups {
		named[g.Group] = g.Topics != nil
	}
	amendReply(req, func(r kmsg.Response) {
		resp := r.(*kmsg.OffsetFetchResponse)
		for i := range resp.Groups {
			g := &resp.Groups[i]
			g.Topics, _ = splitBy(g.Topics, func(t *kmsg.OffsetFetchResponseGroupTopic) bool {
				if topicOK(t.Topic) {
					return true
				}
				for j := range t.Partitions {
					t.Partitions[j].ErrorCode, t.Partitions[j].Offset = taf, -1
				}
				return named[g.Group]
			})
		}
		for _, id := range denied {
			g := kmsg.NewOffsetFetchResponseGroup()
			g.Group, g.ErrorCode = id, int16(kerr.GroupAuthorizationFailed)
			resp.Groups = append(resp.Groups, g)
		}
	})
	return false
}
