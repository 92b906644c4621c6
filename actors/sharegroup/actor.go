package sharegroup

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/actors/shards"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Config is the share coordinator's settings, from the broker's
// group.share.* configs.
type Config struct {
	Limits            Limits
	SessionTimeout    time.Duration
	HeartbeatInterval time.Duration
	// Tick is how often members' sessions and parked fetches are looked
	// at.
	Tick time.Duration
	// Cluster is set in cluster mode (cluster.go): share partitions on
	// the data partitions' leaders, membership on the group coordinator,
	// state in a replicated state topic.
	Cluster *ClusterLink
}

// Call is one share-group request for the actor.
type Call struct {
	Req              *wire.Request
	ClientID, Client string
	// reread: cluster mode, the call made its group's share partitions
	// be read again once already (cluster_state.go's prepare).
	reread bool
}

type (
	tick      struct{}
	chunkRead struct {
		op    *fetchOp
		slot  int
		chunk shards.Chunk
	}
	retryFetch struct {
		op    *fetchOp
		round int32
	}
	// settingsKnown brings a heartbeat back with its group's configs
	// (actor_settings.go).
	settingsKnown struct {
		call     *Call
		settings groupSettings
	}
	// startFound is where a by_duration share partition starts.
	startFound struct {
		k      partKey
		offset int64
		code   kerr.Code
	}
	stateLoad  struct{ chunk shards.Chunk }
	stateReady struct{ err error }
)

// partKey names one share partition: a group's view of a topic partition.
type partKey struct {
	group string
	tp    TopicPartition
}

// coordinatorActor is the shell around the share cores: every group's
// membership, every share partition and every share session of this
// broker live on its goroutine.
type coordinatorActor struct {
	env      *env.Env
	cfg      Config
	self     *actor.PID
	meta     *actor.PID // the metadata actor
	root     *actor.RootContext
	groups   map[string]*Group
	parts    map[partKey]*Partition
	sessions Sessions
	// settings are each group's configs, read at its heartbeats;
	// starting the share partitions whose start is being looked up by
	// time (actor_settings.go).
	settings map[string]groupSettings
	starting map[partKey]bool
	// parked is each group's ShareFetches waiting for records
	// (actor_wait.go).
	parked map[string]map[*fetchOp]bool
	// sizes is each share partition's bytes per record, for the size
	// of its reads (read_budget.go).
	sizes readSizes

	// Loading the durable state: calls wait in queue until it is in.
	loading  bool
	ready    bool
	queue    []*Call
	restored map[partKey]Snapshot

	cl *clusterState // cluster mode only
}

func newActor(e *env.Env, cfg Config) actor.Actor {
	a := &coordinatorActor{env: e, cfg: cfg, groups: map[string]*Group{}, parts: map[partKey]*Partition{}, sessions: Sessions{}, settings: map[string]groupSettings{}, restored: map[partKey]Snapshot{}}
	if cfg.Cluster != nil {
		// Each share partition's state is loaded as it is first served
		// (cluster_state.go), not the whole topic up front.
		a.cl, a.ready = newClusterState(cfg.Cluster), true
	}
	return a
}

func (a *coordinatorActor) now() time.Time { return a.env.Now() }

func (a *coordinatorActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.self, a.root = ctx.Self(), ctx.ActorSystem().Root
		a.armTick()
	case *Call:
		if !a.ready {
			a.queue = append(a.queue, m)
			a.startLoad()
			return
		}
		a.call(m)
	case *stateLoad:
		a.loadStep(m.chunk)
	case *stateReady:
		a.loaded(m.err)
	case *shareLoaded:
		a.onShareLoaded(m)
	case *stateLoadDone:
		a.onStateLoadDone(m)
	case *stateWritten:
		a.onStateWritten(m)
	case *offsetsRead:
		a.onOffsetsRead(m)
	case *topicMade:
		a.onTopicMade(m.err)
	case *DeleteGroups:
		a.deleteGroups(m)
	case *ListGroups:
		m.Reply(a.listGroups(m.Req))
	case *chunkRead:
		a.onChunk(m)
	case *settingsKnown:
		a.applySettings(m)
	case *startFound:
		a.started(m)
	case *retryFetch:
		a.retry(m.op, m.round)
	case *tick:
		a.onTick()
		a.armTick()
	}
}

