package fetch

import (
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/segment/segmenttest"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fakePartition runs a partition's fetch side (partition.Local) on its own goroutine,
// like its actor would, without an actor system.
type fakePartition struct {
	l    *partition.Local
	own  *partition.View // the view the partition keeps its waiters in
	view *partition.View // the partition's published view, once withViews ran
	mail chan func()
	wg   sync.WaitGroup
}

func newFakePartition(t *testing.T, index int32) *fakePartition {
	view := partition.NewView()
	fp := &fakePartition{l: partition.NewLocal(segmenttest.Log(t, index), view, index, discardLogger()), own: view,
		mail: make(chan func(), 64)}
	fp.wg.Add(1)
	go func() {
		defer fp.wg.Done()
		for fn := range fp.mail {
			fn()
		}
	}()
	t.Cleanup(func() {
		close(fp.mail)
		fp.wg.Wait()
	})
	return fp
}

// do runs fn on the partition's goroutine and waits for it.
func (fp *fakePartition) do(fn func(l *partition.Local)) {
	done := make(chan struct{})
	fp.mail <- func() { fn(fp.l); close(done) }
	<-done
}

// produce appends count batches and advances the high watermark to the end.
func (fp *fakePartition) produce(t *testing.T, count, n, valueSize int) {
	fp.do(func(l *partition.Local) {
		segmenttest.AppendBatches(t, l.Log(), count, n, valueSize)
		l.CatchUp()
	})
}

// fetchHarness runs fetches against fake partitions through the real plan
// and answer code, decoding the answers.
type fetchHarness struct {
	t     *testing.T
	svc   *Service
	parts []*fakePartition
	reads []atomic.Int32 // reads asked of each partition
	mu    sync.Mutex
	read  *sync.Cond // broadcast after each read is asked
	guard time.Duration
}

func newFetchHarness(t *testing.T, partitions int) *fetchHarness {
	h := &fetchHarness{t: t, svc: &Service{env: &env.Env{Log: discardLogger()}, sessions: newFetchSessions(10, 1)}, guard: time.Minute,
		reads: make([]atomic.Int32, partitions)}
	for i := range partitions {
		h.parts = append(h.parts, newFakePartition(t, int32(i)))
	}
	h.read = sync.NewCond(&h.mu)
	return h
}

// waitReads waits until partition part has been asked for n reads.
func (h *fetchHarness) waitReads(part, n int32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for h.reads[part].Load() < n {
		h.read.Wait()
	}
}

// withViews gives every partition a published view, as spawned partition
// actors have, so fetches answer partitions at their high watermark
// without reading them.
func (h *fetchHarness) withViews() *fetchHarness {
	for _, fp := range h.parts {
		fp.do(func(l *partition.Local) { l.Publish() })
		fp.view = fp.own
	}
	return h
}

// fetched is a decoded answer plus what the harness saw.
type fetched struct {
	resp *kmsg.FetchResponse
	op   *fetchOp
	done chan struct{} // closed when the response's Done ran
}

// start begins a fetch of req (topic "t"); the answer arrives on the
// returned channel. Unknown partitions are planned as errors, as
// handleFetch does.
func (h *fetchHarness) start(req *kmsg.FetchRequest) (*fetchOp, <-chan fetched) {
	fc, code := h.svc.sessions.begin(req, time.Now().UnixMilli())
	if code != 0 {
		h.t.Fatalf("session: %v", code)
	}
	out := make(chan fetched, 1)
	wreq := &wire.Request{Header: wire.RequestHeader{APIKey: 1, APIVersion: req.Version, CorrelationID: 9}, Body: req}
	o := &fetchOp{
		slots: make([]partition.FetchSlot, len(fc.targets)), minBytes: int64(req.MinBytes), maxBytes: int64(req.MaxBytes),
		canWait: req.MaxWaitMillis > 0 && req.MinBytes > 0, guard: h.guard,
	}
	o.send = func(f *partition.FetchSlot) {
		fp := h.parts[fc.targets[f.Slot].key.partition]
		h.reads[fc.targets[f.Slot].key.partition].Add(1)
		h.mu.Lock()
		h.read.Broadcast()
		h.mu.Unlock()
		fp.mail <- func() { fp.l.ServeFetch(f) }
	}
	wreq.Reply = func(r *wire.Response) {
		raw, err := r.AppendTo(nil)
		if err != nil {
			h.t.Error(err)
		}
		done := make(chan struct{})
		if r.Done != nil {
			r.Done()
		}
		close(done)
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = req.Version
		body := raw[8:]
		if req.Version >= 12 {
			body = body[1:]
		}
		if err := resp.ReadFrom(body); err != nil {
			h.t.Errorf("decode: %v", err)
		}
		out <- fetched{resp: resp, op: o, done: done}
	}
	o.answer = func(o *fetchOp, abandoned bool) { answerFetch(h.svc, wreq, req, &fc, o, abandoned) }
	for i := range fc.targets {
		s := &o.slots[i]
		s.Op, s.Slot = o, i
		if part := int(fc.targets[i].key.partition); part < len(h.parts) {
			s.View = h.parts[part].view
		}
		s.Offset, s.LeaderEpoch = fc.targets[i].fetchOffset, fc.targets[i].currentLeaderEpoch
		s.MaxBytes = min(int64(fc.targets[i].maxBytes), o.maxBytes)
		if int(fc.targets[i].key.partition) >= len(h.parts) {
			errorOutcome(s, kerr.UnknownTopicOrPartition)
			o.canWait = false
		}
	}
	o.start(time.Duration(req.MaxWaitMillis) * time.Millisecond)
	return o, out
}

func plainFetch(minBytes, maxWaitMs, maxBytes, partMax int32, offsets ...int64) *kmsg.FetchRequest {
	r := kmsg.NewPtrFetchRequest()
	r.Version, r.MinBytes, r.MaxWaitMillis, r.MaxBytes, r.SessionEpoch = 12, minBytes, maxWaitMs, maxBytes, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "t"
	for p, off := range offsets {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = int32(p), off, partMax
		rt.Partitions = append(rt.Partitions, rp)
	}
	r.Topics = append(r.Topics, rt)
	return r
}

// recordBytes is the record data per partition of a response.
func recordBytes(r *kmsg.FetchResponse) map[int32]int {
	m := map[int32]int{}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			m[p.Partition] = len(p.RecordBatches)
		}
	}
	return m
}

