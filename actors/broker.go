package actors

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/api"
	"github.com/samsa-io/samsa/actors/catalog"
	"github.com/samsa-io/samsa/actors/cleaner"
	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/coordinator"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/fetch"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/actors/metrics"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/actors/quota"
	"github.com/samsa-io/samsa/actors/replica"
	"github.com/samsa-io/samsa/actors/routing"
	"github.com/samsa-io/samsa/actors/sharegroup"
	"github.com/samsa-io/samsa/actors/txn"
	"github.com/samsa-io/samsa/interbroker"
	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
)

// Options are the seams of a Broker; the zero value is production.
type Options struct {
	// Rand supplies cluster and topic ids; default crypto/rand.
	Rand io.Reader
	// Now is the clock handed to the pure cores; default time.Now.
	Now func() time.Time
	// GatherTimeout bounds how long a request waits for partition
	// actors' answers (DescribeLogDirs, DeleteTopics); default 30s.
	GatherTimeout time.Duration
	// FS is the filesystem of every data directory: the logs, the
	// metadata snapshot, the producer-id blocks, the directory locks;
	// default vfs.OS. Tests run a broker on a vfs.MemFS to crash it.
	FS vfs.FS

	// openDir opens a data directory with the options the broker's
	// configuration gives; tests wrap segment.Dir with it.
	openDir func(path string, opts segment.Options) (partition.LogDir, error)
	// housekept, if set, is called on the housekeeping goroutine after
	// each periodic pass (housekeeping.go): "retention" once every
	// partition actor has been sent its ApplyRetention, so a message
	// sent to a partition afterwards is handled after it; "checkpoint"
	// once every data directory's checkpoints are written. Tests wait on
	// it instead of sleeping.
	housekept func(pass string)
	// OnKeystores hears the listeners whose keystore settings
	// AlterConfigs changed on this broker (in a cluster: as the config
	// watch reads /config/brokers/<id>), with the
	// layers that resolve them: internal/wiring reads those keystores
	// again.
	OnKeystores func(listeners []string, layers config.Layers)
	// OnLayers hears the broker's configuration layers at start and
	// after every change of its metadata (a dynamic broker config may
	// have changed: AlterConfigs, or in a cluster the config watch):
	// internal/wiring applies the connection limits they resolve.
	OnLayers func(layers config.Layers)
	// CheckKeystore reads the keystore a listener would get from the
	// layers, and says why it cannot serve: AlterConfigs refuses such a
	// change (INVALID_CONFIG) before storing it. internal/wiring
	// provides it (tlsconf).
	CheckKeystore func(listener string, layers config.Layers) error
	// Cluster is required when the configuration is in cluster mode
	// (zookeeper.connect): what internal/wiring built from ZooKeeper.
	Cluster *ClusterOptions
}

// ClusterOptions are a cluster-mode broker's links to the cluster.
type ClusterOptions struct {
	ClusterID string // ZooKeeper's /cluster/id
	Store     catalog.ClusterStore
	// Controller serves the requests addressed to the controller on this
	// broker (nil: NOT_CONTROLLER).
	Controller func(req *wire.Request)
	// Seed seeds replica assignment (default: from Rand).
	Seed uint64
	// OnConfigs hears every dynamic config this broker reads from
	// ZooKeeper (catalog.ClusterMode.OnConfigs).
	OnConfigs func(msg any)
	// ACLs keep the ACLs in ZooKeeper, shared with the other brokers,
	// when an authorizer is configured.
	ACLs acl.Store
	// InterBroker is how this broker's connections to the others are
	// secured (TLS, SASL), as the inter-broker listener's security
	// protocol asks; the zero value is PLAINTEXT.
	InterBroker interbroker.Security
}