func (a *coordinatorActor) armTick() {
	self, root := a.self, a.root
	time.AfterFunc(a.cfg.Tick, func() { root.Send(self, &tick{}) })
}

func (a *coordinatorActor) call(c *Call) {
	if a.routeCluster(c) {
		return
	}
	switch r := c.Req.Body.(type) {
	case *kmsg.ShareGroupHeartbeatRequest:
		a.heartbeatWithSettings(c, r)
	case *kmsg.ShareGroupDescribeRequest:
		env.Reply(c.Req, a.describe(r))
	case *kmsg.ShareFetchRequest:
		a.shareFetch(c, r)
	case *kmsg.ShareAcknowledgeRequest:
		a.shareAcknowledge(c, r)
	case *kmsg.DescribeShareGroupOffsetsRequest:
		env.Reply(c.Req, a.describeOffsets(r))
	case *kmsg.AlterShareGroupOffsetsRequest:
		a.alterOffsets(c, r)
	case *kmsg.DeleteShareGroupOffsetsRequest:
		a.deleteOffsets(c, r)
	default:
		a.env.Log.Error("sharegroup: a request it does not serve", "api", wire.APIName(c.Req.Header.APIKey))
		c.Req.Reply(nil)
	}
}

// onTick expires members not heard from (their locks are released and
// their sessions closed) and lets lock expiry happen even for partitions
// nobody fetches, so describe and restarts see it.
func (a *coordinatorActor) onTick() {
	if !a.ready {
		return
	}
	now := a.now()
	if a.cl != nil {
		a.onClusterTick(now)
	}
	for id, g := range a.groups {
		for _, m := range g.Expire(now, a.settingsOf(id).sessionTimeout) {
			a.env.Log.Info("share group member expired", "group", id, "member", m)
			a.releaseMember(id, m)
		}
	}
	for _, p := range a.parts {
		p.Expire(now)
	}
}

// releaseMember ends a member's session and gives up its locks.
func (a *coordinatorActor) releaseMember(group, member string) {
	a.sessions.Drop(group, member)
	for k, p := range a.parts {
		if k.group == group {
			p.ReleaseMember(member)
		}
	}
	a.wakeGroup(group)
}

// topics is the routing table as assignment needs it.
func (a *coordinatorActor) topics() map[string]TopicInfo {
	if v := a.view(); v != nil {
		return clusterTopics(v)
	}
	r := a.env.Routes.Load()
	out := make(map[string]TopicInfo, len(r.Topics))
	for name, t := range r.Topics {
		out[name] = TopicInfo{ID: t.ID, Partitions: int32(len(t.Partitions))}
	}
	return out
}

// resolve finds a topic id's name and the partition's view.
func (a *coordinatorActor) resolve(tp TopicPartition) (string, *partition.View, kerr.Code) {
	for name, t := range a.env.Routes.Load().Topics {
		if t.ID == tp.Topic {
			if tp.Partition < 0 || int(tp.Partition) >= len(t.Partitions) {
				return "", nil, kerr.UnknownTopicOrPartition
			}
			if t.Partitions[tp.Partition] == nil {
				return "", nil, kerr.NotLeaderOrFollower
			}
			return name, t.View(tp.Partition), kerr.None
		}
	}
	return "", nil, kerr.UnknownTopicID
}

// sharePartition returns the group's share partition of tp, starting it
// (from its durable snapshot, or share.auto.offset.reset) on first use,
// and moves its start past records the log no longer has.
func (a *coordinatorActor) sharePartition(group string, tp TopicPartition, v *partition.View) (*Partition, bool) {
	hw, logStart, ok := v.Bounds()
	if !ok {
		return nil, false
	}
	k := partKey{group, tp}
	p := a.parts[k]
	if p == nil {
		if s, ok := a.restored[k]; ok {
			p = RestorePartition(s, a.settingsOf(group).limits)
			delete(a.restored, k)
		} else {
			reset := a.settingsOf(group).reset
			start := hw // latest, the default
			if reset == "earliest" {
				start = logStart
			}
			if d, ok := byDuration(reset); ok {
				// Nothing to read until the lookup places it.
				a.startByTime(k, a.now().Add(-d).UnixMilli())
				return nil, true
			}
			p = NewPartition(start, a.settingsOf(group).limits)
		}
		a.parts[k] = p
	}
	p.Reset(logStart)
	return p, true
}
