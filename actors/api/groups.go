package api

import (
	"net"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/coordinator"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/gather"
	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/actors/routing"
	"github.com/samsa-io/samsa/actors/sharegroup"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// The group APIs all route through handleGroupRequest to the group
// coordinator actors (actors/coordinator); one row each.
var groupAPIs = []API{
	{Key: kmsg.JoinGroup, Handle: gated(gateGroups, handleGroupRequest)},
	{Key: kmsg.SyncGroup, Handle: gated(gateGroups, handleGroupRequest)},
	{Key: kmsg.Heartbeat, Handle: gated(gateGroups, handleGroupRequest)},
	{Key: kmsg.LeaveGroup, Handle: gated(gateGroups, handleGroupRequest)},
	{Key: kmsg.OffsetCommit, Handle: gated(gateGroups, handleGroupRequest)},
	{Key: kmsg.OffsetFetch, Handle: gated(gateGroups, handleGroupRequest)},
	{Key: kmsg.OffsetDelete, Handle: gated(gateGroups, handleGroupRequest)},
	{Key: kmsg.DescribeGroups, Handle: gated(gateGroups, handleGroupRequest)},
	{Key: kmsg.ListGroups, Handle: gated(gateGroups, handleGroupRequest)},
	{Key: kmsg.DeleteGroups, Handle: gated(gateGroups, handleGroupRequest)},
	{Key: kmsg.ConsumerGroupHeartbeat, Handle: gated(gateGroups, handleGroupRequest)},
	{Key: kmsg.ConsumerGroupDescribe, Handle: gated(gateGroups, handleGroupRequest)},
}

// groupPart is the ticket of one coordinator's part of a request that
// several coordinators answer (a batch over groups of different
// partitions, ListGroups, an OffsetCommit with unknown topics).
type groupPart struct {
	m    *groupMerge
	slot int
}

// Put is coordinator.Part's: the coordinator's answer to this part.
func (p *groupPart) Put(r kmsg.Response) {
	p.m.parts[p.slot] = r
	p.m.g.Put(p.slot, 0)
}

// groupMerge gathers the parts of one request and replies with finish's
// merge of them; if a part is missing after the gather timeout the
// client gets COORDINATOR_NOT_AVAILABLE and retries.
type groupMerge struct {
	parts []kmsg.Response
	g     *gather.Gather
}

func newGroupMerge(s *Services, req *wire.Request, n int, finish func(parts []kmsg.Response) kmsg.Response) *groupMerge {
	m := &groupMerge{parts: make([]kmsg.Response, n)}
	m.g = gather.New(n, s.Env.GatherTimeout, func(_ []int64, timedOut bool) {
		if timedOut {
			env.Reply(req, group.ErrorResponse(req.Body, kerr.CoordinatorNotAvailable))
			return
		}
		env.Reply(req, finish(m.parts))
	})
	return m
}

// clientHost is "/"+IP of the connection, as Kafka shows it.
func clientHost(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return "/" + h
	}
	return "/" + addr
}

