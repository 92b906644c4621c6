package txn

import (
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/samsa-io/samsa/actors/catalog"
	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/actors/shards"
)

// Coordinators is the broker's transaction coordinator actors, one per
// __transaction_state partition this broker leads, indexed by partition;
// published for the api package's handlers and read lock-free.
//
// Alone, the broker makes __transaction_state on the first transactional
// request (FindCoordinator or InitProducerId for a transactional id), as
// Kafka does, and runs a coordinator for every partition. In cluster
// mode a partition's coordinator runs on its leader: SetRole starts and
// stops them as leaderships move (the table has nil entries for the
// partitions led elsewhere, answered NOT_COORDINATOR).
type Coordinators struct {
	env     *env.Env
	meta    *actor.PID
	Markers *MarkerSender
	// RemoteVerify asks another broker's coordinator (Verify); set in
	// cluster mode.
	RemoteVerify RemoteVerify
	batcher      verifyBatcher
	t            shards.Table
}

// NewCoordinators returns the coordinators of a broker, none running
// yet; meta is the metadata actor (it makes the topic and hands out
// producer ids).
func NewCoordinators(e *env.Env, meta *actor.PID) *Coordinators {
	c := &Coordinators{env: e, meta: meta, Markers: NewMarkerSender(e)}
	c.t = shards.Table{Spawn: c.spawnOne, Stop: e.System.Root.Stop, Log: e.Log, What: "transaction coordinator"}
	return c
}

// PIDs returns the coordinators by partition, nil before they start.
func (c *Coordinators) PIDs() []*actor.PID { return c.t.PIDs() }

// PartitionFor is the __transaction_state partition of a transactional
// id: Kafka's abs(hashCode) % partitions, as for groups.
func PartitionFor(id string, partitions int32) int32 { return group.PartitionFor(id, partitions) }

// Of returns the coordinator of transactional id and its partition; ok
// is false before the coordinators run; the actor is nil when another
// broker leads the partition.
func (c *Coordinators) Of(id string) (*actor.PID, int32, bool) {
	p := c.PIDs()
	if len(p) == 0 {
		return nil, -1, false
	}
	n := PartitionFor(id, int32(len(p)))
	return p[n], n, true
}

// WhenStarted runs fn once the coordinators run (ok) or failed to start,
// making __transaction_state first if needed.
func (c *Coordinators) WhenStarted(fn func(ok bool)) { c.t.WhenStarted(fn, c.ensure) }

// SetRole is told whenever this broker starts or stops leading
// __transaction_state partition p (of n) at leader epoch epoch.
func (c *Coordinators) SetRole(p, n int32, leading bool, epoch int32) {
	c.t.SetRole(p, n, leading, epoch)
}

// Start starts the coordinators if __transaction_state exists (a restart:
// each loads its partition first). In cluster mode they start with
// leadership instead (SetRole).
func (c *Coordinators) Start() {
	if c.env.Config.Cluster != nil {
		return
	}
	if t, ok := c.env.Routes.Load().Topics[TransactionTopic]; ok {
		c.t.Creating.Store(true)
		c.t.StartAll(int32(len(t.Partitions)))
	}
}

// ensure makes __transaction_state (transaction.state.log.num.partitions
// partitions, compacted, transaction.state.log.segment.bytes segments,
// min.insync.replicas transaction.state.log.min.isr) once.
func (c *Coordinators) ensure() {
	if !c.t.Creating.CompareAndSwap(false, true) {
		return
	}
	cfg := c.env.Config
	n, _ := strconv.Atoi(cfg.Value("transaction.state.log.num.partitions"))
	minISR := cfg.Value("transaction.state.log.min.isr")
	if cfg.Cluster == nil {
		minISR = "1"
	}
	rf, _ := strconv.Atoi(cfg.Value("transaction.state.log.replication.factor"))
	c.env.Send(c.meta, &catalog.CreateInternalTopic{
		Name: TransactionTopic, Partitions: int32(n),
		ReplicationFactor: int16(rf), ReplicationFactorKey: "transaction.state.log.replication.factor",
		Configs: [][2]string{{"cleanup.policy", "compact"}, {"segment.bytes", cfg.Value("transaction.state.log.segment.bytes")},
			{"min.insync.replicas", minISR}, {"compression.type", "uncompressed"}, {"unclean.leader.election.enable", "false"}},
		Done: func(n int32, _ bool, err error) {
			if err != nil {
				c.env.Log.Error("transactions are unavailable (COORDINATOR_NOT_AVAILABLE)", "err", err)
				c.t.Creating.Store(false)
				c.t.Started(nil)
				return
			}
			if cfg.Cluster != nil {
				c.t.ClusterStarted(n)
				return
			}
			c.t.StartAll(n)
		},
	})
}

// coreConfig is the core's configuration from the broker's, and the
// tick.
func coreConfig(b *config.Broker) (Config, time.Duration) {
	num := func(name string) int64 {
		n, _ := strconv.ParseInt(b.Value(name), 10, 64)
		return n
	}
	cfg := Config{MaxTimeoutMs: int32(num("transaction.max.timeout.ms")), IDExpirationMs: num("transactional.id.expiration.ms")}
	return cfg, time.Duration(num("transaction.abort.timed.out.transaction.cleanup.interval.ms")) * time.Millisecond
}

// spawnOne starts partition p's coordinator at coordinator epoch epoch
// (the name tells incarnations apart: a stopping one may hold the old).
func (c *Coordinators) spawnOne(p, epoch int32) (*actor.PID, error) {
	cfg, every := coreConfig(c.env.Config)
	props := actor.PropsFromProducer(func() actor.Actor {
		return &coordinatorActor{env: c.env, meta: c.meta, partition: p, epoch: epoch, cfg: cfg, every: every,
			markers: c.Markers, log: c.env.Log.With("component", "txn-coordinator")}
	}, actor.WithDispatcher(c.env.Dispatcher))
	return c.env.System.Root.SpawnNamed(props, "txn-coordinator-"+strconv.Itoa(int(p))+"-e"+strconv.Itoa(int(epoch)))
}

// Stop stops the coordinators before the partitions close.
func (c *Coordinators) Stop() {
	for _, pid := range c.PIDs() {
		if pid != nil {
			_ = c.env.System.Root.StopFuture(pid).Wait()
		}
	}
}
