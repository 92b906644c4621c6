package segment

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/samsa-io/samsa/segment/vfs"
)

// BenchmarkAppend measures appends to a real log (a temp dir) side by side
// with a raw baseline: plain sequential writes of the same batches to one
// file through vfs.OS, fsynced on the matching schedule. The two
// alternate in chunks inside each sub-benchmark so both see the same disk
// and page-cache state; the figures are the custom metrics:
//
//	log-MB/s, log-batches/s   the log under the policy
//	raw-MB/s, raw-batches/s   the baseline
//	log/raw                   the ratio that matters
//
// (ns/op covers one log append plus one raw write.) Run:
//
//	go test -run '^$' -bench 'Append' -benchtime 2s ./segment/
//
// Pairs: never ~ no fsync; interval ~ fsync every 100 ms (flush.ms=100);
// always ~ fsync after every write; group with 1 and 8 appenders, each
// waiting for durability before its next append, and 8 appenders each
// with up to 128 KiB not yet durable ~ fsync every 1 MiB.
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10} {
		batch := makeBatch(1, size-70, 1, 1)
		name := fmt.Sprintf("size=%dKiB", size>>10)
		cases := []struct {
			name      string
			policy    FlushPolicy
			appenders int
			window    int // appends each appender may have not yet durable
			raw       rawSchedule
		}{
			{"never", FlushNever, 1, 1, rawNoSync},
			{"interval", FlushInterval, 1, 1, rawTimed},
			{"always", FlushAlways, 1, 1, rawEveryWrite},
			{"group-1appender", FlushGroup, 1, 1, rawEveryMiB},
			{"group-8appenders", FlushGroup, 8, 1, rawEveryMiB},
			// Pipelined: each appender keeps up to 128 KiB of appends
			// waiting for durability, as a producer keeps several
			// requests in flight; the eight together never have more than
			// the 1 MiB the raw baseline leaves unsynced.
			{"group-8appenders-pipelined", FlushGroup, 8, max(1, (128<<10)/size), rawEveryMiB},
			// Controls: a second raw writer in place of the log shows how
			// far this machine's noise alone moves the ratio, without
			// fsyncs and with interval's timed ones.
			{"control-raw-vs-raw", -1, 1, 1, rawNoSync},
			{"control-raw-vs-raw-interval", -1, 1, 1, rawTimed},
		}
		for _, c := range cases {
			b.Run(name+"/"+c.name, func(b *testing.B) {
				// fsyncs are counted for the group cases only: the
				// counting wrapper is an extra call on every write that
				// the raw side does not pay.
				fsys := &syncCountingFS{FS: vfs.OS}
				fs := vfs.OS
				if c.policy == FlushGroup {
					fs = fsys
				}
				d, err := OpenDir(b.TempDir(), Options{FS: fs, Logger: quietLogger})
				if err != nil {
					b.Fatal(err)
				}
				defer d.Close()
				policy := c.policy
				if policy < 0 { // control: the log stays idle
					policy = FlushNever
				}
				l, _, err := d.Open("bench", 0, Config{FlushPolicy: policy, FlushIntervalMs: benchIntervalMs})
				if err != nil {
					b.Fatal(err)
				}
				raw := newRawWriter(b, c.raw)
				defer raw.close()
				logSide := func(n int) { appendN(b, l, batch, n, c.appenders, c.window) }
				if c.policy < 0 {
					twin := newRawWriter(b, c.raw)
					defer twin.close()
					logSide = func(n int) { twin.writeN(b, batch, n) }
				}
				syncsBefore := fsys.syncs.Load()
				// Alternate every MiB; the group cases in longer stretches so
				// that starting the appenders does not dominate.
				chunk := max(1, (1<<20)/size)
				switch {
				case c.appenders > 1:
					chunk = max(1, (16<<20)/size)
				case c.raw == rawTimed:
					// Each side's timed fsyncs slow whichever side is
					// writing meanwhile: short turns share that out evenly.
					chunk = max(1, (64<<10)/size)
				}
				var logTime, rawTime time.Duration
				b.ResetTimer()
				for done := 0; done < b.N; {
					n := min(chunk, b.N-done)
					// Alternate which goes first, so neither always meets
					// the writeback the other left behind.
					if (done/chunk)%2 == 0 {
						logTime += timed(func() { logSide(n) })
						rawTime += timed(func() { raw.writeN(b, batch, n) })
					} else {
						rawTime += timed(func() { raw.writeN(b, batch, n) })
						logTime += timed(func() { logSide(n) })
					}
					done += n
				}
				b.StopTimer()
				mb := float64(b.N) * float64(len(batch)) / 1e6
				b.ReportMetric(mb/logTime.Seconds(), "log-MB/s")
				b.ReportMetric(mb/rawTime.Seconds(), "raw-MB/s")
				b.ReportMetric(float64(b.N)/logTime.Seconds(), "log-batches/s")
				b.ReportMetric(float64(b.N)/rawTime.Seconds(), "raw-batches/s")
				b.ReportMetric(rawTime.Seconds()/logTime.Seconds(), "log/raw")
				if c.policy == FlushGroup {
					b.ReportMetric(float64(b.N)/float64(max(1, fsys.syncs.Load()-syncsBefore)), "batches/fsync")
				}
			})
		}
	}
}

