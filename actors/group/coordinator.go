package group

import (
	"slices"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Coordinator is the groups of one __consumer_offsets partition (or of a
// whole broker): it creates groups on demand, routes each request to its
// group, splits batched requests (DescribeGroups, DeleteGroups,
// OffsetFetch v8+) and merges the answers, answers ListGroups, and
// rebuilds everything from the partition's records. A shell that prefers
// one actor per group uses Group directly and does this routing itself;
// this type is the reference for how.
//
// Threading: owned by one actor; not safe for concurrent use.
type Coordinator struct {
	cfg     Config
	groups  map[string]*Group
	loading bool

	nextBatch uint64
	batches   map[uint64]*batch
}

// NewCoordinator returns a coordinator with no groups, ready to serve.
// Call BeginLoad first if there are records to replay.
func NewCoordinator(cfg Config) *Coordinator {
	return &Coordinator{cfg: cfg.withDefaults(), groups: map[string]*Group{}, batches: map[uint64]*batch{}}
}

// BeginLoad starts loading: until EndLoad, every request is answered with
// COORDINATOR_LOAD_IN_PROGRESS (a Heartbeat with no error) and Replay
// feeds the partition's records in.
func (c *Coordinator) BeginLoad() { c.loading = true }

// Loading reports whether a load is under way.
func (c *Coordinator) Loading() bool { return c.loading }

// Replay applies one __consumer_offsets record (value nil: tombstone).
// A record that does not decode returns an error; the caller logs it and
// goes on (Kafka fails the load; a broker that refuses to start over one
// bad record helps nobody).
func (c *Coordinator) Replay(key, value []byte) error {
	k, g, err := c.replayed(key)
	if g == nil {
		return err
	}
	return g.Replay(k, value)
}

// replayed decodes a replayed record's key and finds (or makes) its
// group; a nil group means the record is skipped (with err, or none for
// records of other kinds).
func (c *Coordinator) replayed(key []byte) (Key, *Group, error) {
	k, err := DecodeKey(key)
	if err != nil || k.Kind == KeyOther {
		return k, nil, err
	}
	return k, c.group(k.Group), nil
}

// ReplayTxn is Replay for a record of producer pid's transaction (a
// transactional batch: TxnOffsetCommit's offsets), pending until
// ReplayMarker.
func (c *Coordinator) ReplayTxn(pid int64, key, value []byte) error {
	k, g, err := c.replayed(key)
	if g == nil {
		return err
	}
	return g.ReplayTxn(pid, k, value)
}

// ReplayMarker applies a transaction marker read back from the log:
// producer pid's pending offsets are committed or dropped.
func (c *Coordinator) ReplayMarker(pid int64, commit bool) {
	for _, g := range c.groups {
		g.CompleteTxn(pid, commit)
	}
}

// CompleteTxn applies a transaction marker the partition just took: the
// offsets producer pid committed in its transaction become visible
// (commit) or are dropped, in every group.
func (c *Coordinator) CompleteTxn(pid int64, commit bool) {
	for _, id := range c.sortedIDs() {
		g := c.groups[id]
		g.CompleteTxn(pid, commit)
		c.dropIfVacant(g)
	}
}

// EndLoad ends loading: groups start their members' session timers and
// requests are served again.
func (c *Coordinator) EndLoad(now time.Time) Effects {
	c.loading = false
	var fx Effects
	for _, id := range c.sortedIDs() {
		g := c.groups[id]
		fx.merge(g.Loaded(now))
		c.dropIfVacant(g)
	}
	return fx
}

// Group returns the group with this id, or nil.
func (c *Coordinator) Group(id string) *Group { return c.groups[id] }

// GroupIDs lists the groups held, sorted.
func (c *Coordinator) GroupIDs() []string { return c.sortedIDs() }

func (c *Coordinator) sortedIDs() []string {
	ids := make([]string, 0, len(c.groups))
	for id := range c.groups {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// group returns the group, creating its state if needed (it stays only if
// the call brings it into existence; see dropIfVacant).
func (c *Coordinator) group(id string) *Group {
	g := c.groups[id]
	if g == nil {
		g = NewGroup(id, c.cfg)
		c.groups[id] = g
	}
	return g
}

func (c *Coordinator) dropIfVacant(g *Group) {
	if g.Vacant() {
		delete(c.groups, g.id)
	}
}

// Handle serves one group request: JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup, OffsetCommit, OffsetFetch, OffsetDelete, DescribeGroups,
// ListGroups or DeleteGroups. client is needed by JoinGroup only. Any
// other request is answered with nothing (no Reply): it is not for this
// coordinator.
func (c *Coordinator) Handle(t Ticket, req kmsg.Request, client Client, now time.Time) Effects {
	if c.loading {
		if r := LoadInProgressResponse(req); r != nil {
			return Effects{Replies: []Reply{{To: t, Response: r}}}
		}
		return Effects{}
	}
	var fx Effects
	var touched *Group
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		touched = c.group(r.Group)
		fx = touched.JoinGroup(t, r, client, now)
	case *kmsg.SyncGroupRequest:
		touched = c.group(r.Group)
		fx = touched.SyncGroup(t, r, now)
	case *kmsg.HeartbeatRequest:
		touched = c.group(r.Group)
		fx = touched.Heartbeat(t, r, now)
	case *kmsg.LeaveGroupRequest:
		touched = c.group(r.Group)
		fx = touched.LeaveGroup(t, r, now)
	case *kmsg.OffsetCommitRequest:
		touched = c.group(r.Group)
		fx = touched.OffsetCommit(t, r, now)
	case *kmsg.OffsetDeleteRequest:
		touched = c.group(r.Group)
		fx = touched.OffsetDelete(t, r, now)
	case *kmsg.TxnOffsetCommitRequest:
		touched = c.group(r.Group)
		fx = touched.TxnOffsetCommit(t, r, now)
	case *kmsg.OffsetFetchRequest:
		fx.Replies = append(fx.Replies, Reply{To: t, Response: c.offsetFetch(r)})
	case *kmsg.DescribeGroupsRequest:
		resp := kmsg.NewPtrDescribeGroupsResponse()
		resp.Version = r.Version
		for _, id := range r.Groups {
			resp.Groups = append(resp.Groups, c.lookup(id).Describe(r.Version))
		}
		fx.Replies = append(fx.Replies, Reply{To: t, Response: resp})
	case *kmsg.ListGroupsRequest:
		resp := kmsg.NewPtrListGroupsResponse()
		resp.Version = r.Version
		for _, id := range c.sortedIDs() {
			if e, ok := c.groups[id].ListEntry(r.StatesFilter, r.TypesFilter); ok {
				resp.Groups = append(resp.Groups, e)
			}
		}
		fx.Replies = append(fx.Replies, Reply{To: t, Response: resp})
	case *kmsg.DeleteGroupsRequest:
		return c.deleteGroups(t, r, now)
	case *kmsg.ConsumerGroupHeartbeatRequest:
		touched = c.group(r.Group)
		topics := client.Topics
		if topics == nil {
			topics = TopicMap{}
		}
		fx = touched.ConsumerGroupHeartbeat(t, r, client, topics, now)
	case *kmsg.ConsumerGroupDescribeRequest:
		resp := &kmsg.ConsumerGroupDescribeResponse{Version: r.Version}
		for _, id := range r.Groups {
			resp.Groups = append(resp.Groups, c.lookup(id).ConsumerGroupDescribe(r.Version))
		}
		fx.Replies = append(fx.Replies, Reply{To: t, Response: resp})
	}
	if touched != nil {
		c.dropIfVacant(touched)
	}
	return c.collect(fx)
}

// lookup returns the group, or the state of a group that does not
// exist (not kept), for read-only requests.
func (c *Coordinator) lookup(id string) *Group {
	if g := c.groups[id]; g != nil {
		return g
	}
	return NewGroup(id, c.cfg)
}

func (c *Coordinator) offsetFetch(r *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	lookup := c.lookup
	if r.Version < 8 {
		return lookup(r.Group).OffsetFetch(r)
	}
	resp := kmsg.NewPtrOffsetFetchResponse()
	resp.Version = r.Version
	for _, rg := range r.Groups {
		resp.Groups = append(resp.Groups, lookup(rg.Group).offsetFetchGroup(rg, r.RequireStable))
	}
	return resp
}

// batch gathers the per-group answers of one DeleteGroups request.
type batch struct {
	ticket  Ticket
	resp    *kmsg.DeleteGroupsResponse
	missing int
}

// part is the ticket a group answers one entry of a batch under.
type part struct {
	batch uint64
	index int
}

func (c *Coordinator) deleteGroups(t Ticket, r *kmsg.DeleteGroupsRequest, now time.Time) Effects {
	c.nextBatch++
	b := &batch{ticket: t, resp: kmsg.NewPtrDeleteGroupsResponse(), missing: len(r.Groups)}
	b.resp.Version = r.Version
	b.resp.Groups = make([]kmsg.DeleteGroupsResponseGroup, len(r.Groups))
	c.batches[c.nextBatch] = b
	var fx Effects
	for i, id := range r.Groups {
		g := c.group(id)
		fx.merge(g.DeleteGroups(part{c.nextBatch, i}, r.Version, now))
		c.dropIfVacant(g)
	}
	if len(r.Groups) == 0 {
		delete(c.batches, c.nextBatch)
		fx.Replies = append(fx.Replies, Reply{To: t, Response: b.resp})
	}
	return c.collect(fx)
}

// collect turns the answers groups gave to batch parts into the batch's
// reply once every part is in.
func (c *Coordinator) collect(fx Effects) Effects {
	out := fx.Replies[:0:0]
	for _, r := range fx.Replies {
		p, ok := r.To.(part)
		if !ok {
			out = append(out, r)
			continue
		}
		b := c.batches[p.batch]
		if b == nil {
			continue
		}
		if dr, ok := r.Response.(*kmsg.DeleteGroupsResponse); ok && len(dr.Groups) == 1 {
			b.resp.Groups[p.index] = dr.Groups[0]
		}
		if b.missing--; b.missing == 0 {
			delete(c.batches, p.batch)
			out = append(out, Reply{To: b.ticket, Response: b.resp})
		}
	}
	fx.Replies = out
	return fx
}

// OnTimer routes a timer to its group.
func (c *Coordinator) OnTimer(k TimerKey, now time.Time) Effects {
	g := c.groups[k.Group]
	if g == nil {
		return Effects{}
	}
	fx := g.OnTimer(k, now)
	c.dropIfVacant(g)
	return c.collect(fx)
}

// OnAppended routes an append completion to its group.
func (c *Coordinator) OnAppended(a Append, code kerr.Code, now time.Time) Effects {
	g := c.groups[a.Group]
	if g == nil {
		return Effects{}
	}
	fx := g.OnAppended(a.Token, code, now)
	c.dropIfVacant(g)
	return c.collect(fx)
}

// ExpireOffsets runs offset expiry over every group (call it every
// offsets.retention.check.interval.ms).
func (c *Coordinator) ExpireOffsets(now time.Time) Effects {
	var fx Effects
	for _, id := range c.sortedIDs() {
		g := c.groups[id]
		fx.merge(g.ExpireOffsets(now))
		c.dropIfVacant(g)
	}
	return c.collect(fx)
}