func allReleased(o *fetchOp) bool {
	for i := range o.slots {
		if o.slots[i].Res != nil {
			return false
		}
	}
	return true
}

func TestFetchMaxBytesAcrossPartitions(t *testing.T) {
	h := newFetchHarness(t, 3)
	var size int64
	for _, fp := range h.parts {
		fp.produce(t, 1, 10, 100)
	}
	h.parts[0].do(func(l *partition.Local) { size = l.Log().Size() })

	// Room for two partitions' data: the third is answered without records.
	_, ch := h.start(plainFetch(1, 0, int32(2*size+size/2), 1<<20, 0, 0, 0))
	got := <-ch
	<-got.done
	rb := recordBytes(got.resp)
	if rb[0] != int(size) || rb[1] != int(size) || rb[2] != 0 || len(got.resp.Topics[0].Partitions) != 3 {
		t.Fatalf("bytes per partition %v, want %d, %d, 0 (and all 3 answered)", rb, size, size)
	}
	for _, p := range got.resp.Topics[0].Partitions {
		if p.HighWatermark != 10 || p.LastStableOffset != 10 || p.LogStartOffset != 0 || p.ErrorCode != 0 {
			t.Fatalf("partition %+v", p)
		}
	}
	if !allReleased(got.op) {
		t.Fatal("reads still held after Done")
	}

	// A budget smaller than one batch: the first partition with data still
	// gets its first batch, the others nothing.
	_, ch = h.start(plainFetch(1, 0, 1, 1<<20, 10, 0, 0))
	got = <-ch
	<-got.done
	if rb := recordBytes(got.resp); rb[0] != 0 || rb[1] != int(size) || rb[2] != 0 {
		t.Fatalf("tiny budget: %v", rb)
	}

	// Unknown partitions are answered with an error at once, with the rest.
	_, ch = h.start(plainFetch(1, 10_000, 1<<20, 1<<20, 0, 0, 0, 0))
	got = <-ch
	ps := got.resp.Topics[0].Partitions
	if len(ps) != 4 || ps[3].ErrorCode != kerr.UnknownTopicOrPartition.Int16() || ps[3].HighWatermark != -1 || len(ps[0].RecordBatches) == 0 {
		t.Fatalf("unknown partition answer: %+v", ps)
	}
}

