package partition

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
	"github.com/samsa-io/samsa/wire/kerr"
)

// The core is driven here by a seeded simulation: a model log (an end
// offset, a durable point, durability waits outstanding, a disk that may
// fail) and a random mix of produces (plain, idempotent, retries of
// earlier idempotent batches, invalid ones), fsyncs, fsync failures,
// policy changes and closes. After every step the invariants below are
// checked; a failure names its seed, and SIM_SEED=<seed> replays it
// (SIM_SEEDS=<n> runs n seeds instead of 300).
//
// Invariants:
//   - every produce is answered exactly once (none twice, none lost at
//     the close);
//   - a successful answer under a policy that waits for fsync covers only
//     durable offsets, and never offsets past a failed fsync;
//   - a retry of an idempotent batch is answered with the batch's first
//     offsets;
//   - the high watermark never falls, never passes the log end, and under
//     group/always never passes the durable point;
//   - a durability wait asked for is past the high watermark;
//   - once everything is fsynced, nothing is left waiting.

type simLog struct {
	end, synced int64
	policy      segment.FlushPolicy
	broken      bool    // an fsync failed: appends fail from now on
	waits       []int64 // durability waits outstanding (end offsets)
}

func (l *simLog) state() LogState {
	return LogState{End: l.end, RecoveryPoint: l.synced, Policy: l.policy, SegmentBytes: 1 << 30}
}

func (l *simLog) append(records []byte) (segment.AppendResult, error) {
	if l.broken {
		return segment.AppendResult{}, errors.New("sim: disk failed")
	}
	count := int64(binary.BigEndian.Uint32(records[wire.BatchRecordCountPos:]))
	res := segment.AppendResult{FirstOffset: l.end, LastOffset: l.end + count - 1, LogAppendTime: -1, LogEndOffset: l.end + count}
	l.end += count
	return res, nil
}

type simProduce struct {
	id       int
	answered int
	ack      Ack
	// idempotent retry: the ticket of the first attempt
	retryOf int
}

type sim struct {
	t     *testing.T
	seed  uint64
	rng   *rand.Rand
	log   simLog
	core  *Core
	now   int64
	asked []*simProduce
	// per idempotent producer: next sequence, and batches sent (for retries)
	seq      map[int64]int32
	sent     []sentBatch
	hw       int64
	failedAt int64 // durable point when an fsync failed; -1 none
	// relaxed is the log end while a policy that acknowledges from the
	// page cache (interval, never) was last in force: offsets below it
	// may be acknowledged (and below the high watermark) undurably.
	relaxed int64
	pidBase int64 // producer ids in use start past it
}

type sentBatch struct {
	records []byte
	ticket  int
}

func newSim(t *testing.T, seed uint64) *sim {
	s := &sim{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), now: testNow,
		seq: map[int64]int32{}, failedAt: -1}
	s.log.policy = segment.FlushGroup
	c, fx := NewCore(defaultRules(t), nil, -1, 0, s.now, s.log.state())
	s.core = c
	s.apply(fx)
	return s
}

func (s *sim) fail(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("seed %d: %s", s.seed, fmt.Sprintf(format, args...))
}

// apply carries out effects as the shell would, checking them.
func (s *sim) apply(fx Effects) {
	s.t.Helper()
	for _, a := range fx.Acks {
		p := s.asked[a.Ticket.(int)]
		p.answered++
		p.ack = a
		if p.answered > 1 {
			s.fail("produce %d answered twice", p.id)
		}
		if a.Code != kerr.None {
			continue
		}
		last := a.BaseOffset + 1 // at least its first offset must be covered
		if s.strict() {
			if last > max(s.log.synced, s.relaxed) {
				s.fail("produce %d acknowledged at offset %d, durable only below %d", p.id, a.BaseOffset, s.log.synced)
			}
		}
		if s.failedAt >= 0 && last > max(s.failedAt, s.relaxed) && s.strict() {
			s.fail("produce %d acknowledged at %d past a failed fsync at %d", p.id, a.BaseOffset, s.failedAt)
		}
		if p.retryOf >= 0 {
			orig := s.asked[p.retryOf]
			if orig.answered == 1 && orig.ack.Code == kerr.None && orig.ack.BaseOffset != a.BaseOffset {
				s.fail("retry %d answered offset %d, the batch is at %d", p.id, a.BaseOffset, orig.ack.BaseOffset)
			}
		}
	}
	if fx.WaitDurable > 0 {
		if fx.WaitDurable <= s.core.HighWatermark() {
			s.fail("durability wait for %d at high watermark %d", fx.WaitDurable, s.core.HighWatermark())
		}
		s.log.waits = append(s.log.waits, fx.WaitDurable)
	}
	if fx.Snapshot {
		s.core.SnapshotWritten(s.log.end)
		_ = s.core.EncodeSnapshot(s.now, s.log.end)
	}
	hw := s.core.HighWatermark()
	switch {
	case hw < s.hw:
		s.fail("high watermark fell from %d to %d", s.hw, hw)
	case hw > s.log.end:
		s.fail("high watermark %d past the log end %d", hw, s.log.end)
	case s.strict() && hw > max(s.log.synced, s.relaxed, s.hw):
		s.fail("high watermark %d past the durable point %d", hw, s.log.synced)
	}
	s.hw = hw
	if !s.strict() {
		s.relaxed = s.log.end
	}
}

