package segment

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/samsa-io/samsa/segment/vfs"
)

// syncOp is one fsync the flusher owes: a file (h) or a directory.
type syncOp struct {
	h    *handle // file to fsync (the flusher holds a reference), or nil
	dir  string  // directory to fsync when h is nil
	upto int64   // offsets below upto are durable once this op and all before it are done
}

type waiter struct {
	offset int64
	fn     func(error)
}

// flusher is a log's group commit. The log's goroutine records what it
// wrote (wrote, rolled); a worker of the directory's flush pool runs one
// flush at a time that fsyncs everything recorded so far and then calls
// back every waiter it made durable. It is the part of a Log that is safe
// for concurrent use.
type flusher struct {
	fs    vfs.FS
	clock Clock
	pool  *flushPool

	flushMu sync.Mutex // one flush (or truncation) at a time

	mu       sync.Mutex
	policy   FlushPolicy
	interval time.Duration
	durable  int64 // every offset below is fsynced
	pending  []syncOp
	waiters  []waiter
	err      error       // sticky: the log failed
	failed   atomic.Bool // err != nil, readable without mu (Append checks it every time)
	queued   bool
	timer    Timer
	closed   bool

	appends      int64         // appends recorded (FlushNever appends are not: they never wait)
	lastAcked    int64         // waiters the last flush acknowledged
	appendsAtAck int64         // appends recorded when it did
	gatherMax    time.Duration // longest wait for acknowledged appenders to return
	gatherCh     chan struct{} // closed to end a gather in progress
	gatherTarget int64         // appends that end it
	urgent       int           // callers waiting for flushMu who must not wait for a gather

	// onRolled runs after a flush that made a rolled segment durable,
	// still under flushMu (so a Flush that returns has seen it done):
	// the directory writes its checkpoints. Set before the log is used.
	onRolled func()
	// onFlush hears each flush that fsynced something (Options.OnFlush).
	onFlush func(took time.Duration, acknowledged int)
}

func newFlusher(fsys vfs.FS, clock Clock, pool *flushPool, cfg Config, durable int64, gatherMax time.Duration) *flusher {
	return &flusher{fs: fsys, clock: clock, pool: pool, policy: cfg.FlushPolicy,
		interval: time.Duration(cfg.FlushIntervalMs) * time.Millisecond, durable: durable, gatherMax: gatherMax}
}

// failure returns the sticky error, if any.
func (f *flusher) failure() error {
	if !f.failed.Load() {
		return nil // once set, failed never goes back; err is read under mu
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *flusher) durableOffset() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.durable
}

// addLocked records that h must be fsynced for offsets below upto.
func (f *flusher) addLocked(h *handle, upto int64) {
	for i := len(f.pending) - 1; i >= 0; i-- {
		if f.pending[i].h == h {
			f.pending[i].upto = max(f.pending[i].upto, upto)
			return
		}
	}
	h.acquire()
	f.pending = append(f.pending, syncOp{h: h, upto: upto})
}

// wrote records an append to h ending at offset upto and schedules a
// flush according to the policy. The log does not call it under
// FlushNever (it knows its policy: SetConfig runs on its goroutine): the
// data is fsynced when its segment rolls or the log closes, and the
// append costs no lock.
func (f *flusher) wrote(h *handle, upto int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.appends++
	if f.gatherCh != nil && f.appends >= f.gatherTarget {
		f.releaseGatherLocked()
	}
	switch f.policy {
	case FlushNever:
		return
	case FlushGroup:
		f.addLocked(h, upto)
		f.enqueueLocked()
	case FlushInterval:
		f.addLocked(h, upto)
		if f.timer == nil && !f.queued && !f.closed {
			f.timer = f.clock.AfterFunc(f.interval, f.timerFired)
		}
	case FlushAlways:
		f.addLocked(h, upto) // the appender flushes right away
	}
}

func (f *flusher) timerFired() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.timer = nil
	f.enqueueLocked()
}

// rolled records that segment file h is complete up to upto and that dir
// gained new files; both are fsynced soon whatever the policy, so the
// recovery point can move past the closed segment.
func (f *flusher) rolled(h *handle, upto int64, dir string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h != nil {
		f.addLocked(h, upto)
	}
	f.pending = append(f.pending, syncOp{dir: dir, upto: upto})
	f.enqueueLocked()
}

func (f *flusher) enqueueLocked() {
	if f.queued || f.closed || f.pool == nil {
		return
	}
	f.queued = true
	f.pool.push(f)
}

