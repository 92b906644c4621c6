package actors

import (
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/gather"
	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// The group APIs all route through handleGroupRequest; FindCoordinator is
// answered on the loop. Registered here rather than in router.go's
// literal so the table's other rows stay untouched.
func init() {
	for _, k := range []kmsg.Key{kmsg.JoinGroup, kmsg.SyncGroup, kmsg.Heartbeat, kmsg.LeaveGroup,
		kmsg.OffsetCommit, kmsg.OffsetFetch, kmsg.OffsetDelete, kmsg.DescribeGroups, kmsg.ListGroups, kmsg.DeleteGroups} {
		routesByKey[int16(k)] = route{direct: handleGroupRequest}
	}
	routesByKey[int16(kmsg.FindCoordinator)] = route{direct: handleFindCoordinator}
}

var errOffsetsPartitionMissing = errors.New("actors: the __consumer_offsets partition has no actor")

// groupCoordinators is the broker's group coordinator actors, one per
// __consumer_offsets partition, indexed by partition. Published once
// (startGroups) and read lock-free by the router.
type groupCoordinators struct {
	pids     atomic.Pointer[[]*actor.PID]
	creating atomic.Bool // __consumer_offsets exists or is being made

	mu      sync.Mutex
	waiters []func(ok bool) // run once the coordinators are up (or failed to start)
}

// whenGroupsStarted runs fn once the coordinators are running (ok) or
// failed to start; at once if they already run. FindCoordinator waits
// this way for the first creation of __consumer_offsets instead of
// making clients back off and retry.
func (b *Broker) whenGroupsStarted(fn func(ok bool)) {
	b.groups.mu.Lock()
	if p := b.groups.pids.Load(); p != nil {
		b.groups.mu.Unlock()
		fn(true)
		return
	}
	b.groups.waiters = append(b.groups.waiters, fn)
	b.groups.mu.Unlock()
	b.ensureGroups()
}

// groupsStarted publishes the coordinators (nil: they failed to start)
// and wakes the waiters.
func (b *Broker) groupsStarted(pids []*actor.PID) {
	b.groups.mu.Lock()
	if pids != nil {
		b.groups.pids.Store(&pids)
	}
	w := b.groups.waiters
	b.groups.waiters = nil
	b.groups.mu.Unlock()
	for _, fn := range w {
		fn(pids != nil)
	}
}

// groupConfig builds the core's configuration from the broker's.
func groupConfig(b *Broker) (group.Config, time.Duration) {
	ms := func(name string) time.Duration {
		n, _ := strconv.ParseInt(b.cfg.Value(name), 10, 64)
		return time.Duration(n) * time.Millisecond
	}
	num := func(name string) int {
		n, _ := strconv.Atoi(b.cfg.Value(name))
		return n
	}
	cfg := group.Config{
		InitialRebalanceDelay:  ms("group.initial.rebalance.delay.ms"),
		MinSessionTimeout:      ms("group.min.session.timeout.ms"),
		MaxSessionTimeout:      ms("group.max.session.timeout.ms"),
		MaxSize:                num("group.max.size"),
		OffsetMetadataMaxBytes: num("offset.metadata.max.bytes"),
		OffsetsRetention:       time.Duration(num("offsets.retention.minutes")) * time.Minute,
	}
	if cfg.InitialRebalanceDelay == 0 {
		cfg.InitialRebalanceDelay = -1 // the core reads 0 as "Kafka's default"
	}
	if cfg.MaxSize >= 1<<31-1 {
		cfg.MaxSize = 0 // unlimited
	}
	return cfg, ms("offsets.retention.check.interval.ms")
}

// startGroups starts the group coordinators if __consumer_offsets exists
// (a restart: each coordinator loads its partition before serving). As in
// Kafka, a broker that never had a group creates the topic on the first
// FindCoordinator or group request (ensureGroups); until then group
// requests get COORDINATOR_NOT_AVAILABLE and clients retry.
func (b *Broker) startGroups() {
	if t, ok := b.Routes().Topics[OffsetsTopic]; ok {
		b.groups.creating.Store(true)
		b.spawnCoordinators(int32(len(t.Partitions)), false)
	}
}

// ensureGroups creates __consumer_offsets and starts the coordinators,
// once; it returns at once (the work finishes in the metadata actor).
func (b *Broker) ensureGroups() {
	if !b.groups.creating.CompareAndSwap(false, true) {
		return
	}
	b.ensureOffsetsTopic(func(n int32, created bool, err error) {
		if err != nil {
			b.log.Error("consumer groups are unavailable (COORDINATOR_NOT_AVAILABLE)", "err", err)
			b.groups.creating.Store(false) // the next request tries again
			b.groupsStarted(nil)
			return
		}
		b.spawnCoordinators(n, created)
	})
}

// spawnCoordinators starts one coordinator actor per __consumer_offsets
// partition and publishes them to the router. Coordinators of a topic
// just created skip their first load (the partitions are empty), so the
// first group requests are served at once rather than answered
// COORDINATOR_LOAD_IN_PROGRESS; a restarted actor always loads.
func (b *Broker) spawnCoordinators(n int32, created bool) {
	cfg, every := groupConfig(b)
	pids := make([]*actor.PID, n)
	for p := range n {
		fresh := new(atomic.Bool)
		fresh.Store(created)
		props := actor.PropsFromProducer(func() actor.Actor {
			return &groupCoordinatorActor{b: b, partition: p, cfg: cfg, every: every, fresh: fresh,
				log: b.log.With("component", "group-coordinator")}
		}, actor.WithDispatcher(b.dispatch))
		pid, err := b.system.Root.SpawnNamed(props, "group-coordinator-"+strconv.Itoa(int(p)))
		if err != nil {
			b.log.Error("cannot start a group coordinator; its groups are unavailable", "partition", p, "err", err)
			b.groupsStarted(nil)
			return
		}
		pids[p] = pid
	}
	b.groupsStarted(pids)
}

// stopGroups stops the coordinator actors before the partitions close,
// so none of them writes to a closing log.
func (b *Broker) stopGroups() {
	p := b.groups.pids.Load()
	if p == nil {
		return
	}
	for _, pid := range *p {
		_ = b.system.Root.StopFuture(pid).Wait()
	}
}

// groupCoordinatorOf returns the actor of the partition that holds id.
func (b *Broker) groupCoordinatorOf(id string) (*actor.PID, bool) {
	p := b.groups.pids.Load()
	if p == nil || len(*p) == 0 {
		return nil, false
	}
	return (*p)[group.PartitionFor(id, int32(len(*p)))], true
}

// groupPart is the ticket of one coordinator's part of a request that
// several coordinators answer (a batch over groups of different
// partitions, ListGroups, an OffsetCommit with unknown topics).
type groupPart struct {
	m    *groupMerge
	slot int
}

func (p *groupPart) put(r kmsg.Response) {
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

func newGroupMerge(b *Broker, req *wire.Request, n int, finish func(parts []kmsg.Response) kmsg.Response) *groupMerge {
	m := &groupMerge{parts: make([]kmsg.Response, n)}
	m.g = gather.New(n, b.opts.GatherTimeout, func(_ []int64, timedOut bool) {
		if timedOut {
			reply(req, group.ErrorResponse(req.Body, kerr.CoordinatorNotAvailable))
			return
		}
		reply(req, finish(m.parts))
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
func handleGroupRequest(b *Broker, req *wire.Request) {
	p := b.groups.pids.Load()
	if p == nil || len(*p) == 0 {
		if lg, ok := req.Body.(*kmsg.ListGroupsRequest); ok {
			// No __consumer_offsets yet: there are no groups, and
			// listing them is no reason to make the topic.
			resp := lg.ResponseKind().(*kmsg.ListGroupsResponse)
			resp.Version = lg.Version
			reply(req, resp)
			return
		}
		// Usually FindCoordinator came first and waited for the
		// coordinators; a client that skips it waits here likewise.
		b.whenGroupsStarted(func(ok bool) {
			if !ok {
				reply(req, group.ErrorResponse(req.Body, kerr.CoordinatorNotAvailable))
				return
			}
			handleGroupRequest(b, req)
		})
		return
	}
	pids := *p
	n := int32(len(pids))
	client := group.Client{ID: req.Header.ClientID, Host: clientHost(req.ClientAddr)}
	send := func(pid *actor.PID, t group.Ticket, body kmsg.Request) {
		b.system.Root.Send(pid, &groupCall{ticket: t, req: body, client: client})
	}
	switch r := req.Body.(type) {
	case *kmsg.ListGroupsRequest:
		m := newGroupMerge(b, req, len(pids), func(parts []kmsg.Response) kmsg.Response { return group.MergeResponses(parts...) })
		for i, pid := range pids {
			send(pid, &groupPart{m, i}, r)
		}
	case *kmsg.DescribeGroupsRequest:
		splitGroups(b, req, pids, r.Groups, func(id string) string { return id },
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
	case *kmsg.DeleteGroupsRequest:
		splitGroups(b, req, pids, r.Groups, func(id string) string { return id },
			func(ids []string) kmsg.Request { s := *r; s.Groups = ids; return &s },
			func(parts []kmsg.Response, where [][]int) kmsg.Response {
				out := r.ResponseKind().(*kmsg.DeleteGroupsResponse)
				out.Version = r.Version
				out.Groups = make([]kmsg.DeleteGroupsResponseGroup, len(r.Groups))
				for i, part := range parts {
					for j, g := range part.(*kmsg.DeleteGroupsResponse).Groups {
						out.Groups[where[i][j]] = g
					}
				}
				return out
			}, send)
	case *kmsg.OffsetFetchRequest:
		if r.Version < 8 {
			send(pids[group.PartitionFor(r.Group, n)], req, r)
			return
		}
		splitGroups(b, req, pids, r.Groups, func(g kmsg.OffsetFetchRequestGroup) string { return g.Group },
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
		commitKnownTopics(b, req, r, pids[group.PartitionFor(r.Group, n)], send)
	case *kmsg.OffsetDeleteRequest:
		deleteKnownTopics(b, req, r, pids[group.PartitionFor(r.Group, n)], send)
	default:
		ids, _, ok := group.GroupsOf(req.Body)
		if !ok || len(ids) != 1 {
			b.log.Error("not a group request", "api", wire.APIName(req.Header.APIKey))
			req.Reply(nil)
			return
		}
		send(pids[group.PartitionFor(ids[0], n)], req, req.Body)
	}
}

// splitGroups sends each coordinator the entries of a batched request
// whose groups it holds, and merges the answers: where[i][j] is the
// index in the request of part i's j-th entry.
func splitGroups[E any](b *Broker, req *wire.Request, pids []*actor.PID, entries []E, idOf func(E) string,
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
	m := newGroupMerge(b, req, len(parts), func(rs []kmsg.Response) kmsg.Response { return merge(rs, where) })
	for s := range parts {
		send(targets[s], &groupPart{m, s}, sub(parts[s]))
	}
}

// commitKnownTopics answers the partitions of unknown topics (or beyond a
// topic's partition count) UNKNOWN_TOPIC_OR_PARTITION here and sends the
// rest to the coordinator: the core knows nothing of topics.
func commitKnownTopics(b *Broker, req *wire.Request, r *kmsg.OffsetCommitRequest, pid *actor.PID,
	send func(*actor.PID, group.Ticket, kmsg.Request)) {
	known, unknown := splitByRoute(b.Routes(), r.Topics,
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
		reply(req, fill(resp))
		return
	}
	s := *r
	s.Topics = known
	m := newGroupMerge(b, req, 1, func(parts []kmsg.Response) kmsg.Response {
		return fill(parts[0].(*kmsg.OffsetCommitResponse))
	})
	send(pid, &groupPart{m, 0}, &s)
}

// splitByRoute splits request topics into the partitions this broker has
// (known) and the rest (unknown), each side keeping only topics left with
// a partition. fields gives a topic's name and its partitions; partition a
// partition's number. OffsetCommit and OffsetDelete share it: their
// request types differ, their split does not.
func splitByRoute[T, P any](routes *Routes, topics []T, fields func(*T) (string, *[]P), partition func(*P) int32) (known, unknown []T) {
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
func deleteKnownTopics(b *Broker, req *wire.Request, r *kmsg.OffsetDeleteRequest, pid *actor.PID,
	send func(*actor.PID, group.Ticket, kmsg.Request)) {
	known, unknown := splitByRoute(b.Routes(), r.Topics,
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
	s := *r
	s.Topics = known
	// Even with no known topic the group is asked: an unknown group is
	// GROUP_ID_NOT_FOUND whatever the topics.
	m := newGroupMerge(b, req, 1, func(parts []kmsg.Response) kmsg.Response {
		return fill(parts[0].(*kmsg.OffsetDeleteResponse))
	})
	send(pid, &groupPart{m, 0}, &s)
}