// strict reports whether the policy in force acknowledges only what is
// fsynced.
func (s *sim) strict() bool {
	return s.log.policy == segment.FlushGroup || s.log.policy == segment.FlushAlways
}

func (s *sim) produce(records []byte, acks int16, retryOf int) int {
	id := len(s.asked)
	s.asked = append(s.asked, &simProduce{id: id, retryOf: retryOf})
	a, fx := s.core.Produce(Produce{Records: records, Version: 9, Acks: acks, Ticket: id}, s.now, s.log.state())
	s.apply(fx)
	if a != nil {
		res, err := s.log.append(a.Records)
		s.apply(s.core.Appended(a, res, err, s.now, s.log.state()))
	}
	return id
}

// fsync makes the log durable up to its end, or (partial) up to a point
// in between, as a group commit that covered only some appends does.
func (s *sim) fsync(partial bool) {
	if s.log.broken {
		return
	}
	to := s.log.end
	if partial && to > s.log.synced {
		to = s.log.synced + 1 + s.rng.Int64N(to-s.log.synced)
	}
	s.log.synced = to
	waits := s.log.waits
	s.log.waits = nil
	for _, w := range waits {
		if w <= s.log.synced {
			s.apply(s.core.Durable(w, nil, s.log.state()))
		} else {
			s.log.waits = append(s.log.waits, w)
		}
	}
}

func (s *sim) fsyncFails() {
	s.log.broken = true
	if s.failedAt < 0 {
		s.failedAt = s.log.synced
	}
	waits := s.log.waits
	s.log.waits = nil
	for _, w := range waits {
		s.apply(s.core.Durable(w, errors.New("sim: EIO"), s.log.state()))
	}
}

func (s *sim) step() {
	s.now += int64(s.rng.IntN(5))
	switch r := s.rng.IntN(100); {
	case r < 30:
		s.produce(batchtest.Plain(1+s.rng.IntN(4), s.now), int16(s.rng.IntN(2)*2-1), -1)
	case r < 55:
		pid := s.pidBase + int64(1+s.rng.IntN(2))
		n := 1 + s.rng.IntN(3)
		b := batchtest.Plain(n, s.now, batchtest.Producer(pid, 0, s.seq[pid]))
		s.seq[pid] += int32(n)
		id := s.produce(b, -1, -1)
		s.sent = append(s.sent, sentBatch{records: b, ticket: id})
	case r < 65 && len(s.sent) > 0:
		// Retry one of the last few batches (the producer state keeps 5
		// per producer, so older ones may be out of sequence instead).
		sb := s.sent[len(s.sent)-1-s.rng.IntN(min(len(s.sent), 3))]
		s.produce(append([]byte(nil), sb.records...), -1, sb.ticket)
	case r < 68:
		bad := batchtest.Plain(1, s.now)
		bad[wire.BatchMagicPos] = 1
		id := s.produce(bad, 1, -1)
		if p := s.asked[id]; p.answered != 1 || p.ack.Code != kerr.UnsupportedForMessageFormat {
			s.fail("magic 1 batch answered %d times, code %v", p.answered, p.ack.Code)
		}
	case r < 80:
		s.fsync(false)
	case r < 88:
		s.fsync(true)
	case r < 90:
		s.restart(s.rng.IntN(2) == 0)
	case r < 91:
		s.fsyncFails()
	case r < 94:
		// An altered flush policy.
		policies := []segment.FlushPolicy{segment.FlushGroup, segment.FlushAlways, segment.FlushInterval, segment.FlushNever}
		s.log.policy = policies[s.rng.IntN(len(policies))]
		s.apply(s.core.Reconfigure(defaultRules(s.t), s.log.state()))
	default:
		s.now += 1000
	}
}

// restart closes the core and opens a new one on the log, as a broker
// restart does: cleanly (the close fsyncs everything) or by a crash (the
// unsynced tail is lost, with whatever was waiting on it). Producers start
// over with new ids: the model does not rebuild producer state from the
// log.
func (s *sim) restart(clean bool) {
	if clean && !s.log.broken {
		s.log.synced = s.log.end
		s.apply(s.core.Closed(true))
	} else {
		s.apply(s.core.Closed(false))
		s.log.end = s.log.synced
	}
	s.log.waits, s.log.broken, s.failedAt = nil, false, -1
	s.relaxed = min(s.relaxed, s.log.end)
	s.hw = 0
	s.pidBase += 10
	s.seq, s.sent = map[int64]int32{}, nil
	c, fx := NewCore(defaultRules(s.t), nil, -1, 0, s.now, s.log.state())
	s.core = c
	s.apply(fx)
}

func TestCoreSimulation(t *testing.T) {
	first, seeds := simSeeds(t, 300)
	const steps = 400
	for seed := first; seed < first+uint64(seeds); seed++ {
		s := newSim(t, seed)
		for range steps {
			s.step()
		}
		if !s.log.broken {
			s.fsync(false)
			if n := s.core.Pending(); n > 0 {
				s.fail("%d produces still waiting after everything was fsynced", n)
			}
		}
		s.apply(s.core.Closed(!s.log.broken))
		for _, p := range s.asked {
			if p.answered != 1 {
				s.fail("produce %d answered %d times", p.id, p.answered)
			}
		}
	}
}
