package replica

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/interbroker"
)

// Config is what the fetchers need of the broker.
type Config struct {
	Me       int32
	Root     *actor.RootContext
	Client   *interbroker.Client
	View     *cluster.Table // where leaders are
	Listener string         // the inter-broker listener
	Log      *slog.Logger
	// MaxWait and MinBytes shape each fetch (replica.fetch.wait.max.ms,
	// replica.fetch.min.bytes); MaxBytes and PartitionMaxBytes bound its
	// answer (replica.fetch.response.max.bytes, replica.fetch.max.bytes).
	MaxWait           time.Duration
	MinBytes          int32
	MaxBytes          int32
	PartitionMaxBytes int32
	// Backoff is the pause after a failed fetch (replica.fetch.backoff.ms).
	Backoff time.Duration
	// ActorTimeout bounds a wait for a partition actor's reply.
	ActorTimeout time.Duration
	// Epoch is this broker's registration epoch, sent in Fetch v15+'s
	// ReplicaState as Kafka's followers do (nil: -1).
	Epoch *atomic.Int64
	// Throttle is follower.replication.throttled.rate (throttle.go);
	// nil: none.
	Throttle *Throttle
}

// Followed is one partition to replicate.
type Followed struct {
	Topic       string
	ID          [16]byte
	Partition   int32
	Leader      int32
	LeaderEpoch int32
	PID         *actor.PID // the local partition actor
	// InSync: this replica was in the ISR the controller last gave; a
	// follower throttle holds back only replicas out of it.
	InSync bool
}

type partKey struct {
	topic     string
	partition int32
}

// Fetchers is the broker's follower fetchers, one per leader.
type Fetchers struct {
	cfg Config

	mu       sync.Mutex
	byLeader map[int32]*fetcher
	where    map[partKey]int32 // partition → the leader it is fetched from
	closed   bool
}

// New makes the fetchers (none runs until a partition is followed).
func New(cfg Config) *Fetchers {
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = 500 * time.Millisecond
	}
	if cfg.MinBytes <= 0 {
		cfg.MinBytes = 1
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 10 << 20
	}
	if cfg.PartitionMaxBytes <= 0 {
		cfg.PartitionMaxBytes = 1 << 20
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Second
	}
	if cfg.ActorTimeout <= 0 {
		cfg.ActorTimeout = 30 * time.Second
	}
	return &Fetchers{cfg: cfg, byLeader: map[int32]*fetcher{}, where: map[partKey]int32{}}
}

// Follow replicates p from its leader from now on (replacing how it was
// followed before: a new leader or epoch).
func (fs *Fetchers) Follow(p Followed) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closed {
		return
	}
	k := partKey{p.Topic, p.Partition}
	if old, ok := fs.where[k]; ok && old != p.Leader {
		fs.byLeader[old].remove(k)
	}
	f := fs.byLeader[p.Leader]
	if f == nil {
		f = newFetcher(fs, p.Leader)
		fs.byLeader[p.Leader] = f
		go f.run()
	}
	fs.where[k] = p.Leader
	f.add(k, p)
}

// Unfollow stops replicating topic/partition (it leads now, or left this
// broker).
func (fs *Fetchers) Unfollow(topic string, partition int32) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	k := partKey{topic, partition}
	if l, ok := fs.where[k]; ok {
		fs.byLeader[l].remove(k)
		delete(fs.where, k)
	}
}

// Close stops every fetcher and waits for them.
func (fs *Fetchers) Close() {
	fs.mu.Lock()
	fs.closed = true
	all := make([]*fetcher, 0, len(fs.byLeader))
	for _, f := range fs.byLeader {
		all = append(all, f)
	}
	fs.mu.Unlock()
	for _, f := range all {
		f.stop()
	}
}

// leaderAddr is the leader's inter-broker address, from the view.
func (fs *Fetchers) leaderAddr(id int32) (string, bool) {
	return fs.cfg.View.Load().Addr(id, fs.cfg.Listener)
}