// Broker is the broker's brain: an actor system with one metadata actor
// (actors/catalog), one partition actor per partition (actors/partition)
// and the group coordinators (actors/coordinator), and the router that
// hands them requests through the API registry (actors/api). It
// implements netloop.Handler.
type Broker struct {
	cfg  *config.Broker
	log  *slog.Logger
	opts Options
	env  *env.Env
	// connQuotas are the connection creation quotas (quota_wiring.go).
	connQuotas *quota.Connections
	// dispatch runs every actor's mailbox (dispatcher.go).
	dispatch *workerDispatcher
	meta     *actor.PID
	dirs     map[string]partition.LogDir // by path, as in config.Broker.LogDirs

	metaStopped chan struct{}
	locks       []io.Closer // the lock on each data directory's .lock
	closeOnce   sync.Once
	closeErr    error

	apis map[int16]api.API // the registry, by key (router.go)
	// saslGate: some listener uses SASL, so the router checks that each
	// request's client has authenticated (api.Admit).
	saslGate bool
	services *api.Services
	fetch    *fetch.Service
	groups   *coordinator.Coordinators
	txns     *txn.Coordinators // nil unless samsa.transactions.enable

	cluster *catalog.ClusterMode // cluster mode only
	peers   *interbroker.Client  // cluster mode: replication's link to the other brokers
	// markerPeers: the transaction coordinators' WriteTxnMarkers link
	// (cluster mode with transactions), apart from replication's.
	markerPeers *interbroker.Client
	sharePeers  *interbroker.Client // cluster mode: share state on other brokers' state partitions
	fetchers    *replica.Fetchers

	housekeepingStop chan struct{}    // closed by Close (housekeeping.go)
	cleaner          *cleaner.Cleaner // the log cleaner (cleaning.go); nil when disabled
	housekeepingDone chan struct{}
}

// ErrClosed is returned by Close on a second call.
var ErrClosed = errors.New("actors: broker closed")

