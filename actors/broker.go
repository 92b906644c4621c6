package actors

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/segment"
)

// logDir is what partition actors need from a data directory; segment.Dir
// provides it.
type logDir interface {
	Open(topic string, partition int32, cfg segment.Config) (*segment.Log, segment.RecoveryReport, error)
	Remove(topic string, partition int32) error
	Close() error
}

// Options are the seams of a Broker; the zero value is production.
type Options struct {
	// Rand supplies cluster and topic ids; default crypto/rand.
	Rand io.Reader
	// Now is the clock handed to the pure cores; default time.Now.
	Now func() time.Time
	// GatherTimeout bounds how long a request waits for partition
	// actors' answers (DescribeLogDirs, DeleteTopics); default 30s.
	GatherTimeout time.Duration

	// openDir opens a data directory with the options the broker's
	// configuration gives; tests wrap segment.Dir with it.
	openDir func(path string, opts segment.Options) (logDir, error)
}

// Broker is the broker's brain: an actor system with one metadata actor
// and one partition actor per partition, and the router that hands them
// requests. It implements netloop.Handler.
type Broker struct {
	cfg    *config.Broker
	log    *slog.Logger
	opts   Options
	system *actor.ActorSystem
	// dispatch runs every actor's mailbox (dispatcher.go).
	dispatch *workerDispatcher
	meta     *actor.PID
	dirs     map[string]logDir // by path, as in config.Broker.LogDirs

	endpoint    atomic.Pointer[metadata.Endpoint]
	routes      atomic.Pointer[Routes]
	metaStopped chan struct{}
	startup     atomic.Pointer[startup]
	locks       []*os.File // flock on each data directory's .lock
	closeOnce   sync.Once
	closeErr    error
	fetches     *fetchState       // Fetch sessions and topic-id index (handle_fetch.go)
	producerIDs producerIDs       // InitProducerId (producer_ids.go)
	groups      groupCoordinators // consumer groups (group_route.go)

	housekeepingStop chan struct{} // closed by Close (housekeeping.go)
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
	if o.openDir == nil {
		o.openDir = openLogDir
	}
	if o.GatherTimeout <= 0 {
		o.GatherTimeout = 30 * time.Second
	}
	b := &Broker{cfg: cfg, log: logger, opts: o, dirs: make(map[string]logDir), metaStopped: make(chan struct{})}
	b.fetches = newFetchState(int(config.ParseInt(cfg.Value(keyFetchSessionSlots))))

	locks, err := lockDirs(cfg.LogDirs)
	if err != nil {
		return nil, err
	}
	b.locks = locks
	state, err := b.loadState()
	if err != nil {
		b.unlock()
		return nil, err
	}
	ep := state.Endpoint()
	b.endpoint.Store(&ep)
	for _, path := range cfg.LogDirs {
		d, err := o.openDir(path, dirOptions(cfg, logger))
		if err != nil {
			b.abandonStart()
			return nil, fmt.Errorf("actors: data directory %s: %w", path, err)
		}
		b.dirs[path] = d
	}
	b.routes.Store(&Routes{})

	b.dispatch = newWorkerDispatcher(mailboxThroughput, maxParkedWorkers)
	b.system = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(minLevel{logger.Handler(), slog.LevelWarn}).With("component", "protoactor")
	}))
	b.failDeadFetches()
	ready := make(chan struct{})
	b.startup.Store(&startup{state: state, ready: ready})
	props := actor.PropsFromProducer(func() actor.Actor {
		a := &metadataActor{b: b}
		if s := b.startup.Swap(nil); s != nil {
			// The first incarnation reuses what NewBroker loaded; a
			// restarted one reloads from disk in Started.
			a.state, a.ready = s.state, s.ready
		}
		return a
	}, actor.WithSupervisor(partitionSupervisor()), actor.WithDispatcher(b.dispatch))
	b.meta, err = b.system.Root.SpawnNamed(props, "metadata")
	if err != nil {
		b.abandonStart()
		return nil, fmt.Errorf("actors: spawn metadata actor: %w", err)
	}
	select {
	case <-ready:
	case <-b.metaStopped:
		b.system.Shutdown()
		b.abandonStart()
		return nil, errors.New("actors: the metadata actor stopped while starting; see the log")
	}
	b.startGroups()
	b.startHousekeeping()
	b.log.Info("broker started", "broker_id", cfg.BrokerID, "cluster_id", b.ClusterID(), "topics", len(b.routes.Load().Topics))
	return b, nil
}

