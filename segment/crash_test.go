package segment

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
)

// crashModel is what the workload knows, shared with the crash hook.
type crashModel struct {
	mu       sync.Mutex
	batches  map[int64][]byte   // current content by base offset
	history  map[int64][][]byte // every version ever appended at a base offset
	acked    int64              // offsets below were acknowledged durable
	ackCap   int64              // a truncation in progress removes offsets from here on
	logStart int64
}

type crashSnapshot struct {
	fs       *vfs.MemFS
	durable  int64
	batches  map[int64][]byte
	logStart int64
}

func (m *crashModel) ack(upto int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.acked = max(m.acked, min(upto, m.ackCap))
}

// TestCrashRecovery runs seeded random workloads (appends, rolls,
// retention, DeleteRecords, truncation, flushes, clean restarts) on a
// MemFS, crashes at a random filesystem operation, recovers from the
// crash image and checks: every offset acknowledged durable is present and
// byte-identical, reads return only valid batches that were appended,
// offsets are dense. CRASH_RUNS sets the number of runs, CRASH_SEED one seed.
func TestCrashRecovery(t *testing.T) {
	runs := 300
	if testing.Short() {
		runs = 60
	}
	if s := os.Getenv("CRASH_RUNS"); s != "" {
		runs, _ = strconv.Atoi(s)
	}
	seeds := make([]uint64, runs)
	for i := range seeds {
		seeds[i] = uint64(i) + 1
	}
	if s := os.Getenv("CRASH_SEED"); s != "" {
		v, _ := strconv.ParseUint(s, 10, 64)
		seeds = []uint64{v}
	}
	var st crashStats
	for _, seed := range seeds {
		if err := crashRun(seed, &st); err != nil {
			t.Fatalf("seed %d (rerun with CRASH_SEED=%d): %v", seed, seed, err)
		}
	}
	t.Logf("%d runs: %d crashed, %d with acknowledged data, %d cut a torn tail, %d recovered cleanly-closed logs",
		len(seeds), st.crashed, st.durable, st.lost, st.clean)
	if len(seeds) >= 50 && (st.crashed < len(seeds)/2 || st.durable == 0 || st.lost == 0) {
		t.Fatalf("the workload does not exercise crashes enough: %+v", st)
	}
}

type crashStats struct{ crashed, durable, lost, clean int }

func crashRun(seed uint64, st *crashStats) (err error) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	mem := vfs.NewMemFS()
	policies := []FlushPolicy{FlushGroup, FlushAlways, FlushInterval, FlushNever}
	cfg := Config{
		SegmentBytes:       []int64{3000, 6000, 20000}[rng.IntN(3)],
		IndexIntervalBytes: []int32{1, 300, 4096}[rng.IntN(3)],
		FlushPolicy:        policies[rng.IntN(len(policies))],
		FlushIntervalMs:    10,
		RetentionMs:        Unlimited,
		RetentionBytes:     Unlimited,
	}
	if rng.IntN(2) == 0 {
		cfg.RetentionBytes = 6000
	}
	clock := &fakeClock{}
	m := &crashModel{batches: map[int64][]byte{}, history: map[int64][][]byte{}, ackCap: math.MaxInt64}
	var snap atomic.Pointer[crashSnapshot]
	var l atomic.Pointer[Log]
	var ops atomic.Int64
	crashAt := int64(rng.IntN(400) + 1)
	crashRNG := rand.New(rand.NewPCG(seed, 0xc4a54))
	// Some runs also meet a failing fsync or a full disk before the crash.
	failSyncAfter := int64(-1)
	switch rng.IntN(6) {
	case 0:
		failSyncAfter = int64(rng.IntN(300))
	case 1:
		mem.SetCapacity(int64(5000 + rng.IntN(40000)))
	}
	takeSnapshot := func() {
		m.mu.Lock()
		s := &crashSnapshot{durable: m.acked, logStart: m.logStart, batches: map[int64][]byte{}}
		if cur := l.Load(); cur != nil {
			s.durable = max(s.durable, min(cur.RecoveryPoint(), m.ackCap))
			// Retention publishes a raised start before it deletes files;
			// a concurrent directory fsync may make the deletion durable
			// before the model hears of it.
			s.logStart = max(s.logStart, cur.LogStartOffset())
		}
		for b, v := range m.batches {
			s.batches[b] = v
		}
		s.fs = mem.CrashClone(crashRNG)
		m.mu.Unlock()
		snap.Store(s)
	}
	mem.SetFault(func(op vfs.Op, name string, size int) (int, error) {
		n := ops.Add(1)
		if n == crashAt {
			takeSnapshot()
		}
		if failSyncAfter >= 0 && n >= failSyncAfter && op == vfs.OpSync && strings.HasSuffix(name, LogSuffix) {
			return 0, syscall.EIO
		}
		return 0, nil
	})
	// stopped reports whether err is an injected disk failure, which ends
	// the workload (the crash then happens right after).
	stopped := func(err error) bool {
		return errors.Is(err, ErrLogFailed) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EIO)
	}
	openDir := func(fs vfs.FS) (*Dir, error) {
		return OpenDir("/data", Options{FS: fs, Clock: clock, FlushWorkers: 2, MaxOpenFiles: 3, Logger: quietLogger})
	}
	d, err := openDir(mem)
	if err != nil {
		return err
	}
	lg, _, err := d.Open("t", 0, cfg)
	if err != nil {
		return err
	}
	l.Store(lg)
	now := int64(1_000_000)
