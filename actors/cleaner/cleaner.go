package cleaner

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/actors/routing"
	"github.com/samsa-io/samsa/segment"
)

// Config is the cleaner's broker configuration.
type Config struct {
	Threads          int           // log.cleaner.threads
	Backoff          time.Duration // log.cleaner.backoff.ms
	DedupeBufferSize int64         // log.cleaner.dedupe.buffer.size, shared by the threads
	LoadFactor       float64       // log.cleaner.io.buffer.load.factor
	MaxBytesPerSec   float64       // log.cleaner.io.max.bytes.per.second; <= 0 or huge: no limit
}

// Cleaner is the pool of cleaner workers (see the package doc).
type Cleaner struct {
	cfg    Config
	routes func() *routing.Routes
	send   func(pid *actor.PID, msg any)
	now    func() time.Time
	log    *slog.Logger
	thr    *throttle

	mu     sync.Mutex
	busy   map[segment.TopicPartition]bool
	stop   chan struct{}
	wg     sync.WaitGroup
	wake   chan struct{}
	rounds atomic.Int64

	stats Stats
}

// Stats count what the cleaners did since the broker started.
type Stats struct {
	Cleanings    atomic.Int64
	BytesRead    atomic.Int64
	BytesWritten atomic.Int64
	Failures     atomic.Int64
}

// New returns a cleaner over the partitions routes lists, reaching their
// actors with send. now is the broker's clock (nil: time.Now).
func New(cfg Config, routes func() *routing.Routes, send func(*actor.PID, any), now func() time.Time, log *slog.Logger) *Cleaner {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	cfg.Threads = max(cfg.Threads, 1)
	if cfg.Backoff <= 0 {
		cfg.Backoff = 15 * time.Second
	}
	if cfg.DedupeBufferSize <= 0 {
		cfg.DedupeBufferSize = 128 << 20
	}
	return &Cleaner{cfg: cfg, routes: routes, send: send, now: now, log: log, thr: newThrottle(cfg.MaxBytesPerSec, now),
		busy: map[segment.TopicPartition]bool{}, wake: make(chan struct{}, 1)}
}

// Stats returns the cleaner's counters.
func (c *Cleaner) Stats() *Stats { return &c.stats }

// Start starts the workers.
func (c *Cleaner) Start() {
	c.stop = make(chan struct{})
	for i := range c.cfg.Threads {
		c.wg.Add(1)
		go c.supervise(i)
	}
}

// Stop stops the workers and waits for them; a cleaning in progress
// finishes its current step (a job abandoned before its swap only leaves
// .cleaned files, which the next open deletes).
func (c *Cleaner) Stop() {
	if c.stop == nil {
		return
	}
	close(c.stop)
	c.wg.Wait()
	c.stop = nil
}

// Wake makes a sleeping worker look for work now (tests, and a config
// change that makes a log cleanable).
func (c *Cleaner) Wake() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Rounds is the number of rounds the workers have finished (tests wait
// on it).
func (c *Cleaner) Rounds() int64 { return c.rounds.Load() }

// supervise runs worker i, restarting it after a panic.
func (c *Cleaner) supervise(i int) {
	defer c.wg.Done()
	for {
		if !c.runWorker(i) {
			return
		}
		select {
		case <-c.stop:
			return
		case <-time.After(c.cfg.Backoff):
		}
	}
}

// runWorker runs the worker loop until stop (false) or a panic (true:
// restart it).
func (c *Cleaner) runWorker(i int) (restart bool) {
	defer func() {
		if r := recover(); r != nil {
			c.stats.Failures.Add(1)
			c.log.Error("log cleaner thread failed; restarting it after the backoff", "thread", i, "panic", fmt.Sprint(r))
			restart = true
		}
	}()
	for {
		cleaned := c.RunOnce()
		c.rounds.Add(1)
		if cleaned {
			select {
			case <-c.stop:
				return false
			default:
				continue
			}
		}
		select {
		case <-c.stop:
			return false
		case <-c.wake:
		case <-time.After(c.cfg.Backoff):
		}
	}
}

// askTimeout bounds the wait for a partition actor's answer: one that
// stopped never answers.
const askTimeout = 10 * time.Second

func ask[T any](c *Cleaner, pid *actor.PID, mk func(chan<- T) any) (T, bool) {
	ch := make(chan T, 1)
	c.send(pid, mk(ch))
	select {
	case v := <-ch:
		return v, true
	case <-time.After(askTimeout):
		c.log.Warn("log cleaner: a partition did not answer; skipping it this round", "partition", pid.String(), "waited", askTimeout)
		var zero T
		return zero, false
	case <-c.stopped():
		var zero T
		return zero, false
	}
}

func (c *Cleaner) stopped() <-chan struct{} {
	if c.stop == nil {
		return nil // RunOnce outside Start: never stopped
	}
	return c.stop
}

// candidate is a log a round may clean.
type candidate struct {
	pid   *actor.PID
	tp    segment.TopicPartition
	ratio float64
	must  bool
}

// RunOnce makes one round: it cleans the dirtiest log, if any needs it,
// and reports whether it cleaned one. Safe from several goroutines (the
// workers); tests call it directly.
func (c *Cleaner) RunOnce() bool {
	routes := c.routes()
	if routes == nil {
		return false
	}
	now := c.now()
	var best *candidate
	for _, t := range routes.Topics {
		for i, pid := range t.Partitions {
			if pid == nil {
				continue
			}
			st, ok := ask(c, pid, func(r chan<- partition.CleanState) any { return &partition.CleanQuery{Now: now, Reply: r} })
			if ok && st.Err != nil {
				c.log.Warn("log cleaner cannot size a log", "topic", t.Name, "partition", i, "err", st.Err)
				continue
			}
			if !ok || !st.Compact || st.DirtyBytes == 0 {
				continue
			}
			c.log.Debug("log cleaner: a compacted log", "topic", st.Topic, "partition", st.Partition,
				"clean_bytes", st.CleanBytes, "dirty_bytes", st.DirtyBytes, "must_clean", st.MustClean, "err", st.Err)
			cand := &candidate{pid: pid, tp: segment.TopicPartition{Topic: st.Topic, Partition: st.Partition},
				ratio: float64(st.DirtyBytes) / float64(st.CleanBytes+st.DirtyBytes), must: st.MustClean}
			if !cand.must && cand.ratio < st.MinRatio {
				continue
			}
			if c.isBusy(cand.tp) {
				continue
			}
			if best == nil || cand.must && !best.must || cand.must == best.must && cand.ratio > best.ratio {
				best = cand
			}
		}
	}
	if best == nil || !c.claim(best.tp) {
		return false
	}
	defer c.release(best.tp)
	return c.clean(best, now)
}

func (c *Cleaner) isBusy(tp segment.TopicPartition) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.busy[tp]
}

