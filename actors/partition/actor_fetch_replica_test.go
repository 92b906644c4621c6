package partition

import (
	"slices"
	"testing"
	"time"

	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/segment/segmenttest"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
	"github.com/samsa-io/samsa/wire/kerr"
)

// doneOp is a FetchOp that only counts completions.
type doneOp struct{ done int }

func (o *doneOp) Complete(*FetchSlot)             { o.done++ }
func (o *doneOp) Progress(int32, int, int64) bool { return false }
func (o *doneOp) Stale(int32) bool                { return true }
func (o *doneOp) MinBytes() int64                 { return 1 }

// replicaActor is a cluster-mode partition on a 50-offset log (5
// batches of 10) at leader epoch 4: a follower whose leader said high
// watermark 20, or the leader of replicas 1 (this broker), 2 and 3.
func replicaActor(t *testing.T, follower bool) (*partitionActor, *segment.Log) {
	t.Helper()
	l := segmenttest.Log(t, 0)
	segmenttest.AppendBatches(t, l, 5, 10, 100)
	now := time.UnixMilli(testNow)
	p := &partitionActor{plog: l, log: quiet, now: func() time.Time { return now },
		spec: metadata.PartitionSpec{Topic: "t", Partition: 0, LeaderEpoch: 4, Follower: follower},
		repl: &Replication{Me: 1, RackAware: true, RackOf: func(id int32) (string, bool) { return map[int32]string{1: "a", 2: "b", 3: "c"}[id], true }}}
	p.core, _ = NewCore(RulesOf(topicConfig(t)), nil, -1, 0, testNow, p.logState())
	if follower {
		p.core.Follow()
		p.core.FollowerHighWatermark(20, p.logState())
		return p, l
	}
	p.core.Lead(Leadership{Me: 1, LeaderEpoch: 4, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, LagMaxMs: 30_000}, 0, testNow, segmentState(l))
	p.core.FollowerFetched(2, 50, -1, testNow, segmentState(l))
	p.core.FollowerFetched(3, 50, -1, testNow, segmentState(l))
	return p, l
}

func segmentState(l *segment.Log) LogState {
	return LogState{End: l.LogEndOffset(), RecoveryPoint: l.LogEndOffset(), Policy: segment.FlushNever, SegmentBytes: 1 << 30}
}

func (p *partitionActor) fetchFor(t *testing.T, f FetchSlot) *FetchSlot {
	t.Helper()
	op := &doneOp{}
	f.Op, f.MaxBytes = op, 1<<20
	if f.LeaderEpoch == 0 {
		f.LeaderEpoch = -1
	}
	p.serveFetch(&f)
	if op.done != 1 {
		t.Fatalf("fetch completed %d times", op.done)
	}
	t.Cleanup(f.Release)
	return &f
}

// KIP-392 on the follower side: a v11+ consumer (client metadata) is
// served up to the follower's high watermark, with Kafka's answers at the
// edges; an older consumer is refused NOT_LEADER_OR_FOLLOWER.
func TestFollowerServesConsumers(t *testing.T) {
	p, _ := replicaActor(t, true)
	if f := p.fetchFor(t, FetchSlot{Offset: 0}); f.Code != kerr.NotLeaderOrFollower {
		t.Fatalf("consumer without client metadata: %v", f.Code)
	}
	f := p.fetchFor(t, FetchSlot{Offset: 0, ClientMetadata: true, ClientRack: "b"})
	if f.Code != 0 || f.HW != 20 || f.Redirect || !slices.Equal(segmenttest.BatchOffsets(t, f.Res), []int64{0, 10}) {
		t.Fatalf("consumer at the follower: code %v hw %d redirect %v batches %v", f.Code, f.HW, f.Redirect, segmenttest.BatchOffsets(t, f.Res))
	}
	// Past the follower's high watermark but inside its log: nothing yet.
	if f := p.fetchFor(t, FetchSlot{Offset: 30, ClientMetadata: true}); f.Code != 0 || f.Res != nil || f.HW != 20 {
		t.Fatalf("offset 30: code %v res %v hw %d", f.Code, f.Res, f.HW)
	}
	if f := p.fetchFor(t, FetchSlot{Offset: 51, ClientMetadata: true}); f.Code != kerr.OffsetOutOfRange {
		t.Fatalf("past the log end: %v", f.Code)
	}
	if f := p.fetchFor(t, FetchSlot{Offset: 0, LeaderEpoch: 3, ClientMetadata: true}); f.Code != kerr.FencedLeaderEpoch {
		t.Fatalf("old epoch: %v", f.Code)
	}
}