workload:
	for step := 0; step < 300 && snap.Load() == nil; step++ {
		now += int64(rng.IntN(50))
		lg := l.Load()
		if lg.LogStartOffset() > lg.LogEndOffset() {
			return fmt.Errorf("step %d: log start %d beyond log end %d", step, lg.LogStartOffset(), lg.LogEndOffset())
		}
		if os.Getenv("CRASH_TRACE") != "" {
			fmt.Println("step", step, "start", lg.LogStartOffset(), "end", lg.LogEndOffset(), "segs", lg.Segments())
		}
		switch k := rng.IntN(100); {
		case k < 60: // append one or more batches
			var set []byte
			for range 1 + rng.IntN(3) {
				set = append(set, makeBatch(1+rng.IntN(4), rng.IntN(200), now, rng.Uint64())...)
			}
			res, err := lg.Append(set, 3, now)
			// An append that failed after writing (its fsync failed) may
			// still be on disk: it joins the history either way.
			m.mu.Lock()
			for p := 0; p < len(set); {
				h, _ := wire.ParseBatchHeader(set[p:])
				b := set[p : p+int(h.Size())]
				if err == nil {
					m.batches[h.BaseOffset] = b
				}
				m.history[h.BaseOffset] = append(m.history[h.BaseOffset], b)
				p += int(h.Size())
			}
			m.mu.Unlock()
			if err != nil {
				if stopped(err) {
					break workload
				}
				return fmt.Errorf("append: %w", err)
			}
			if cfg.FlushPolicy == FlushGroup || cfg.FlushPolicy == FlushAlways {
				end := res.LogEndOffset
				lg.WhenDurable(res.LastOffset, func(err error) {
					if err == nil {
						m.ack(end)
					}
				})
			}
		case k < 65:
			if err := lg.Roll(now); err != nil {
				if stopped(err) {
					break workload
				}
				return fmt.Errorf("roll: %w", err)
			}
		case k < 70:
			if _, err := lg.DeleteExpired(now); err != nil {
				if stopped(err) {
					break workload
				}
				return fmt.Errorf("retention: %w", err)
			}
			m.setLogStart(lg.LogStartOffset())
		case k < 74:
			if lg.LogStartOffset() > lg.LogEndOffset() {
				return fmt.Errorf("log start %d beyond log end %d", lg.LogStartOffset(), lg.LogEndOffset())
			}
			target := lg.LogStartOffset() + rng.Int64N(lg.LogEndOffset()-lg.LogStartOffset()+1)
			if _, err := lg.DeleteRecordsBefore(target); err != nil {
				if stopped(err) {
					break workload
				}
				return fmt.Errorf("delete records: %w", err)
			}
			m.setLogStart(lg.LogStartOffset())
		case k < 80:
			span := lg.LogEndOffset() - lg.LogStartOffset()
			if span == 0 {
				continue
			}
			target := lg.LogEndOffset() - 1 - rng.Int64N(min(span, 20))
			m.mu.Lock()
			cut := target
			for b, v := range m.batches {
				h, _ := wire.ParseBatchHeader(v)
				if b <= target && h.LastOffset() >= target {
					cut = b
				}
			}
			m.ackCap = cut
			m.acked = min(m.acked, cut)
			m.mu.Unlock()
			newEnd, err := lg.TruncateTo(target)
			if err != nil {
				if stopped(err) {
					break workload
				}
				return fmt.Errorf("truncate: %w", err)
			}
			if newEnd != cut {
				return fmt.Errorf("truncate to %d: new end %d, model says %d", target, newEnd, cut)
			}
			m.mu.Lock()
			for b := range m.batches {
				if b >= cut {
					delete(m.batches, b)
				}
			}
			m.ackCap = math.MaxInt64
			m.logStart = lg.LogStartOffset()
			m.mu.Unlock()
		case k < 85:
			if err := lg.Flush(); err != nil {
				if stopped(err) {
					break workload
				}
				return fmt.Errorf("flush: %w", err)
			}
		case k < 90:
			clock.Advance(20 * 1e6)
		case k < 94:
			if err := d.Checkpoint(); err != nil {
				if stopped(err) {
					break workload
				}
				return fmt.Errorf("checkpoint: %w", err)
			}
		default: // clean restart
			if err := d.Close(); err != nil {
				if stopped(err) {
					break workload
				}
				return fmt.Errorf("close: %w", err)
			}
			if d, err = openDir(mem); err != nil {
				if stopped(err) {
					break workload
				}
				return fmt.Errorf("reopen dir: %w", err)
			}
			lg, rep, err := d.Open("t", 0, cfg)
			if err != nil {
				if stopped(err) {
					break workload
				}
				return fmt.Errorf("reopen after clean close: %w", err)
			}
			if !rep.Clean || rep.Cut() {
				return fmt.Errorf("reopen after clean close: %+v", rep)
			}
			l.Store(lg)
		}
	}
	if snap.Load() == nil && (failSyncAfter >= 0 || ops.Load() > 0 && l.Load().Failure() != nil) {
		takeSnapshot() // crash right after the failure
	}
	s := snap.Load()
	d.Close()
	mem.SetFault(nil)
	if s == nil {
		return nil // the run ended before the crash point
	}
	st.crashed++
	if s.durable > 0 {
		st.durable++
	}
	return verifyRecovered(s, m, cfg, openDir, st)
}