// flush fsyncs everything recorded so far and calls back the waiters it
// made durable. A failed fsync fails the log for good: fsync is not
// retried, because the kernel may have dropped the dirty pages.
func (f *flusher) flush() error { return f.flushAfter(false) }

// flushAfter is flush; with gather set (a background group commit) it
// first lets the appenders the previous flush woke append (see gather).
func (f *flusher) flushAfter(gather bool) error {
	if gather {
		f.flushMu.Lock()
	} else {
		f.lockFlush()
	}
	defer f.flushMu.Unlock()
	if gather {
		f.gather()
	}
	f.mu.Lock()
	f.queued = false
	if f.timer != nil {
		f.timer.Stop()
		f.timer = nil
	}
	ops := f.pending
	f.pending = nil
	failed := f.err
	f.mu.Unlock()
	if failed != nil {
		releaseOps(ops)
		return failed
	}
	start := time.Now()
	upto, err := f.runOps(ops)
	took := time.Since(start)
	acked, err := f.finishCounting(upto, err)
	if f.onFlush != nil && len(ops) > 0 {
		f.onFlush(took, acked)
	}
	if err == nil && f.onRolled != nil && slices.ContainsFunc(ops, isRollOp) {
		f.onRolled()
	}
	return err
}

// isRollOp reports whether op is the directory fsync a roll records.
func isRollOp(op syncOp) bool { return op.h == nil }