func TestFetchWaitsForData(t *testing.T) {
	h := newFetchHarness(t, 2)
	o, ch := h.start(plainFetch(1, 60_000, 1<<20, 1<<20, 0, 0))
	// Both partitions parked a waiter.
	for _, fp := range h.parts {
		fp.do(func(*partition.Local) {
			if n := waiterCount(fp); n != 1 {
				t.Errorf("partition %v has %d waiters", fp, n)
			}
		})
	}
	select {
	case <-ch:
		t.Fatal("answered with no data and a minute to wait")
	default:
	}
	began := time.Now()
	h.parts[1].produce(t, 1, 5, 50)
	got := <-ch
	t.Logf("woken %v after the append", time.Since(began))
	if rb := recordBytes(got.resp); rb[1] == 0 || rb[0] != 0 {
		t.Fatalf("bytes %v", rb)
	}
	if !o.answered.Load() {
		t.Fatal("not answered")
	}
	// The waiters are dropped on the next touch.
	for _, fp := range h.parts {
		fp.do(func(*partition.Local) {
			if n := fp.own.Waiting(); n != 0 {
				t.Errorf("partition %v keeps %d waiters", fp, n)
			}
		})
	}
}

func TestFetchMinBytesAccumulates(t *testing.T) {
	h := newFetchHarness(t, 1)
	h.parts[0].produce(t, 1, 10, 100) // ~1.1 KB, below min_bytes
	var one int64
	h.parts[0].do(func(l *partition.Local) { one = l.Log().Size() })
	o, ch := h.start(plainFetch(int32(3*one), 60_000, 1<<20, 1<<20, 0))
	waitParked(t, h.parts[0])
	round := o.round.Load()
	h.parts[0].produce(t, 1, 10, 100) // 2 batches: still short
	if o.round.Load() != round {
		t.Fatal("read again before min_bytes could be met")
	}
	h.parts[0].produce(t, 1, 10, 100) // 3 batches: enough
	got := <-ch
	if rb := recordBytes(got.resp); rb[0] != int(3*one) {
		t.Fatalf("got %d bytes, want %d", rb[0], 3*one)
	}
}

// waiterCount is how many fetches are parked on fp (stale ones included
// until the next add or high watermark prunes them).
func waiterCount(fp *fakePartition) int { return fp.own.Parked() }

// waitParked waits until the fetch's read on fp has parked a waiter
// (the first round may still be in the mailbox).
func waitParked(t *testing.T, fp *fakePartition) {
	t.Helper()
	for range 1000 {
		n := 0
		fp.do(func(*partition.Local) { n = waiterCount(fp) })
		if n > 0 {
			return
		}
	}
	t.Fatal("the fetch never parked")
}

func TestFetchMaxWaitExpires(t *testing.T) {
	h := newFetchHarness(t, 1)
	const wait = 50 * time.Millisecond
	began := time.Now()
	_, ch := h.start(plainFetch(1, int32(wait/time.Millisecond), 1<<20, 1<<20, 0))
	got := <-ch
	if took := time.Since(began); took < wait {
		t.Fatalf("answered after %v, before max wait %v", took, wait)
	}
	p := got.resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || len(p.RecordBatches) != 0 || p.HighWatermark != 0 {
		t.Fatalf("timed out answer %+v", p)
	}
}

// A wake-up re-reads only the partition that got data; the others answer
// from their first read (no records, the high watermark then).
func TestFetchWakeReadsOnlyMovedPartitions(t *testing.T) {
	h := newFetchHarness(t, 3)
	h.parts[2].produce(t, 1, 2, 10) // data below the fetch offset: hw 2
	_, ch := h.start(plainFetch(1, 60_000, 1<<20, 1<<20, 0, 0, 2))
	for _, fp := range h.parts {
		waitParked(t, fp)
	}
	h.parts[1].produce(t, 1, 5, 50)
	got := <-ch
	if rb := recordBytes(got.resp); rb[1] == 0 || rb[0] != 0 || rb[2] != 0 {
		t.Fatalf("bytes %v", rb)
	}
	for p, want := range []int32{1, 2, 1} {
		if n := h.reads[p].Load(); n != want {
			t.Errorf("partition %d read %d times, want %d", p, n, want)
		}
	}
	for _, p := range got.resp.Topics[0].Partitions {
		if want := []int64{0, 5, 2}[p.Partition]; p.HighWatermark != want || p.ErrorCode != 0 {
			t.Errorf("partition %d: high watermark %d, error %d; want %d, 0", p.Partition, p.HighWatermark, p.ErrorCode, want)
		}
	}
}

