package segment

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Reads answered by the tail of remembered batches are exactly the reads
// the file gives: random appends, rolls and truncations, each followed by
// random reads done twice, once as the log does them and once with every
// tail forgotten (so locate and boundaryAtOrBefore read headers from the
// file). The seed is in the failure message.
func TestTailReadsMatchFileReads(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		d := testDir(t, nil)
		cfg := DefaultConfig()
		cfg.SegmentBytes = 64 << 10
		cfg.IndexIntervalBytes = 1024
		cfg.FlushPolicy = FlushNever
		l, _ := openLog(t, d, cfg)
		fromTail := 0
		for step := range 300 {
			switch r := rng.IntN(100); {
			case r < 3 && l.LogEndOffset() > l.LogStartOffset():
				to := l.LogStartOffset() + rng.Int64N(l.LogEndOffset()-l.LogStartOffset())
				if _, err := l.TruncateTo(to); err != nil {
					t.Fatalf("seed %d step %d: truncate to %d: %v", seed, step, to, err)
				}
			case r < 5:
				if err := l.Roll(int64(step)); err != nil {
					t.Fatalf("seed %d step %d: roll: %v", seed, step, err)
				}
			default:
				var b []byte
				for range 1 + rng.IntN(3) {
					b = append(b, makeBatch(1+rng.IntN(20), 10+rng.IntN(300), int64(step), rng.Uint64())...)
				}
				mustAppend(t, l, b, int64(step))
			}
			for range 5 {
				start, end := l.LogStartOffset(), l.LogEndOffset()
				if rng.IntN(2) == 0 {
					start = max(start, end-100) // near the end, as consumers that keep up read
				}
				req := ReadRequest{
					Offset:      start + rng.Int64N(end-start+1),
					MaxBytes:    1 + rng.Int64N(8000),
					MaxOffset:   -1,
					MinOneBatch: rng.IntN(2) == 0,
				}
				if rng.IntN(2) == 0 {
					req.MaxOffset = req.Offset + rng.Int64N(end-req.Offset+1)
				}
				s := l.active()
				if _, ok := s.tail.locate(s.size, req.Offset); ok {
					fromTail++
				}
				got := readSummary(t, l, req)
				tails := make([]*batchTail, len(l.segs))
				for i, s := range l.segs {
					tails[i], s.tail = s.tail, nil
				}
				want := readSummary(t, l, req)
				for i, s := range l.segs {
					s.tail = tails[i]
				}
				if got != want {
					t.Fatalf("seed %d step %d: read %+v\nwith the tail    %s\nfrom the file    %s", seed, step, req, got, want)
				}
			}
		}
		if fromTail < 500 {
			t.Fatalf("seed %d: only %d of 1500 reads started in the tail; the test does not exercise it", seed, fromTail)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// readSummary describes a read's result as a comparable string.
func readSummary(t *testing.T, l *Log, req ReadRequest) string {
	t.Helper()
	res, err := l.Read(req)
	if err != nil {
		t.Fatalf("read %+v: %v", req, err)
	}
	defer res.Release()
	s := fmt.Sprintf("first %d next %d bytes %d regions", res.FirstOffset, res.NextOffset, res.Bytes)
	for _, r := range res.Regions {
		s += fmt.Sprintf(" %d+%d", r.Position, r.Length)
	}
	return s
}
