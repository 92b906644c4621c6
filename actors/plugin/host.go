package plugin

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Options configure a Host.
type Options struct {
	// ClientOptions are the options of every client a plug-in opens:
	// at least the seed brokers (kgo.SeedBrokers), plus TLS or SASL as
	// the listener needs.
	ClientOptions []kgo.Opt
	// Logger receives each plug-in's start, failure and restart (default:
	// discarded).
	Logger *slog.Logger
	// MinBackoff and MaxBackoff bound the wait before a failed plug-in
	// starts again: it doubles from MinBackoff at each failure in a row,
	// up to MaxBackoff (defaults 200ms and 30s).
	MinBackoff, MaxBackoff time.Duration
	// Metrics is where the host's figures per plug-in and the plug-ins'
	// own (Context.Metrics) are registered: the broker's registry, so
	// they are served on its /metrics. Nil: a registry of the host's own.
	Metrics prometheus.Registerer
	// HealthyAfter is how long a run must last for the next failure to
	// count as the first in a row again (default 1 minute).
	HealthyAfter time.Duration
}

// Stats count what a plug-in did since its Host started.
type Stats struct {
	Handled  int64 // records Handle returned nil for (redeliveries count again)
	Restarts int64 // runs that ended in an error or panic
	LastErr  string
}

// Host runs plug-ins, each supervised on a goroutine of its own.
type Host struct {
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	stats map[string]*pluginStats
}

type pluginStats struct {
	handled, restarts atomic.Int64
	lastErr           atomic.Pointer[string]
}

// NewHost prepares a host; nothing runs until Start.
func NewHost(opts Options) *Host {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 200 * time.Millisecond
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(30*time.Second, opts.MinBackoff)
	}
	if opts.Metrics == nil {
		opts.Metrics = prometheus.NewRegistry()
	}
	if opts.HealthyAfter <= 0 {
		opts.HealthyAfter = time.Minute
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Host{opts: opts, ctx: ctx, cancel: cancel, stats: map[string]*pluginStats{}}
}

// Start runs each plug-in until Stop. Names must be unique and plug-ins
// must name at least one topic.
func (h *Host) Start(plugins ...Plugin) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	names := map[string]bool{}
	for _, p := range plugins {
		if p.Name() == "" || len(p.Topics()) == 0 || slices.Contains(p.Topics(), "") {
			return fmt.Errorf("plug-in %q: a plug-in needs a name and at least one topic", p.Name())
		}
		if _, dup := h.stats[p.Name()]; dup || names[p.Name()] {
			return fmt.Errorf("two plug-ins are named %q", p.Name())
		}
		names[p.Name()] = true
	}
	for _, p := range plugins {
		st := &pluginStats{}
		if err := h.registerStats(p.Name(), st); err != nil {
			return fmt.Errorf("plug-in %q: registering its metrics: %w", p.Name(), err)
		}
		h.stats[p.Name()] = st
	}
	for _, p := range plugins {
		st := h.stats[p.Name()]
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			h.supervise(p, st)
		}()
	}
	return nil
}

// Stats returns the counters of the plug-in named name.
func (h *Host) Stats(name string) (Stats, bool) {
	h.mu.Lock()
	st, ok := h.stats[name]
	h.mu.Unlock()
	if !ok {
		return Stats{}, false
	}
	s := Stats{Handled: st.handled.Load(), Restarts: st.restarts.Load()}
	if e := st.lastErr.Load(); e != nil {
		s.LastErr = *e
	}
	return s, true
}

// Stop stops every plug-in: each finishes the record in hand, commits
// what it handled and leaves its group. It returns when all have
// stopped or ctx ends.
func (h *Host) Stop(ctx context.Context) error {
	h.cancel()
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("plug-ins still stopping: %w", ctx.Err())
	}
}

// supervise runs p again and again until the host stops, waiting a
// growing backoff after each failure.
func (h *Host) supervise(p Plugin, st *pluginStats) {
	log := h.opts.Logger.With("plugin", p.Name())
	backoff := h.opts.MinBackoff
	for {
		started := time.Now()
		log.Info("plug-in starting")
		err := h.runOnce(p, st, log)
		if h.ctx.Err() != nil {
			log.Info("plug-in stopped")
			return
		}
		if time.Since(started) >= h.opts.HealthyAfter {
			backoff = h.opts.MinBackoff
		}
		st.restarts.Add(1)
		msg := err.Error()
		st.lastErr.Store(&msg)
		log.Error("plug-in failed; restarting from its last committed offsets", "err", err, "backoff", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-h.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(backoff*2, h.opts.MaxBackoff)
	}
}