// gather waits, before a background flush, until the appenders that the
// previous flush acknowledged have appended again (as many appends since
// then as waiters it acknowledged), so producers that wait for their
// acknowledgement share the next fsync instead of alternating between
// two. It waits at most gatherMax (a timer from the injected clock), and
// is cut short by an explicit flush, a truncation or close. A lone
// producer never waits: its own append is the one expected.
func (f *flusher) gather() {
	f.mu.Lock()
	target := f.appendsAtAck + f.lastAcked
	if f.policy != FlushGroup || f.lastAcked <= 1 || f.gatherMax <= 0 || f.closed || f.urgent > 0 || f.appends >= target {
		f.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	f.gatherCh, f.gatherTarget = ch, target
	t := f.clock.AfterFunc(f.gatherMax, func() {
		f.mu.Lock()
		f.releaseGatherLocked()
		f.mu.Unlock()
	})
	f.mu.Unlock()
	<-ch
	t.Stop()
}

// releaseGatherLocked ends a gather in progress.
func (f *flusher) releaseGatherLocked() {
	if f.gatherCh != nil {
		close(f.gatherCh)
		f.gatherCh = nil
	}
}

// lockFlush takes flushMu for a flush that must not wait for a gather.
func (f *flusher) lockFlush() {
	f.mu.Lock()
	f.urgent++
	f.releaseGatherLocked()
	f.mu.Unlock()
	f.flushMu.Lock()
	f.mu.Lock()
	f.urgent--
	f.mu.Unlock()
}

// runOps performs ops in order, releases their handles, and returns how
// far they made the log durable.
func (f *flusher) runOps(ops []syncOp) (int64, error) {
	upto := int64(-1)
	var err error
	for _, op := range ops {
		if err == nil {
			if op.h != nil {
				err = op.h.f.Sync()
			} else {
				err = f.fs.SyncDir(op.dir)
			}
			upto = max(upto, op.upto)
		}
		if op.h != nil {
			op.h.release()
		}
	}
	return upto, err
}

func releaseOps(ops []syncOp) {
	for _, op := range ops {
		if op.h != nil {
			op.h.release()
		}
	}
}

// finishCounting is finish for a flush that advances the durable offset,
// also returning how many waiters it acknowledged.
func (f *flusher) finishCounting(upto int64, err error) (int, error) {
	var acked int
	err = f.finishWith(upto, err, -1, &acked)
	return acked, err
}

// finish publishes the outcome of a flush. With setDurable >= 0 the
// durable offset is set to it (after a truncation) instead of advanced.
func (f *flusher) finish(upto int64, err error, setDurable int64) error {
	return f.finishWith(upto, err, setDurable, nil)
}

// finishWith is finish; acked, if set, receives how many waiters it
// acknowledged.
func (f *flusher) finishWith(upto int64, err error, setDurable int64, acked *int) error {
	var fire []waiter
	f.mu.Lock()
	if err != nil {
		if f.err == nil {
			f.err = failedError(err)
			f.failed.Store(true)
		}
		err = f.err
		fire, f.waiters = f.waiters, nil
	} else {
		if setDurable >= 0 {
			f.durable = setDurable
		} else if upto > f.durable {
			f.durable = upto
		}
		kept := f.waiters[:0]
		for _, w := range f.waiters {
			if w.offset < f.durable {
				fire = append(fire, w)
			} else {
				kept = append(kept, w)
			}
		}
		clear(f.waiters[len(kept):])
		f.waiters = kept
		if len(fire) > 0 {
			f.lastAcked, f.appendsAtAck = int64(len(fire)), f.appends
		}
	}
	f.mu.Unlock()
	if acked != nil && err == nil {
		*acked = len(fire)
	}
	for _, w := range fire {
		w.fn(err)
	}
	return err
}

// whenDurable calls fn once offset is durable (see Log.WhenDurable).
func (f *flusher) whenDurable(offset int64, fn func(error)) {
	f.mu.Lock()
	switch {
	case f.err != nil:
		err := f.err
		f.mu.Unlock()
		fn(err)
	case offset < f.durable || f.policy.acksWithoutSync():
		f.mu.Unlock()
		fn(nil)
	case f.closed:
		f.mu.Unlock()
		fn(ErrClosed)
	default:
		f.waiters = append(f.waiters, waiter{offset, fn})
		f.mu.Unlock()
	}
}

// setPolicy changes the policy of a live log. Waiters are acknowledged at
// once when the new policy does not wait for fsync.
func (f *flusher) setPolicy(p FlushPolicy, interval time.Duration) {
	var fire []waiter
	f.mu.Lock()
	f.policy, f.interval = p, interval
	if p.acksWithoutSync() {
		fire, f.waiters = f.waiters, nil
	}
	if p != FlushGroup {
		// Appends are not counted under FlushNever: forget the last
		// acknowledgement rather than wait for returns never counted.
		f.lastAcked = 0
		f.releaseGatherLocked()
	}
	if len(f.pending) > 0 && p != FlushNever {
		f.enqueueLocked()
	}
	f.mu.Unlock()
	for _, w := range fire {
		w.fn(nil)
	}
}

// dropWaitersFrom fails the waiters for offsets at or after end, which a
// truncation removed before they became durable.
func (f *flusher) dropWaitersFrom(end int64) {
	var fire []waiter
	f.mu.Lock()
	kept := f.waiters[:0]
	for _, w := range f.waiters {
		if w.offset >= end {
			fire = append(fire, w)
		} else {
			kept = append(kept, w)
		}
	}
	clear(f.waiters[len(kept):])
	f.waiters = kept
	f.mu.Unlock()
	for _, w := range fire {
		w.fn(ErrTruncated)
	}
}

// takePending removes and returns the recorded ops (the caller holds
// flushMu and runs them itself).
func (f *flusher) takePending() []syncOp {
	f.mu.Lock()
	defer f.mu.Unlock()
	ops := f.pending
	f.pending = nil
	return ops
}

// close stops scheduling; waiters still pending get ErrClosed.
func (f *flusher) close() {
	f.mu.Lock()
	f.closed = true
	f.releaseGatherLocked()
	if f.timer != nil {
		f.timer.Stop()
		f.timer = nil
	}
	ops := f.pending
	f.pending = nil
	fire := f.waiters
	f.waiters = nil
	f.mu.Unlock()
	releaseOps(ops)
	for _, w := range fire {
		w.fn(ErrClosed)
	}
}

// flushPool runs the flushes of every log of a directory on a few
// goroutines, so idle partitions cost no goroutine.
type flushPool struct {
	mu     sync.Mutex
	cond   sync.Cond
	queue  []*flusher
	closed bool
	wg     sync.WaitGroup
}

func newFlushPool(workers int) *flushPool {
	p := &flushPool{}
	p.cond.L = &p.mu
	for range workers {
		p.wg.Add(1)
		go p.work()
	}
	return p
}

func (p *flushPool) push(f *flusher) {
	p.mu.Lock()
	p.queue = append(p.queue, f)
	p.mu.Unlock()
	p.cond.Signal()
}

func (p *flushPool) work() {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		for len(p.queue) == 0 && !p.closed {
			p.cond.Wait()
		}
		if len(p.queue) == 0 {
			p.mu.Unlock()
			return
		}
		f := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		p.mu.Unlock()
		// A failure is sticky in f and reported to its waiters; this
		// worker has no caller to return it to.
		_ = f.flushAfter(true)
	}
}

// close drains the queue and stops the workers.
func (p *flushPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cond.Broadcast()
	p.wg.Wait()
}