// NewBroker opens the metadata in the data directories (creating a fresh
// cluster identity on first start) and every partition log, and returns
// once all of them are open.
func NewBroker(cfg *config.Broker, logger *slog.Logger, opts ...Options) (*Broker, error) {
	if logger == nil {
		logger = slog.Default()
	}
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.FS == nil {
		o.FS = vfs.OS
	}
	if o.openDir == nil {
		o.openDir = openLogDir
	}
	if o.GatherTimeout <= 0 {
		o.GatherTimeout = 30 * time.Second
	}
	e := &env.Env{Log: logger, Config: cfg, Now: o.Now, GatherTimeout: o.GatherTimeout, Routes: routing.NewTable(), Metrics: metrics.New()}
	b := &Broker{cfg: cfg, log: logger, opts: o, env: e, dirs: make(map[string]partition.LogDir), metaStopped: make(chan struct{}),
		apis: api.ByKey()}

	locks, err := lockDirsFS(o.FS, cfg.LogDirs)
	if err != nil {
		return nil, err
	}
	b.locks = locks
	var state *metadata.State
	if cfg.Cluster != nil {
		if o.Cluster == nil || o.Cluster.Store == nil || o.Cluster.ClusterID == "" {
			b.unlock()
			return nil, errors.New("actors: cluster mode needs its ZooKeeper links (Options.Cluster)")
		}
		state, err = catalog.LoadInCluster(o.FS, cfg, o.Rand, o.Cluster.ClusterID)
	} else {
		state, err = catalog.Load(o.FS, cfg, o.Rand, nil)
	}
	if err != nil {
		b.unlock()
		return nil, err
	}
	if err := checkMetaProperties(o.FS, cfg.LogDirs, cfg.BrokerID, state.ClusterID()); err != nil {
		b.unlock()
		return nil, err
	}
	if e.Auth, err = newAuthorizer(cfg, logger, o); err != nil {
		b.unlock()
		return nil, err
	}
	ep := state.Endpoint()
	e.Endpoint.Store(&ep)
	saslSvc, err := newSASL(cfg, o.FS, o.Cluster)
	if err != nil {
		b.unlock()
		return nil, err
	}
	if e.Quotas, err = newQuotas(cfg, o.FS, o.Cluster, logger); err != nil {
		b.unlock()
		return nil, err
	}
	b.connQuotas = newConnectionQuotas(cfg, e.Quotas)
	for _, path := range cfg.LogDirs {
		dirOpts := dirOptions(cfg, logger, o.FS)
		dirOpts.OnFlush = e.Metrics.OnFlush
		d, err := o.openDir(path, dirOpts)
		if err != nil {
			b.abandonStart()
			return nil, fmt.Errorf("actors: data directory %s: %w", path, err)
		}
		b.dirs[path] = d
	}

	b.dispatch = newWorkerDispatcher(mailboxThroughput, maxParkedWorkers)
	e.Dispatcher = b.dispatch
	e.System = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(minLevel{logger.Handler(), slog.LevelWarn}).With("component", "protoactor")
	}))
	b.fetch = fetch.New(e, int(config.ParseInt(cfg.Value(fetch.KeySessionSlots))))
	ready := make(chan struct{})
	metaCfg := &catalog.ActorConfig{Env: e, Dirs: b.dirs, Rand: o.Rand, ProducerIDs: catalog.NewProducerIDs(o.FS), FS: o.FS, Stopped: b.metaStopped,
		OnKeystores: o.OnKeystores, OnLayers: o.OnLayers, CheckKeystore: o.CheckKeystore}
	// The coordinators are made after the metadata actor (they need it);
	// roles it reports before then are applied once they exist.
	groups := new(atomic.Pointer[coordinator.Coordinators])
	metaCfg.OnOffsetsRole = func(p, n int32, leading bool, epoch int32) {
		if g := groups.Load(); g != nil {
			g.SetRole(p, n, leading, epoch)
		}
	}
	txns := new(atomic.Pointer[txn.Coordinators])
	metaCfg.Txn = txnLink(cfg)
	transactions := cfg.Value(config.KeyTransactionsEnable) == "true"
	if transactions {
		wire.EnableTransactionAPIs()
		partition.EnableTransactions()
		metaCfg.OnTxnRole = func(p, n int32, leading bool, epoch int32) {
			if t := txns.Load(); t != nil {
				t.SetRole(p, n, leading, epoch)
			}
		}
	}
	if cfg.Cluster != nil {
		wire.EnableInterBrokerAPIs()
		seed := o.Cluster.Seed
		if seed == 0 {
			var s [8]byte
			if _, err := io.ReadFull(o.Rand, s[:]); err == nil {
				seed = binary.LittleEndian.Uint64(s[:])
			}
		}
		metaCfg.Cluster = catalog.NewClusterMode(o.Cluster.Store, o.Cluster.ClusterID, ClientListener(cfg), seed)
		b.cluster = metaCfg.Cluster
		metaCfg.Cluster.OnConfigs = o.Cluster.OnConfigs
		metaCfg.Cluster.InterBroker = o.Cluster.InterBroker
		metaCfg.Cluster.OnUserConfigs = b.watchUsers(saslSvc)
		metaCfg.Cluster.OnQuotaConfigs = b.watchQuotas(e.Quotas)
		e.Cluster, e.ClientListener = metaCfg.Cluster.View, ClientListener(cfg)
		b.startReplication(metaCfg)
	}
	metaCfg.First.Store(&catalog.Startup{State: state, Ready: ready})
	props := actor.PropsFromProducer(catalog.NewActor(metaCfg), actor.WithSupervisor(partition.Supervisor()), actor.WithDispatcher(b.dispatch))
	b.meta, err = e.System.Root.SpawnNamed(props, "metadata")
	if err != nil {
		b.abandonStart()
		return nil, fmt.Errorf("actors: spawn metadata actor: %w", err)
	}
	select {
	case <-ready:
	case <-b.metaStopped:
		e.System.Shutdown()
		b.abandonStart()
		return nil, errors.New("actors: the metadata actor stopped while starting; see the log")
	}
	b.groups = coordinator.New(e, b.meta)
	groups.Store(b.groups)
	b.groups.Start()
	b.services = &api.Services{Env: e, Meta: b.meta, Fetch: b.fetch, Groups: b.groups, SASL: saslSvc}
	// Share groups (actors/sharegroup's doc); in cluster mode over a link
	// of their own to the other brokers (share_wiring.go).
	shareCfg := sharegroup.ConfigFrom(cfg)
	shareCfg.Cluster = b.shareLink()
	if b.services.Shares, err = sharegroup.Start(e, b.meta, shareCfg); err != nil {
		b.abandonStart()
		return nil, fmt.Errorf("actors: spawn share coordinator: %w", err)
	}
	wire.EnableShareGroupAPIs()
	b.saslGate = len(saslSvc.Listeners) > 0
	if transactions {
		b.txns = txn.NewCoordinators(e, b.meta)
		b.txns.Markers.Remote = b.remoteMarkers()
		b.txns.RemoteVerify = b.remoteVerify()
		metaCfg.Txn.SetVerifier(b.txns.Verify)
		groups := b.groups
		b.txns.Markers.Written = func(tp txn.TopicPartition, pid int64, commit bool) { groups.TxnCompleted(tp.Partition, pid, commit) }
		txns.Store(b.txns)
		b.txns.Start()
		b.services.Txns = b.txns
	}
	if o.Cluster != nil {
		b.services.Controller = o.Cluster.Controller
	}
	b.startHousekeeping()
	b.startCleaner()
	b.watchMetrics()
	b.log.Info("broker started", "broker_id", cfg.BrokerID, "cluster_id", b.ClusterID(), "topics", len(e.Routes.Load().Topics))
	return b, nil
}

