package partition

import (
	"testing"

	"github.com/samsa-io/samsa/wire"
)

// A leader whose followers have not caught up: its coordinator load reads
// to the log end, a committed read (share groups) stops at the high
// watermark, and a read with a byte budget stops within it, after one
// batch at least.
func TestReadChunkCommittedAndBudget(t *testing.T) {
	p, l := replicaActor(t, false)
	p.core, _ = NewCore(RulesOf(topicConfig(t)), nil, -1, 0, testNow, p.logState())
	p.core.Lead(Leadership{Me: 1, LeaderEpoch: 4, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, LagMaxMs: 30_000}, 0, testNow, segmentState(l))
	p.core.FollowerFetched(2, 20, -1, testNow, segmentState(l))
	p.core.FollowerFetched(3, 20, -1, testNow, segmentState(l))
	if hw := p.core.HighWatermark(); hw != 20 {
		t.Fatalf("high watermark %d, want 20", hw)
	}
	lastOf := func(data []byte) int64 {
		last := int64(-1)
		for len(data) > 0 {
			h, err := wire.ParseBatchHeader(data)
			if err != nil {
				t.Fatal(err)
			}
			last, data = h.LastOffset(), data[h.Size():]
		}
		return last
	}

	data, next, end, err := p.readChunk(&ReadChunk{From: 0})
	if err != nil || end != 50 || next != 50 || lastOf(data) != 49 {
		t.Fatalf("load read: last offset %d, next %d, end %d, err %v; want the whole log (49, 50, 50)", lastOf(data), next, end, err)
	}
	data, next, end, err = p.readChunk(&ReadChunk{From: 0, Committed: true})
	if err != nil || end != 20 || next != 20 || lastOf(data) != 19 {
		t.Fatalf("committed read: last offset %d, next %d, end %d, err %v; want up to the high watermark (19, 20, 20)", lastOf(data), next, end, err)
	}
	data, next, _, err = p.readChunk(&ReadChunk{From: 0, Committed: true, MaxBytes: 1})
	if err != nil || next != 10 || lastOf(data) != 9 {
		t.Fatalf("1-byte budget: last offset %d, next %d, err %v; want one batch (9, 10)", lastOf(data), next, err)
	}
}