const benchIntervalMs = 100 // flush.ms for the interval policy and its raw twin

// appendN appends n times from appenders producers. With the group
// policy each producer waits until its append is durable before it has
// more than window appends outstanding, as a producer with acks waits
// once its requests in flight reach the limit. Several producers reach
// the log as
// they do in the broker: through one goroutine that owns it (the
// partition actor), which takes their requests from a channel, appends
// and registers the acknowledgement with WhenDurable. A producer that is
// acknowledged sends its next request without waiting for the actor, so
// requests queue up and the actor appends them back to back.
func appendN(b *testing.B, l *Log, batch []byte, n, appenders, window int) {
	if l.Config().FlushPolicy != FlushGroup {
		for range n {
			if _, err := l.Append(batch, 0, 0); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	if appenders == 1 && window == 1 {
		// The producer is the owner: no hand-off to model.
		done := make(chan error, 1)
		for range n {
			r, err := l.Append(batch, 0, 0)
			if err != nil {
				b.Fatal(err)
			}
			l.WhenDurable(r.LastOffset, func(err error) { done <- err })
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	type request struct {
		batch []byte // each producer's own buffer: Append rewrites its header
		done  chan error
	}
	// The actor appends one request at a time, so a producer's requests
	// in flight can share its buffer: each is written before the next
	// header rewrite.
	reqs := make(chan request, appenders)
	actorDone := make(chan struct{})
	go func() { // the partition actor
		defer close(actorDone)
		for r := range reqs {
			res, err := l.Append(r.batch, 0, 0)
			if err != nil {
				r.done <- err
				continue
			}
			l.WhenDurable(res.LastOffset, func(err error) { r.done <- err })
		}
	}()
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	for range appenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := request{batch: append([]byte(nil), batch...), done: make(chan error, window)}
			inFlight := 0
			ack := func() bool {
				inFlight--
				if err := <-r.done; err != nil {
					b.Error(err)
					return false
				}
				return true
			}
			for left.Add(-1) >= 0 {
				if inFlight == window && !ack() {
					return
				}
				reqs <- r
				inFlight++
			}
			for inFlight > 0 {
				if !ack() {
					return
				}
			}
		}()
	}
	wg.Wait()
	close(reqs)
	<-actorDone
}

type rawSchedule int

const (
	rawNoSync     rawSchedule = iota
	rawTimed                  // fsync every benchIntervalMs from a ticker
	rawEveryWrite             // fsync after every write
	rawEveryMiB               // fsync after every MiB written
)

// rawWriter is the baseline: sequential positional writes to one file.
type rawWriter struct {
	f         vfs.File
	sched     rawSchedule
	pos, dirt int64
	stop      chan struct{}
	wg        sync.WaitGroup
}

func newRawWriter(b *testing.B, sched rawSchedule) *rawWriter {
	f, err := vfs.OS.Create(b.TempDir() + "/raw")
	if err != nil {
		b.Fatal(err)
	}
	w := &rawWriter{f: f, sched: sched, stop: make(chan struct{})}
	if sched == rawTimed {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			t := time.NewTicker(benchIntervalMs * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-w.stop:
					return
				case <-t.C:
					// Error, not Fatal: this is not the benchmark's
					// goroutine. close waits for it before b ends.
					if err := f.Sync(); err != nil {
						b.Error(err)
						return
					}
				}
			}
		}()
	}
	return w
}

func (w *rawWriter) writeN(b *testing.B, batch []byte, n int) {
	for range n {
		if _, err := w.f.WriteAt(batch, w.pos); err != nil {
			b.Fatal(err)
		}
		w.pos += int64(len(batch))
		w.dirt += int64(len(batch))
		if w.sched == rawEveryWrite || (w.sched == rawEveryMiB && w.dirt >= 1<<20) {
			if err := w.f.Sync(); err != nil {
				b.Fatal(err)
			}
			w.dirt = 0
		}
	}
}

func (w *rawWriter) close() {
	close(w.stop)
	w.wg.Wait()
	w.f.Close()
}

func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

// syncCountingFS counts fsyncs of files opened through it.
type syncCountingFS struct {
	vfs.FS
	syncs atomic.Int64
}

type syncCountingFile struct {
	vfs.File
	n *atomic.Int64
}

func (f syncCountingFile) Sync() error { f.n.Add(1); return f.File.Sync() }

// Reserve passes reservations through, so the group cases reserve space
// as the others do.
func (f syncCountingFile) Reserve(off, n int64) error {
	if r, ok := f.File.(vfs.SpaceReserver); ok {
		return r.Reserve(off, n)
	}
	return errors.ErrUnsupported
}

func (c *syncCountingFS) Create(name string) (vfs.File, error) {
	f, err := c.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return syncCountingFile{f, &c.syncs}, nil
}

func (c *syncCountingFS) OpenReadWrite(name string) (vfs.File, error) {
	f, err := c.FS.OpenReadWrite(name)
	if err != nil {
		return nil, err
	}
	return syncCountingFile{f, &c.syncs}, nil
}