// handleGroupRequest sends a group request to the coordinator actor of
// its group; batches go to each coordinator concerned and are put back
// together in the request's order.
func handleGroupRequest(s *Services, req *wire.Request) {
	pids := s.Groups.PIDs()
	if len(pids) == 0 {
		if lg, ok := req.Body.(*kmsg.ListGroupsRequest); ok {
			// No __consumer_offsets yet: there are no consumer groups
			// (share groups may be), and listing them is no reason to
			// make the topic.
			listGroups(s, req, lg, nil, nil)
			return
		}
		// Usually FindCoordinator came first and waited for the
		// coordinators; a client that skips it waits here likewise.
		s.Groups.WhenStarted(func(ok bool) {
			if !ok {
				env.Reply(req, group.ErrorResponse(req.Body, kerr.CoordinatorNotAvailable))
				return
			}
			handleGroupRequest(s, req)
		})
		return
	}
	n := int32(len(pids))
	client := group.Client{ID: req.Header.ClientID, Host: clientHost(req.ClientAddr)}
	send := func(pid *actor.PID, t group.Ticket, body kmsg.Request) {
		if pid == nil {
			// Cluster mode: another broker leads the group's partition.
			notCoordinator(t, body)
			return
		}
		s.Env.Send(pid, &coordinator.Call{Ticket: t, Req: body, Client: client})
	}
	switch r := req.Body.(type) {
	case *kmsg.ListGroupsRequest:
		// A broker lists the groups it coordinates, as Kafka's do.
		var local []*actor.PID
		for _, pid := range pids {
			if pid != nil {
				local = append(local, pid)
			}
		}
		listGroups(s, req, r, local, send)
	case *kmsg.DescribeGroupsRequest:
		splitGroups(s, req, pids, r.Groups, func(id string) string { return id },
			func(ids []string) kmsg.Request { s := *r; s.Groups = ids; return &s },
			func(parts []kmsg.Response, where [][]int) kmsg.Response {
				out := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
				out.Version = r.Version
				out.Groups = make([]kmsg.DescribeGroupsResponseGroup, len(r.Groups))
				for i, part := range parts {
					for j, g := range part.(*kmsg.DescribeGroupsResponse).Groups {
						out.Groups[where[i][j]] = g
					}
				}
				return out
			}, send)
	case *kmsg.ConsumerGroupDescribeRequest:
		splitConsumerGroupDescribe(s, req, r, pids, send)
	case *kmsg.ConsumerGroupHeartbeatRequest:
		client.Topics = clusterTopics(s)
		client.GroupConfig = groupConfigOf(s, r.Group)
		send(pids[group.PartitionFor(r.Group, n)], req, r)
	case *kmsg.JoinGroupRequest:
		// A classic member of a consumer group (KIP-848 migration) is
		// assigned by the broker, from the cluster's topics.
		client.Topics = clusterTopics(s)
		send(pids[group.PartitionFor(r.Group, n)], req, r)
	case *kmsg.DeleteGroupsRequest:
		deleteGroups(s, req, r, pids, send)
	case *kmsg.OffsetFetchRequest:
		if r.Version < 8 {
			send(pids[group.PartitionFor(r.Group, n)], req, r)
			return
		}
		splitGroups(s, req, pids, r.Groups, func(g kmsg.OffsetFetchRequestGroup) string { return g.Group },
			func(gs []kmsg.OffsetFetchRequestGroup) kmsg.Request { s := *r; s.Groups = gs; return &s },
			func(parts []kmsg.Response, where [][]int) kmsg.Response {
				out := r.ResponseKind().(*kmsg.OffsetFetchResponse)
				out.Version = r.Version
				out.Groups = make([]kmsg.OffsetFetchResponseGroup, len(r.Groups))
				for i, part := range parts {
					for j, g := range part.(*kmsg.OffsetFetchResponse).Groups {
						out.Groups[where[i][j]] = g
					}
				}
				return out
			}, send)
	case *kmsg.OffsetCommitRequest:
		commitKnownTopics(s, req, r, pids[group.PartitionFor(r.Group, n)], send)
	case *kmsg.OffsetDeleteRequest:
		deleteKnownTopics(s, req, r, pids[group.PartitionFor(r.Group, n)], send)
	default:
		ids, _, ok := group.GroupsOf(req.Body)
		if !ok || len(ids) != 1 {
			s.Env.Log.Error("not a group request", "api", wire.APIName(req.Header.APIKey))
			req.Reply(nil)
			return
		}
		send(pids[group.PartitionFor(ids[0], n)], req, req.Body)
	}
}