func (m *crashModel) setLogStart(ls int64) {
	m.mu.Lock()
	m.logStart = ls
	m.mu.Unlock()
}

func verifyRecovered(s *crashSnapshot, m *crashModel, cfg Config, openDir func(vfs.FS) (*Dir, error), st *crashStats) error {
	d, err := openDir(s.fs)
	if err != nil {
		return fmt.Errorf("open dir after crash: %w", err)
	}
	defer d.Close()
	l, rep, err := d.Open("t", 0, cfg)
	if err != nil {
		return fmt.Errorf("recover: %w (report %+v)", err, rep)
	}
	if rep.Cut() {
		st.lost++
	}
	if rep.Clean {
		st.clean++
	}
	if l.LogEndOffset() < s.durable {
		return fmt.Errorf("log end %d below the durable offset %d (report %+v)", l.LogEndOffset(), s.durable, rep)
	}
	if l.LogStartOffset() > s.logStart {
		return fmt.Errorf("log start %d beyond the model's %d", l.LogStartOffset(), s.logStart)
	}
	next := l.LogStartOffset()
	first := true
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		b, nextOff, err := l.ReadBytes(ReadRequest{Offset: off, MaxBytes: 1 << 16, MaxOffset: -1, MinOneBatch: true})
		if err != nil {
			return fmt.Errorf("read at %d: %w", off, err)
		}
		for len(b) > 0 {
			ph := must(wire.ParseBatchHeader(b))
			h, err := wire.ValidateBatch(b[:min(len(b), int(ph.Size()))])
			if err != nil {
				return fmt.Errorf("read returned an invalid batch at %d: %w", off, err)
			}
			batch := b[:h.Size()]
			if !first && h.BaseOffset != next {
				return fmt.Errorf("offsets not dense: batch at %d after end %d", h.BaseOffset, next)
			}
			first = false
			next = h.LastOffset() + 1
			if want, ok := s.batches[h.BaseOffset]; ok && h.LastOffset() < s.durable && !bytes.Equal(want, batch) {
				return fmt.Errorf("durable batch at %d differs after recovery", h.BaseOffset)
			}
			known := false
			for _, v := range m.history[h.BaseOffset] {
				known = known || bytes.Equal(v, batch)
			}
			if !known {
				return fmt.Errorf("batch at %d was never appended", h.BaseOffset)
			}
			b = b[h.Size():]
		}
		off = nextOff
	}
	for base, want := range s.batches {
		h, _ := wire.ParseBatchHeader(want)
		if base < l.LogStartOffset() || h.LastOffset() >= s.durable {
			continue
		}
		got, _, err := l.ReadBytes(ReadRequest{Offset: base, MaxBytes: 1, MaxOffset: -1, MinOneBatch: true})
		if err != nil || !bytes.Equal(got, want) {
			return fmt.Errorf("durable batch at %d lost (err %v, report %+v)", base, err, rep)
		}
	}
	// The recovered log keeps working.
	if _, err := l.Append(makeBatch(2, 10, 5, 1), 4, 2_000_000); err != nil {
		return fmt.Errorf("append after recovery: %w", err)
	}
	if err := l.Close(); err != nil && !errors.Is(err, ErrClosed) {
		return fmt.Errorf("close after recovery: %w", err)
	}
	return nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