// A partial round that comes back short of min_bytes (here partition 0's
// read is capped at one batch by partition_max_bytes, though more arrived)
// reads every partition again, so every one has a waiter, and the fetch
// still answers once the data is there. That round found one batch, so
// the next wake-up reads both partitions.
func TestFetchShortPartialRoundReadsAll(t *testing.T) {
	h := newFetchHarness(t, 2)
	var one int64
	h.parts[0].produce(t, 1, 10, 100)
	h.parts[0].do(func(l *partition.Local) { one = l.Log().Size() })
	// Fetch from the end of partition 0: min_bytes two batches, each read
	// at most one batch.
	o, ch := h.start(plainFetch(int32(2*one), 60_000, 1<<20, 1, 10, 0))
	for _, fp := range h.parts {
		waitParked(t, fp)
	}
	h.parts[0].produce(t, 2, 10, 100) // estimate: two batches; a read gets one
	h.waitReads(1, 2)
	if n := h.reads[1].Load(); n != 2 {
		t.Fatalf("partition 1 read %d times after the short partial round, want 2 (the full round)", n)
	}
	for _, fp := range h.parts {
		waitParked(t, fp)
	}
	select {
	case <-ch:
		t.Fatal("answered short of min_bytes")
	default:
	}
	h.parts[1].produce(t, 1, 10, 100) // one batch here and one readable on 0: enough
	got := <-ch
	if rb := recordBytes(got.resp); int64(rb[0]) != one || int64(rb[1]) != one {
		t.Fatalf("bytes %v, want one batch (%d bytes) from each", rb, one)
	}
	if n0, n1 := h.reads[0].Load(), h.reads[1].Load(); n0 != 4 || n1 != 3 {
		t.Fatalf("reads %d and %d, want 4 and 3 (first, partial, full, full)", n0, n1)
	}
	if !o.answered.Load() {
		t.Fatal("not answered")
	}
}

// Partitions at their high watermark are answered from their views, with
// the high watermark and log start offset a read would give, and only the
// partition with data is read.
func TestFetchAnswersPartitionsAtTheEndFromViews(t *testing.T) {
	h := newFetchHarness(t, 3).withViews()
	h.parts[1].produce(t, 1, 5, 50)
	h.parts[2].produce(t, 1, 2, 10)
	_, ch := h.start(plainFetch(1, 60_000, 1<<20, 1<<20, 0, 0, 2))
	got := <-ch
	if rb := recordBytes(got.resp); rb[1] == 0 || rb[0] != 0 || rb[2] != 0 {
		t.Fatalf("bytes %v", rb)
	}
	for p, want := range []int32{0, 1, 0} {
		if n := h.reads[p].Load(); n != want {
			t.Errorf("partition %d read %d times, want %d", p, n, want)
		}
	}
	for _, p := range got.resp.Topics[0].Partitions {
		if want := []int64{0, 5, 2}[p.Partition]; p.HighWatermark != want || p.LastStableOffset != want || p.LogStartOffset != 0 || p.ErrorCode != 0 {
			t.Errorf("partition %d: hw %d lso %d log start %d error %d; want hw and lso %d", p.Partition,
				p.HighWatermark, p.LastStableOffset, p.LogStartOffset, p.ErrorCode, want)
		}
	}
}

// A fetch with nothing to read parks in the partitions' views without a
// message to any actor; an append wakes it and only that partition is
// read.
func TestFetchParksInViewsWithoutReading(t *testing.T) {
	h := newFetchHarness(t, 2).withViews()
	o, ch := h.start(plainFetch(1, 60_000, 1<<20, 1<<20, 0, 0))
	for _, fp := range h.parts {
		if n := waiterCount(fp); n != 1 {
			t.Fatalf("%d waiters parked in a view, want 1", n)
		}
	}
	select {
	case <-ch:
		t.Fatal("answered with no data and a minute to wait")
	default:
	}
	h.parts[1].produce(t, 1, 5, 50)
	got := <-ch
	if rb := recordBytes(got.resp); rb[1] == 0 || rb[0] != 0 {
		t.Fatalf("bytes %v", rb)
	}
	if n0, n1 := h.reads[0].Load(), h.reads[1].Load(); n0 != 0 || n1 != 1 {
		t.Fatalf("reads %d and %d, want 0 and 1 (only the woken partition)", n0, n1)
	}
	if !o.answered.Load() {
		t.Fatal("not answered")
	}
}

// Short of a larger min_bytes, a woken fetch stays parked in the view and
// collects progress until it has enough.
func TestFetchViewWaiterAccumulates(t *testing.T) {
	h := newFetchHarness(t, 1).withViews()
	h.parts[0].produce(t, 1, 10, 100)
	var one int64
	h.parts[0].do(func(l *partition.Local) { one = l.Log().Size() })
	_, ch := h.start(plainFetch(int32(2*one), 60_000, 1<<20, 1<<20, 10))
	h.parts[0].produce(t, 1, 10, 100) // one batch: short
	select {
	case <-ch:
		t.Fatal("answered short of min_bytes")
	case <-time.After(20 * time.Millisecond):
	}
	h.parts[0].produce(t, 1, 10, 100) // two: enough
	got := <-ch
	if rb := recordBytes(got.resp); int64(rb[0]) != 2*one {
		t.Fatalf("got %d bytes, want %d", rb[0], 2*one)
	}
	if n := h.reads[0].Load(); n != 1 {
		t.Fatalf("read %d times, want 1 (once enough had arrived)", n)
	}
}