// startup hands NewBroker's loaded state to the metadata actor's first
// incarnation.
type startup struct {
	state *metadata.State
	ready chan struct{}
}

// loadState reads the metadata snapshot from the data directories.
func (b *Broker) loadState() (*metadata.State, error) {
	store, snap, err := metadata.Open(b.cfg.LogDirs)
	if err != nil {
		return nil, err
	}
	relocate(snap, b.cfg.LogDirs)
	s, err := metadata.New(b.cfg, snap, store, b.opts.Rand)
	if err != nil {
		return nil, err
	}
	if ep := b.endpoint.Load(); ep != nil {
		s.SetEndpoint(*ep)
	}
	return s, nil
}

// relocate points partitions whose recorded directory is not one of
// log.dirs (spelled differently: relative and absolute, or started from
// another working directory) at the configured directory that holds their
// files. It changes nothing on disk; a partition found nowhere is left as
// is, and metadata.New refuses to start rather than lose it.
func relocate(snap *metadata.Snapshot, dirs []string) {
	if snap == nil {
		return
	}
	byAbs := make(map[string]string, len(dirs))
	for _, d := range dirs {
		if a, err := filepath.Abs(d); err == nil {
			byAbs[a] = d
		}
	}
	fix := func(t *metadata.Topic) {
		for i := range t.Partitions {
			p := &t.Partitions[i]
			if slices.Contains(dirs, p.Dir) {
				continue
			}
			if a, err := filepath.Abs(p.Dir); err == nil && byAbs[a] != "" {
				p.Dir = byAbs[a]
				continue
			}
			for _, d := range dirs {
				if st, err := os.Stat(filepath.Join(d, t.Name+"-"+strconv.Itoa(int(p.Index)))); err == nil && st.IsDir() {
					p.Dir = d
					break
				}
			}
		}
	}
	for i := range snap.Topics {
		fix(&snap.Topics[i])
	}
	for i := range snap.Deleting {
		fix(&snap.Deleting[i])
	}
}

// SetAdvertised sets the host and port that Metadata and DescribeCluster
// give clients: call it once the listeners are bound (port 0 resolves to
// the real port) and before clients are told the broker is ready.
func (b *Broker) SetAdvertised(host string, port int32) {
	ep := metadata.Endpoint{Host: host, Port: port}
	b.endpoint.Store(&ep)
	b.system.Root.Send(b.meta, &setEndpoint{ep: ep})
}

// ClusterID returns the cluster id (for logs).
func (b *Broker) ClusterID() string { return b.routes.Load().ClusterID }

// Close stops every actor after the messages already queued, closing each
// partition log cleanly (so the next start skips recovery), then the data
// directories. ctx bounds the wait.
func (b *Broker) Close(ctx context.Context) error {
	err := ErrClosed
	b.closeOnce.Do(func() {
		b.stopHousekeeping()
		b.stopGroups()
		b.system.Root.Poison(b.meta)
		select {
		case <-b.metaStopped:
			b.closeErr = b.closeDirs()
		case <-ctx.Done():
			b.closeErr = fmt.Errorf("actors: close: %w (partition logs may need recovery on next start)", ctx.Err())
		}
		b.system.Shutdown()
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
func openLogDir(path string, opts segment.Options) (logDir, error) {
	return segment.OpenDir(path, opts)
}

// keyReserveBytes is how far ahead of active segments disk space is
// reserved (segment.Options.ReserveBytes); 0 turns it off.
const keyReserveBytes = "samsa.log.reserve.bytes"

// dirOptions are the segment options of every data directory.
func dirOptions(cfg *config.Broker, logger *slog.Logger) segment.Options {
	reserve := config.ParseInt(cfg.Value(keyReserveBytes))
	if reserve == 0 {
		reserve = -1 // segment's "off"; its 0 means the default
	}
	return segment.Options{Logger: logger, ReserveBytes: reserve}
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
