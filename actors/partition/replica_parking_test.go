package partition

import (
	"slices"
	"testing"
)

// parkOp is a follower's fetch that parks: never stale until told, and
// it records the rounds it was hurried in.
type parkOp struct {
	stale   bool
	hurried []int32
}

func (o *parkOp) Complete(*FetchSlot)             {}
func (o *parkOp) Progress(int32, int, int64) bool { return true }
func (o *parkOp) Stale(int32) bool                { return o.stale }
func (o *parkOp) MinBytes() int64                 { return 1 }
func (o *parkOp) Hurry(r int32)                   { o.hurried = append(o.hurried, r) }

// parkFollower has follower id's fetch of p, at p's log end, park there.
func parkFollower(t *testing.T, p *partitionActor, id int32, op *parkOp, round int32) {
	t.Helper()
	f := &FetchSlot{Op: op, Round: round, Offset: p.plog.LogEndOffset(), MaxBytes: 1 << 20, LeaderEpoch: -1, Wait: true,
		Follower: &FollowerFetch{ID: id, LastFetchedEpoch: -1, DurableEnd: -1}}
	before := len(p.replicaWaiters)
	p.serveReplicaFetch(f)
	if f.Code != 0 || len(p.replicaWaiters) != before+1 {
		t.Fatalf("follower %d did not park: code %v", id, f.Code)
	}
}

// A partition that grows answers at once the parked fetch of an in-sync
// follower that has not fetched it yet (a fetch sent before the follower
// took the partition on), and leaves alone one that has.
func TestGrowthHurriesAFollowersFetchParkedWithoutThePartition(t *testing.T) {
	a, _ := replicaActor(t, false)
	b, bl := replicaActor(t, false)
	a.repl.Parked = NewParkedReplicaFetches()
	b.repl = a.repl
	// b just became leader: neither follower has fetched it yet.
	b.core.Lead(Leadership{Me: 1, LeaderEpoch: 5, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, LagMaxMs: 30_000}, 50, testNow, segmentState(bl))
	b.spec.LeaderEpoch = 5

	// Follower 2's fetch parks on a only; b grows: hurried, in its round.
	op2 := &parkOp{}
	parkFollower(t, a, 2, op2, 7)
	// Follower 3's fetch parks on both: b's growth reaches it as progress.
	op3 := &parkOp{}
	parkFollower(t, a, 3, op3, 1)
	parkFollower(t, b, 3, op3, 1)
	b.wakeReplicas()
	if !slices.Equal(op2.hurried, []int32{7}) {
		t.Fatalf("follower 2's fetch hurried in rounds %v, want [7]", op2.hurried)
	}
	if len(op3.hurried) != 0 {
		t.Fatalf("follower 3, parked on b too, hurried in rounds %v", op3.hurried)
	}

	// Once answered (stale), a fetch is forgotten, not hurried again.
	op2.stale = true
	b.wakeReplicas()
	if len(op2.hurried) != 1 {
		t.Fatalf("an answered fetch hurried again: rounds %v", op2.hurried)
	}
	a.repl.Parked.mu.Lock()
	_, kept := a.repl.Parked.by[2]
	a.repl.Parked.mu.Unlock()
	if kept {
		t.Fatal("an answered fetch is still remembered")
	}

	// A follower out of the ISR is not hurried: it is catching up and
	// fetching anyway.
	op4 := &parkOp{}
	a.repl.Parked.park(4, op4, 2)
	b.wakeReplicas()
	if len(op4.hurried) != 0 {
		t.Fatalf("broker 4, not in the ISR, hurried in rounds %v", op4.hurried)
	}
}

// Without a registry (a broker alone, or a test's partition) growth
// hurries nothing and nothing breaks.
func TestNilParkedReplicaFetchesDoesNothing(t *testing.T) {
	var p *ParkedReplicaFetches
	op := &parkOp{}
	p.park(2, op, 1)
	p.hurry(2)
	if len(op.hurried) != 0 {
		t.Fatal("a nil registry hurried a fetch")
	}
}