// The leader with the rack-aware selector points a consumer in rack b at
// broker 2 (no read, its offsets); a consumer in its own rack reads.
func TestLeaderRedirectsToTheClientsRack(t *testing.T) {
	p, _ := replicaActor(t, false)
	f := p.fetchFor(t, FetchSlot{Offset: 0, ClientMetadata: true, ClientRack: "b"})
	if f.Code != 0 || !f.Redirect || f.ReadReplica != 2 || f.Res != nil || f.HW != 50 {
		t.Fatalf("rack b: code %v redirect %v replica %d res %v hw %d", f.Code, f.Redirect, f.ReadReplica, f.Res, f.HW)
	}
	if f := p.fetchFor(t, FetchSlot{Offset: 0, ClientMetadata: true, ClientRack: "a"}); f.Redirect || f.Res == nil {
		t.Fatalf("rack a: redirect %v res %v", f.Redirect, f.Res)
	}
	p.repl.RackAware = false
	if f := p.fetchFor(t, FetchSlot{Offset: 0, ClientMetadata: true, ClientRack: "b"}); f.Redirect || f.Res == nil {
		t.Fatalf("no selector: redirect %v res %v", f.Redirect, f.Res)
	}
}

// A follower's log start follows its leader's, never past its own high
// watermark.
func TestFollowerLogStartFollowsTheLeader(t *testing.T) {
	p, l := replicaActor(t, true)
	p.followLogStart(-1)
	if l.LogStartOffset() != 0 {
		t.Fatalf("unknown leader start moved it to %d", l.LogStartOffset())
	}
	p.followLogStart(15)
	if l.LogStartOffset() != 15 {
		t.Fatalf("log start %d, want 15", l.LogStartOffset())
	}
	p.followLogStart(10)
	if l.LogStartOffset() != 15 {
		t.Fatalf("log start went back to %d", l.LogStartOffset())
	}
	p.followLogStart(45)
	if l.LogStartOffset() != 20 {
		t.Fatalf("log start %d, want the high watermark 20", l.LogStartOffset())
	}
}

// A follower's fetch parks on a partition that does not grow (an idle
// topic beside a busy one) once per round; the rounds that moved on must
// not pile up there. Before the fix every round of every follower fetch
// stayed listed until the partition next grew, which an idle one never
// does: the leader's memory rose with the fetch rate for as long as the
// cluster ran.
func TestIdlePartitionKeepsNoStaleFollowerWaiters(t *testing.T) {
	p, l := replicaActor(t, false)
	for range 100 {
		p.fetchFor(t, FetchSlot{Offset: l.LogEndOffset(), Wait: true, Follower: &FollowerFetch{ID: 2, LastFetchedEpoch: -1}})
	}
	if n := len(p.replicaWaiters); n > 1 {
		t.Fatalf("%d follower waiters listed after 100 rounds that all moved on, want at most the last", n)
	}
}

// A samsa follower's fetch gives its durable end: the leader counts it,
// not the fetch offset, for the high watermark and says so in the answer;
// a fetch without it (a Kafka follower's) counts its fetch offset and is
// answered as Kafka's leader answers.
func TestLeaderCountsTheDurableEnd(t *testing.T) {
	p, l := replicaActor(t, false)
	p.core, _ = NewCore(RulesOf(topicConfig(t)), nil, -1, 0, testNow, p.logState())
	p.core.Lead(Leadership{Me: 1, LeaderEpoch: 4, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, LagMaxMs: 30_000}, 0, testNow, segmentState(l))
	end := l.LogEndOffset()
	f := p.fetchFor(t, FetchSlot{Offset: end, Follower: &FollowerFetch{ID: 2, LastFetchedEpoch: -1, Durable: true, DurableEnd: 30}})
	if f.Code != 0 || !f.DurableHonoured {
		t.Fatalf("samsa follower's fetch: code %v, honoured %v", f.Code, f.DurableHonoured)
	}
	f = p.fetchFor(t, FetchSlot{Offset: end, Follower: &FollowerFetch{ID: 3, LastFetchedEpoch: -1}})
	if f.Code != 0 || f.DurableHonoured {
		t.Fatalf("Kafka follower's fetch: code %v, honoured %v", f.Code, f.DurableHonoured)
	}
	if f.HW != 30 || p.core.HighWatermark() != 30 {
		t.Fatalf("followers at fetch offset %d, one durable to 30: high watermark %d (answered %d), want 30", end, p.core.HighWatermark(), f.HW)
	}
	f = p.fetchFor(t, FetchSlot{Offset: end, Follower: &FollowerFetch{ID: 2, LastFetchedEpoch: -1, Durable: true, DurableEnd: end}})
	if f.HW != end {
		t.Fatalf("both durable to the end: high watermark %d, want %d", f.HW, end)
	}
	if f := p.fetchFor(t, FetchSlot{Offset: end, Follower: &FollowerFetch{ID: 9, LastFetchedEpoch: -1, Durable: true, DurableEnd: end}}); f.DurableHonoured {
		t.Fatal("a fetch from a broker that is no replica was answered as counted")
	}
}

