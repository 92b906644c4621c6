package coordinator

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/samsa-io/samsa/actors/catalog"
	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/actors/shards"
)

// OffsetsTopic is the internal topic that holds committed offsets and group
// metadata, in Kafka's record formats (actors/group/records.go).
const OffsetsTopic = "__consumer_offsets"

// Coordinators is the broker's group coordinator actors, one per
// __consumer_offsets partition, indexed by partition. Published once and
// read lock-free by the router.
type Coordinators struct {
	env  *env.Env
	meta *actor.PID // the metadata actor, which creates __consumer_offsets
	t    shards.Table
}

// New returns the coordinators of a broker, none running yet; meta is the
// metadata actor.
func New(e *env.Env, meta *actor.PID) *Coordinators {
	c := &Coordinators{env: e, meta: meta}
	c.t = shards.Table{Spawn: c.spawnOne, Stop: e.System.Root.Stop, Log: e.Log, What: "group coordinator"}
	return c
}

// PIDs returns the running coordinators by partition, or nil before they
// start.
func (c *Coordinators) PIDs() []*actor.PID { return c.t.PIDs() }

// Of returns the actor of the partition that holds group id (nil in
// cluster mode when another broker leads that partition).
func (c *Coordinators) Of(id string) (*actor.PID, bool) {
	p := c.PIDs()
	if len(p) == 0 {
		return nil, false
	}
	return p[group.PartitionFor(id, int32(len(p)))], true
}

// WhenStarted runs fn once the coordinators are running (ok) or failed to
// start; at once if they already run. FindCoordinator waits this way for
// the first creation of __consumer_offsets instead of making clients back
// off and retry.
func (c *Coordinators) WhenStarted(fn func(ok bool)) { c.t.WhenStarted(fn, c.ensure) }

// Adopt publishes coordinators spawned elsewhere (a test's), as if they
// had started here.
func (c *Coordinators) Adopt(pids []*actor.PID) {
	c.t.Creating.Store(true)
	c.t.Started(pids)
}

// groupConfig builds the core's configuration from the broker's.
func groupConfig(b *config.Broker) (group.Config, time.Duration) {
	ms := func(name string) time.Duration {
		n, _ := strconv.ParseInt(b.Value(name), 10, 64)
		return time.Duration(n) * time.Millisecond
	}
	num := func(name string) int {
		n, _ := strconv.Atoi(b.Value(name))
		return n
	}
	cfg := group.Config{
		InitialRebalanceDelay:  ms("group.initial.rebalance.delay.ms"),
		MinSessionTimeout:      ms("group.min.session.timeout.ms"),
		MaxSessionTimeout:      ms("group.max.session.timeout.ms"),
		MaxSize:                num("group.max.size"),
		OffsetMetadataMaxBytes: num("offset.metadata.max.bytes"),
		OffsetsRetention:       time.Duration(num("offsets.retention.minutes")) * time.Minute,

		ConsumerSessionTimeout:    ms("group.consumer.session.timeout.ms"),
		ConsumerHeartbeatInterval: ms("group.consumer.heartbeat.interval.ms"),
		ConsumerAssignors:         config.ParseList(b.Value("group.consumer.assignors")),
		ConsumerMaxSize:           num("group.consumer.max.size"),
		ConsumerMigrationPolicy:   b.Value("group.consumer.migration.policy"),
	}
	if cfg.ConsumerMaxSize >= 1<<31-1 {
		cfg.ConsumerMaxSize = 0 // unlimited
	}
	if cfg.InitialRebalanceDelay == 0 {
		cfg.InitialRebalanceDelay = -1 // the core reads 0 as "Kafka's default"
	}
	if cfg.MaxSize >= 1<<31-1 {
		cfg.MaxSize = 0 // unlimited
	}
	return cfg, ms("offsets.retention.check.interval.ms")
}

// Start starts the group coordinators if __consumer_offsets exists (a
// restart: each coordinator loads its partition before serving). As in
// Kafka, a broker that never had a group creates the topic on the first
// FindCoordinator or group request (ensure); until then group requests
// wait for it.
func (c *Coordinators) Start() {
	if c.env.Config.Cluster != nil {
		return // coordinators start as this broker takes leaderships (cluster.go)
	}
	if t, ok := c.env.Routes.Load().Topics[OffsetsTopic]; ok {
		c.t.Creating.Store(true)
		c.spawn(int32(len(t.Partitions)), false)
	}
}

// ensure creates __consumer_offsets (offsets.topic.num.partitions
// partitions, compacted, offsets.topic.segment.bytes segments) and starts
// the coordinators, once; it returns at once (the work finishes in the
// metadata actor).
func (c *Coordinators) ensure() {
	if !c.t.Creating.CompareAndSwap(false, true) {
		return
	}
	n, _ := strconv.Atoi(c.env.Config.Value("offsets.topic.num.partitions"))
	segBytes := c.env.Config.Value("offsets.topic.segment.bytes")
	c.env.Send(c.meta, &catalog.CreateInternalTopic{
		Name: OffsetsTopic, Partitions: int32(n),
		Configs: [][2]string{{"cleanup.policy", "compact"}, {"segment.bytes", segBytes}, {"compression.type", "producer"}},
		Done: func(n int32, created bool, err error) {
			if err != nil {
				c.env.Log.Error("consumer groups are unavailable (COORDINATOR_NOT_AVAILABLE)", "err", err)
				c.t.Creating.Store(false) // the next request tries again
				c.t.Started(nil)
				return
			}
			if c.env.Config.Cluster != nil {
				c.t.ClusterStarted(n)
				return
			}
			c.spawn(n, created)
		},
	})
}

// spawn starts one coordinator actor per __consumer_offsets partition and
// publishes them to the router. Coordinators of a topic just created skip
// their first load (the partitions are empty), so the first group
// requests are served at once rather than answered
// COORDINATOR_LOAD_IN_PROGRESS; a restarted actor always loads.
func (c *Coordinators) spawn(n int32, created bool) {
	cfg, every := groupConfig(c.env.Config)
	pids := make([]*actor.PID, n)
	for p := range n {
		fresh := new(atomic.Bool)
		fresh.Store(created)
		props := actor.PropsFromProducer(func() actor.Actor {
			a := NewActor(c.env, p, cfg, every).(*groupCoordinatorActor)
			a.fresh = fresh
			return a
		}, actor.WithDispatcher(c.env.Dispatcher))
		pid, err := c.env.System.Root.SpawnNamed(props, "group-coordinator-"+strconv.Itoa(int(p)))
		if err != nil {
			c.env.Log.Error("cannot start a group coordinator; its groups are unavailable", "partition", p, "err", err)
			c.t.Started(nil)
			return
		}
		pids[p] = pid
	}
	c.t.Started(pids)
}

// Stop stops the coordinator actors before the partitions close, so none
// of them writes to a closing log.
func (c *Coordinators) Stop() {
	for _, pid := range c.PIDs() {
		if pid != nil {
			_ = c.env.System.Root.StopFuture(pid).Wait()
		}
	}
}

// TxnCompleted tells the coordinator of __consumer_offsets partition p
// that the partition took a transaction marker for producer pid: its
// transactional offsets there are committed or dropped. Nothing runs
// for a partition this broker does not coordinate.
func (c *Coordinators) TxnCompleted(p int32, pid int64, commit bool) {
	pids := c.PIDs()
	if p < 0 || int(p) >= len(pids) || pids[p] == nil {
		return
	}
	c.env.Send(pids[p], &TxnCompleted{ProducerID: pid, Commit: commit})
}