// splitGroups sends each coordinator the entries of a batched request
// whose groups it holds, and merges the answers: where[i][j] is the
// index in the request of part i's j-th entry.
func splitGroups[E any](s *Services, req *wire.Request, pids []*actor.PID, entries []E, idOf func(E) string,
	sub func([]E) kmsg.Request, merge func(parts []kmsg.Response, where [][]int) kmsg.Response,
	send func(*actor.PID, group.Ticket, kmsg.Request)) {
	n := int32(len(pids))
	slotOf := map[int32]int{}
	var parts [][]E
	var where [][]int
	var targets []*actor.PID
	for i, e := range entries {
		p := group.PartitionFor(idOf(e), n)
		s, ok := slotOf[p]
		if !ok {
			s = len(parts)
			slotOf[p] = s
			parts, where, targets = append(parts, nil), append(where, nil), append(targets, pids[p])
		}
		parts[s] = append(parts[s], e)
		where[s] = append(where[s], i)
	}
	m := newGroupMerge(s, req, len(parts), func(rs []kmsg.Response) kmsg.Response { return merge(rs, where) })
	for s := range parts {
		send(targets[s], &groupPart{m, s}, sub(parts[s]))
	}
}

// commitKnownTopics answers the partitions of unknown topics (or beyond a
// topic's partition count) UNKNOWN_TOPIC_OR_PARTITION here and sends the
// rest to the coordinator: the core knows nothing of topics.
func commitKnownTopics(s *Services, req *wire.Request, r *kmsg.OffsetCommitRequest, pid *actor.PID,
	send func(*actor.PID, group.Ticket, kmsg.Request)) {
	known, unknown := splitByRoute(s.Env.Routes.Load(), r.Topics,
		func(t *kmsg.OffsetCommitRequestTopic) (string, *[]kmsg.OffsetCommitRequestTopicPartition) {
			return t.Topic, &t.Partitions
		},
		func(p *kmsg.OffsetCommitRequestTopicPartition) int32 { return p.Partition })
	if len(unknown) == 0 {
		send(pid, req, r)
		return
	}
	fill := func(resp *kmsg.OffsetCommitResponse) *kmsg.OffsetCommitResponse {
		for _, t := range unknown {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, kerr.UnknownTopicOrPartition.Int16()
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	if len(known) == 0 {
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		resp.Version = r.Version
		env.Reply(req, fill(resp))
		return
	}
	sub := *r
	sub.Topics = known
	m := newGroupMerge(s, req, 1, func(parts []kmsg.Response) kmsg.Response {
		return fill(parts[0].(*kmsg.OffsetCommitResponse))
	})
	send(pid, &groupPart{m, 0}, &sub)
}

// splitByRoute splits request topics into the partitions this broker has
// (known) and the rest (unknown), each side keeping only topics left with
// a partition. fields gives a topic's name and its partitions; partition a
// partition's number. OffsetCommit and OffsetDelete share it: their
// request types differ, their split does not.
func splitByRoute[T, P any](routes *routing.Routes, topics []T, fields func(*T) (string, *[]P), partition func(*P) int32) (known, unknown []T) {
	for _, t := range topics {
		name, parts := fields(&t)
		var k, u []P
		for i := range *parts {
			if _, ok := routes.Partition(name, partition(&(*parts)[i])); ok {
				k = append(k, (*parts)[i])
			} else {
				u = append(u, (*parts)[i])
			}
		}
		if len(k) > 0 {
			kt := t
			_, kp := fields(&kt)
			*kp = k
			known = append(known, kt)
		}
		if len(u) > 0 {
			ut := t
			_, up := fields(&ut)
			*up = u
			unknown = append(unknown, ut)
		}
	}
	return known, unknown
}

// deleteKnownTopics is commitKnownTopics for OffsetDelete: partitions of
// unknown topics are UNKNOWN_TOPIC_OR_PARTITION, as in Kafka.
func deleteKnownTopics(s *Services, req *wire.Request, r *kmsg.OffsetDeleteRequest, pid *actor.PID,
	send func(*actor.PID, group.Ticket, kmsg.Request)) {
	known, unknown := splitByRoute(s.Env.Routes.Load(), r.Topics,
		func(t *kmsg.OffsetDeleteRequestTopic) (string, *[]kmsg.OffsetDeleteRequestTopicPartition) {
			return t.Topic, &t.Partitions
		},
		func(p *kmsg.OffsetDeleteRequestTopicPartition) int32 { return p.Partition })
	if len(unknown) == 0 {
		send(pid, req, r)
		return
	}
	fill := func(resp *kmsg.OffsetDeleteResponse) *kmsg.OffsetDeleteResponse {
		for _, t := range unknown {
			rt := kmsg.NewOffsetDeleteResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetDeleteResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, kerr.UnknownTopicOrPartition.Int16()
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	sub := *r
	sub.Topics = known
	// Even with no known topic the group is asked: an unknown group is
	// GROUP_ID_NOT_FOUND whatever the topics.
	m := newGroupMerge(s, req, 1, func(parts []kmsg.Response) kmsg.Response {
		return fill(parts[0].(*kmsg.OffsetDeleteResponse))
	})
	send(pid, &groupPart{m, 0}, &sub)
}

// listGroups answers ListGroups from the group coordinators running here
// (local) and the share coordinator (actors/sharegroup), whose share
// groups are listed with type "share".
func listGroups(s *Services, req *wire.Request, r *kmsg.ListGroupsRequest, local []*actor.PID, send func(*actor.PID, group.Ticket, kmsg.Request)) {
	m := newGroupMerge(s, req, len(local)+1, func(parts []kmsg.Response) kmsg.Response { return group.MergeResponses(parts...) })
	for i, pid := range local {
		send(pid, &groupPart{m, i}, r)
	}
	shares := &groupPart{m, len(local)}
	s.Shares.ListGroups(&sharegroup.ListGroups{Req: r, Reply: func(resp *kmsg.ListGroupsResponse) { shares.Put(resp) }})
}

// deleteGroups deletes share groups in the share coordinator
// (actors/sharegroup) and the other groups in their group coordinators,
// answering each id in the request's order.
func deleteGroups(s *Services, req *wire.Request, r *kmsg.DeleteGroupsRequest, pids []*actor.PID, send func(*actor.PID, group.Ticket, kmsg.Request)) {
	s.Shares.DeleteGroups(&sharegroup.DeleteGroups{IDs: r.Groups, Reply: func(shared map[string]kerr.Code) {
		out := r.ResponseKind().(*kmsg.DeleteGroupsResponse)
		out.Version = r.Version
		out.Groups = make([]kmsg.DeleteGroupsResponseGroup, len(r.Groups))
		var rest []string
		var restAt []int
		for i, id := range r.Groups {
			out.Groups[i] = kmsg.NewDeleteGroupsResponseGroup()
			out.Groups[i].Group = id
			if code, ok := shared[id]; ok {
				out.Groups[i].ErrorCode = code.Int16()
				continue
			}
			rest, restAt = append(rest, id), append(restAt, i)
		}
		if len(rest) == 0 {
			env.Reply(req, out)
			return
		}
		splitGroups(s, req, pids, rest, func(id string) string { return id },
			func(ids []string) kmsg.Request { s := *r; s.Groups = ids; return &s },
			func(parts []kmsg.Response, where [][]int) kmsg.Response {
				for i, part := range parts {
					for j, g := range part.(*kmsg.DeleteGroupsResponse).Groups {
						out.Groups[restAt[where[i][j]]] = g
					}
				}
				return out
			}, send)
	}})
}

// notCoordinator answers a group request (or a batch's part) whose
// coordinator is on another broker.
func notCoordinator(t group.Ticket, body kmsg.Request) {
	resp := group.ErrorResponse(body, kerr.NotCoordinator)
	switch to := t.(type) {
	case *wire.Request:
		env.Reply(to, resp)
	case coordinator.Part:
		to.Put(resp)
	}
}