func (c *Cleaner) claim(tp segment.TopicPartition) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy[tp] {
		return false
	}
	c.busy[tp] = true
	return true
}

func (c *Cleaner) release(tp segment.TopicPartition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.busy, tp)
}

// clean runs one cleaning of cand's log.
func (c *Cleaner) clean(cand *candidate, now time.Time) bool {
	start := time.Now()
	attrs := []any{"topic", cand.tp.Topic, "partition", cand.tp.Partition}
	prep, ok := ask(c, cand.pid, func(r chan<- partition.CleanPrepared) any {
		return &partition.CleanPrepare{Now: now, MapBytes: c.cfg.DedupeBufferSize / int64(c.cfg.Threads),
			LoadFactor: c.cfg.LoadFactor, Throttle: c.thr.take, Stop: c.stopped(), Reply: r}
	})
	if !ok || prep.Job == nil {
		c.log.Debug("log cleaner: nothing to clean after all", append(attrs, "err", prep.Err)...)
		if prep.Err != nil {
			c.fail(attrs, prep.Err)
		}
		return false
	}
	if err := prep.Job.Run(); err != nil {
		if !errors.Is(err, segment.ErrCleanStopped) {
			c.fail(attrs, err)
		}
		// The actor's snapshot references go with CommitClean or here.
		prep.Job.Abort()
		return false
	}
	done, ok := ask(c, cand.pid, func(r chan<- partition.CleanCommitted) any {
		return &partition.CleanCommit{Job: prep.Job, Reply: r}
	})
	if !ok {
		return false
	}
	if done.Err != nil {
		if !errors.Is(done.Err, segment.ErrCleanStale) {
			c.fail(attrs, done.Err)
		}
		return false
	}
	st := done.Stats
	c.stats.Cleanings.Add(1)
	c.stats.BytesRead.Add(st.BytesRead)
	c.stats.BytesWritten.Add(st.BytesWritten)
	took := time.Since(start)
	mbps := 0.0
	if s := took.Seconds(); s > 0 {
		mbps = float64(st.BytesRead) / s / (1 << 20)
	}
	c.log.Info("log cleaned", append(attrs, "dirty_ratio", math.Round(cand.ratio*1000)/1000,
		"segments", st.Segments, "into", st.Groups, "bytes_read", st.BytesRead, "bytes_written", st.BytesWritten,
		"records_read", st.RecordsRead, "records_kept", st.RecordsKept, "tombstones_removed", st.TombstonesCut,
		"aborted_removed", st.AbortedCut, "markers_removed", st.MarkersCut, "cleaned_to", st.EndOffset,
		"map_full", st.MapFull, "took", took.Round(time.Millisecond), "mb_per_s", math.Round(mbps*10)/10)...)
	return true
}

func (c *Cleaner) fail(attrs []any, err error) {
	c.stats.Failures.Add(1)
	c.log.Warn("log cleaning failed; the log is tried again after the backoff", append(attrs, "err", err)...)
}