// emptyAt answers only a read at the high watermark of an open log, by a
// client at the partition's epoch (or none), inside the log.

// TestFetchWakeDuringRound covers an append that lands between a
// partition's read and the round's end: the fetch must read again rather
// than park with data waiting.
func TestFetchWakeDuringRound(t *testing.T) {
	h := newFetchHarness(t, 2)
	// Hold partition 1's mailbox so the round stays out.
	release := make(chan struct{})
	h.parts[1].mail <- func() { <-release }
	_, ch := h.start(plainFetch(1, 60_000, 1<<20, 1<<20, 0, 0))
	waitParked(t, h.parts[0])
	h.parts[0].produce(t, 1, 3, 10) // partition 0 has data while 1 has not answered
	close(release)
	got := <-ch
	if rb := recordBytes(got.resp); rb[0] == 0 {
		t.Fatalf("data that arrived during the round was not read: %v", rb)
	}
}

// TestFetchAbandonedRound: a partition that never answers (its actor died)
// does not leave the client waiting past max wait plus the guard, and its
// late read is released.
func TestFetchAbandonedRound(t *testing.T) {
	h := newFetchHarness(t, 2)
	h.parts[0].produce(t, 1, 3, 10)
	release := make(chan struct{})
	h.parts[1].mail <- func() { <-release }
	h.guard = 10 * time.Millisecond // after max wait, the timer re-arms with the guard
	o, ch := h.start(plainFetch(1, 10, 1<<20, 1<<20, 0, 0))
	got := <-ch
	ps := got.resp.Topics[0].Partitions
	if len(ps[0].RecordBatches) == 0 || ps[1].ErrorCode != kerr.NotLeaderOrFollower.Int16() {
		t.Fatalf("abandoned answer %+v", ps)
	}
	close(release)
	h.parts[1].do(func(*partition.Local) {}) // the late read completes and is released
	if o.slots[1].Res != nil {
		t.Fatal("late read not released")
	}
}

// TestFetchIncrementalResponse runs a session through the real answer
// path: the second fetch answers only the partition that got data.
func TestFetchIncrementalResponse(t *testing.T) {
	h := newFetchHarness(t, 3)
	req := plainFetch(1, 0, 1<<20, 1<<20, 0, 0, 0)
	req.SessionEpoch = 0
	_, ch := h.start(req)
	first := <-ch
	if first.resp.SessionID == 0 || len(first.resp.Topics[0].Partitions) != 3 {
		t.Fatalf("initial session fetch: id %d, %d partitions", first.resp.SessionID, len(first.resp.Topics[0].Partitions))
	}
	h.parts[2].produce(t, 1, 3, 10)
	inc := kmsg.NewPtrFetchRequest()
	inc.Version, inc.SessionID, inc.SessionEpoch, inc.MinBytes, inc.MaxBytes, inc.MaxWaitMillis = 12, first.resp.SessionID, 1, 1, 1<<20, 0
	_, ch = h.start(inc)
	got := <-ch
	if len(got.resp.Topics) != 1 || len(got.resp.Topics[0].Partitions) != 1 || got.resp.Topics[0].Partitions[0].Partition != 2 {
		t.Fatalf("incremental answer %+v", got.resp.Topics)
	}
	if p := got.resp.Topics[0].Partitions[0]; len(p.RecordBatches) == 0 || p.HighWatermark != 3 {
		t.Fatalf("partition 2: %+v", p)
	}
}

// Hurry (a leader answering a follower's fetch parked without a partition
// that grew) answers a parked fetch at once, with nothing, but only in
// the round it was asked for.
func TestFetchHurryAnswersOnlyItsRound(t *testing.T) {
	h := newFetchHarness(t, 1)
	o, ch := h.start(plainFetch(1, 60_000, 1<<20, 1<<20, 0))
	waitParked(t, h.parts[0])
	round := o.round.Load()
	o.Hurry(round + 1)
	// A hurry that took starts the last round at once, on this goroutine.
	if o.round.Load() != round || o.answered.Load() {
		t.Fatal("a hurry for another round moved the fetch on")
	}
	o.Hurry(round)
	got := <-ch
	if p := got.resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) != 0 {
		t.Fatalf("hurried answer %+v", p)
	}
	if !o.answered.Load() {
		t.Fatal("not answered")
	}
}
