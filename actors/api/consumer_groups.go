package api

import (
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/actors/routing"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// groupConfigOf is group's own consumer.session.timeout.ms and
// consumer.heartbeat.interval.ms, from the published routes (zero when
// not set: the broker's apply). The metadata actor checked them against
// the broker's bounds when they were set.
func groupConfigOf(s *Services, id string) group.ConsumerGroupConfig {
	r := s.Env.Routes.Load()
	if r == nil || r.GroupConfigs[id] == nil {
		return group.ConsumerGroupConfig{}
	}
	ms := func(name string) time.Duration {
		n, err := strconv.ParseInt(r.GroupConfigs[id][name], 10, 64)
		if err != nil || n <= 0 {
			return 0
		}
		return time.Duration(n) * time.Millisecond
	}
	return group.ConsumerGroupConfig{SessionTimeout: ms("consumer.session.timeout.ms"), HeartbeatInterval: ms("consumer.heartbeat.interval.ms")}
}

// clusterTopics is the topics a KIP-848 heartbeat resolves subscriptions
// and computes assignments against: the controller's view in cluster mode
// (every topic of the cluster), else this broker's routes. Both are
// immutable snapshots, read without copying.
func clusterTopics(s *Services) group.Topics {
	if s.Env.Cluster != nil {
		if v := s.Env.Cluster.Load(); v != nil {
			return viewTopics{v}
		}
	}
	return routeTopics{s.Env.Routes.Load()}
}

type routeTopics struct{ r *routing.Routes }

func (t routeTopics) Topic(name string) (group.TopicMeta, bool) {
	if t.r == nil {
		return group.TopicMeta{}, false
	}
	rt, ok := t.r.Topics[name]
	if !ok {
		return group.TopicMeta{}, false
	}
	return group.TopicMeta{ID: rt.ID, Partitions: int32(len(rt.Partitions))}, true
}

func (t routeTopics) Names() []string {
	if t.r == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(t.r.Topics))
}

type viewTopics struct{ v *cluster.View }

func (t viewTopics) Topic(name string) (group.TopicMeta, bool) {
	ct, ok := t.v.Topics[name]
	if !ok {
		return group.TopicMeta{}, false
	}
	return group.TopicMeta{ID: ct.ID, Partitions: int32(len(ct.Partitions))}, true
}

func (t viewTopics) Names() []string { return slices.Sorted(maps.Keys(t.v.Topics)) }

// Snapshot is group.TopicsSnapshot's: a view is replaced, never changed.
func (t viewTopics) Snapshot() any { return t.v }

// Snapshot is group.TopicsSnapshot's: routes are replaced, never changed.
func (t routeTopics) Snapshot() any { return t.r }

// splitConsumerGroupDescribe asks each coordinator about its groups and
// puts the answers back in the request's order.
func splitConsumerGroupDescribe(s *Services, req *wire.Request, r *kmsg.ConsumerGroupDescribeRequest, pids []*actor.PID,
	send func(*actor.PID, group.Ticket, kmsg.Request)) {
	entries := func(p kmsg.Response) []kmsg.ConsumerGroupDescribeResponseGroup {
		return p.(*kmsg.ConsumerGroupDescribeResponse).Groups
	}
	splitGroups(s, req, pids, r.Groups, func(id string) string { return id },
		func(ids []string) kmsg.Request { sub := *r; sub.Groups = ids; return &sub },
		func(parts []kmsg.Response, where [][]int) kmsg.Response {
			out := &kmsg.ConsumerGroupDescribeResponse{Version: r.Version, Groups: make([]kmsg.ConsumerGroupDescribeResponseGroup, len(r.Groups))}
			for i := range parts {
				for j, g := range entries(parts[i]) {
					out.Groups[where[i][j]] = g
				}
			}
			return out
		}, send)
}

// gateConsumerGroupDescribe answers GROUP_AUTHORIZATION_FAILED for the
// groups the client may not DESCRIBE and, when asked, fills in the
// operations it may perform on the others.
func gateConsumerGroupDescribe(s *Services, req *wire.Request, body *kmsg.ConsumerGroupDescribeRequest) {
	if body.IncludeAuthorizedOperations {
		amendReply(req, func(r kmsg.Response) {
			groups := r.(*kmsg.ConsumerGroupDescribeResponse).Groups
			for i, g := range groups {
				if g.ErrorCode == 0 {
					groups[i].AuthorizedOperations = operations(s.Env.Auth, req, acl.ResourceGroup, g.Group)
				}
			}
		})
	}
	gateGroupList(s, req, acl.OpDescribe, &body.Groups, func(r kmsg.Response, id string) {
		resp := r.(*kmsg.ConsumerGroupDescribeResponse)
		resp.Groups = append(resp.Groups, kmsg.ConsumerGroupDescribeResponseGroup{
			Group: id, ErrorCode: int16(kerr.GroupAuthorizationFailed), AuthorizedOperations: -2147483648})
	})
}