// A follower's append with a Durable callback answers at once with the
// new log end and reports it durable once the group commit fsynced it;
// under the never policy it counts as durable at once, reported before
// the reply. Its position says what is durable, and is all durable.
func TestFollowerReportsDurabilityApart(t *testing.T) {
	p, l := replicaActor(t, true)
	l.SetConfig(segment.Config{FlushPolicy: segment.FlushGroup})
	end := l.LogEndOffset()
	var order []string
	durable := make(chan int64, 1)
	p.followerAppend(&ReplicaAppend{Records: replicatedBatch(end, 5), LeaderHW: 20, LeaderLogStart: -1, From: end,
		Reply: func(e int64, err error) {
			if err != nil {
				t.Errorf("append: %v", err)
			}
			order = append(order, "reply")
			if e != end+5 {
				t.Errorf("reply end %d, want %d", e, end+5)
			}
		},
		Durable: func(e int64, err error) {
			if err != nil {
				t.Errorf("durable: %v", err)
			}
			durable <- e
		}})
	if !slices.Equal(order, []string{"reply"}) {
		t.Fatalf("the append was not answered at once: %v", order)
	}
	select {
	case e := <-durable:
		if e != end+5 || l.RecoveryPoint() < end+5 {
			t.Fatalf("reported durable to %d with the recovery point at %d, want %d", e, l.RecoveryPoint(), end+5)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the group commit never reported the append durable")
	}
	var at ReplicaAt
	p.replicaPosition(&ReplicaPosition{Reply: func(a ReplicaAt, err error) { at = a }})
	if at.End != end+5 || at.Durable != end+5 {
		t.Fatalf("position %+v, want end and durable %d", at, end+5)
	}

	l.SetConfig(segment.Config{FlushPolicy: segment.FlushNever})
	order = nil
	p.followerAppend(&ReplicaAppend{Records: replicatedBatch(end+5, 5), LeaderHW: 20, LeaderLogStart: -1, From: end + 5,
		Reply:   func(int64, error) { order = append(order, "reply") },
		Durable: func(int64, error) { order = append(order, "durable") }})
	if !slices.Equal(order, []string{"durable", "reply"}) {
		t.Fatalf("never policy: %v, want durable before reply", order)
	}
	// Back to group with that tail unsynced: no flush is due for it, so
	// reading the position makes it durable rather than have the fetcher
	// wait for ever.
	l.SetConfig(segment.Config{FlushPolicy: segment.FlushGroup})
	if l.RecoveryPoint() >= end+10 {
		t.Fatalf("the never-policy tail is already durable (recovery point %d)", l.RecoveryPoint())
	}
	p.replicaPosition(&ReplicaPosition{Reply: func(a ReplicaAt, err error) { at = a }})
	if at.End != end+10 || at.Durable != end+10 || l.RecoveryPoint() != end+10 {
		t.Fatalf("position %+v with recovery point %d, want end and durable %d", at, l.RecoveryPoint(), end+10)
	}
}

// replicatedBatch is an n-record batch at base offset base, leader epoch 4,
// as a leader would send it.
func replicatedBatch(base int64, n int) []byte {
	b := batchtest.Plain(n, testNow)
	wire.SetBatchBaseOffset(b, base)
	wire.SetBatchLeaderEpoch(b, 4)
	return b
}