// SetListenerEndpoints records each listener's advertised address, for a
// broker with several listeners (single-node mode): Metadata,
// DescribeCluster and FindCoordinator tell a client the address of the
// listener it came in on.
func (b *Broker) SetListenerEndpoints(eps map[string]metadata.Endpoint) {
	b.env.Endpoints.Store(&eps)
}

// SetAdvertised sets the host and port that Metadata and DescribeCluster
// give clients: call it once the listeners are bound (port 0 resolves to
// the real port) and before clients are told the broker is ready.
func (b *Broker) SetAdvertised(host string, port int32) {
	ep := metadata.Endpoint{Host: host, Port: port}
	b.env.Endpoint.Store(&ep)
	b.env.Send(b.meta, &catalog.SetEndpoint{Endpoint: ep})
}

// ClientListener is the listener whose endpoints clients are told in
// cluster mode: the first advertised one.
func ClientListener(cfg *config.Broker) string {
	if len(cfg.Advertised) > 0 {
		return cfg.Advertised[0].Name
	}
	return cfg.Listeners[0].Name
}

// SetBrokerEpoch records this broker's registration epoch (its
// /brokers/ids znode's czxid) in cluster mode: controller requests meant
// for an earlier registration are refused from then on.
func (b *Broker) SetBrokerEpoch(epoch int64) {
	if b.cluster != nil {
		b.cluster.BrokerEpoch.Store(epoch)
	}
}

// BrokerEpoch is this broker's registration epoch (cluster mode; 0
// before it registers).
func (b *Broker) BrokerEpoch() int64 {
	if b.cluster == nil {
		return 0
	}
	return b.cluster.BrokerEpoch.Load()
}

// ClusterView is the broker's view of the cluster (cluster mode; nil
// alone).
func (b *Broker) ClusterView() *cluster.View {
	if b.cluster == nil {
		return nil
	}
	return b.cluster.View.Load()
}

// ConfigsSynced is closed once the broker has read ZooKeeper's dynamic
// configs (SCRAM credentials, quotas, broker configs) the first time;
// alone it is closed already.
func (b *Broker) ConfigsSynced() <-chan struct{} {
	if b.cluster == nil {
		done := make(chan struct{})
		close(done)
		return done
	}
	return b.cluster.ConfigsSynced()
}

// Spawn starts an actor in the broker's actor system, on its dispatcher
// (cluster mode: the controller, which internal/wiring builds).
func (b *Broker) Spawn(props *actor.Props, name string) (*actor.PID, error) {
	return b.env.System.Root.SpawnNamed(props.Configure(actor.WithDispatcher(b.dispatch)), name)
}

// Send sends msg to an actor of the broker's system from outside it.
func (b *Broker) Send(pid *actor.PID, msg any) { b.env.Send(pid, msg) }

// Stop stops an actor of the broker's system and waits for it.
func (b *Broker) Stop(pid *actor.PID) { _ = b.env.System.Root.StopFuture(pid).Wait() }

// ClusterID returns the cluster id (for logs).
func (b *Broker) ClusterID() string { return b.env.Routes.Load().ClusterID }

// Routes returns the current routing table.
func (b *Broker) Routes() *routing.Routes { return b.env.Routes.Load() }

// FetchSessions is the number of incremental fetch sessions (KIP-227) the
// broker keeps.
func (b *Broker) FetchSessions() int { return b.fetch.Sessions() }

// Drain answers every fetch parked waiting for data now, and makes later
// fetches answer without waiting: netloop calls it when Shutdown stops
// decoding (netloop.Drainer).
func (b *Broker) Drain() { b.fetch.Drain() }

// Close stops every actor after the messages already queued, closing each
// partition log cleanly (so the next start skips recovery), then the data
// directories. ctx bounds the wait.
func (b *Broker) Close(ctx context.Context) error {
	err := ErrClosed
	b.closeOnce.Do(func() {
		b.stopCleaner()
		b.stopHousekeeping()
		b.stopReplication()
		if b.txns != nil {
			b.txns.Stop()
		}
		b.groups.Stop()
		b.env.System.Root.Poison(b.meta)
		select {
		case <-b.metaStopped:
			b.closeErr = b.closeDirs()
		case <-ctx.Done():
			b.closeErr = fmt.Errorf("actors: close: %w (partition logs may need recovery on next start)", ctx.Err())
		}
		b.env.System.Shutdown()
		b.dispatch.stop()
		if b.closeErr == nil {
			b.unlock() // on a timeout the partitions may still write: keep the lock until exit
		}
		err = b.closeErr
	})
	return err
}

func (b *Broker) unlock() {
	for _, f := range b.locks {
		f.Close()
	}
	b.locks = nil
}

// openLogDir opens one data directory.
func openLogDir(path string, opts segment.Options) (partition.LogDir, error) {
	return segment.OpenDir(path, opts)
}

// keyReserveBytes is how far ahead of active segments disk space is
// reserved (segment.Options.ReserveBytes); 0 turns it off.
const keyReserveBytes = "samsa.log.reserve.bytes"

// dirOptions are the segment options of every data directory.
func dirOptions(cfg *config.Broker, logger *slog.Logger, fs vfs.FS) segment.Options {
	reserve := config.ParseInt(cfg.Value(keyReserveBytes))
	if reserve == 0 {
		reserve = -1 // segment's "off"; its 0 means the default
	}
	return segment.Options{Logger: logger, ReserveBytes: reserve, FS: fs}
}

func (b *Broker) closeDirs() error {
	var errs []error
	for path, d := range b.dirs {
		if err := d.Close(); err != nil {
			errs = append(errs, fmt.Errorf("actors: close %s: %w", path, err))
		}
	}
	return errors.Join(errs...)
}

// abandonStart undoes a failed NewBroker: it closes the directories opened so
// far and releases the directory locks. The start failure is what the caller
// returns; a close failure on top of it is only logged, so it does not hide
// the cause.
func (b *Broker) abandonStart() {
	if err := b.closeDirs(); err != nil {
		b.log.Warn("closing the data directories after a failed start", "err", err)
	}
	b.unlock()
}

// minLevel drops records below a level (protoactor's chatter).
type minLevel struct {
	slog.Handler
	level slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.level && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(a), m.level}
}

func (m minLevel) WithGroup(n string) slog.Handler { return minLevel{m.Handler.WithGroup(n), m.level} }
