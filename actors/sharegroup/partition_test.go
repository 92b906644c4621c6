package sharegroup

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestPartitionRandomized drives one share partition with several members
// that fetch, accept, release, reject, forget (lock expiry), leave and
// restart from a snapshot, in a seeded random order, and checks KIP-932's
// guarantees after every step against a model of what was delivered.
func TestPartitionRandomized(t *testing.T) {
	forSeeds(t, 200, runPartitionSim)
}

// forSeeds runs sim once a seed, 1 to n, each a subtest with its own
// generator, so a failure names the seed that replays it.
func forSeeds(t *testing.T, n uint64, sim func(*testing.T, *rand.Rand)) {
	for seed := uint64(1); seed <= n; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { sim(t, rand.New(rand.NewPCG(seed, seed*7919))) })
	}
}

func runPartitionSim(t *testing.T, rng *rand.Rand) {
	limits := Limits{LockDuration: time.Duration(1+rng.IntN(5)) * time.Second, DeliveryLimit: int16(1 + rng.IntN(5)), MaxInFlight: int64(5 + rng.IntN(50))}
	now := time.Unix(1_000_000, 0)
	logEnd := int64(0)
	p := NewPartition(0, limits)
	members := []string{"a", "b", "c"}
	type lock struct {
		owner    string
		deadline time.Time
	}
	held := map[int64]lock{}        // the model's live locks
	deliveries := map[int64]int16{} // times each offset was delivered
	finished := map[int64]string{}  // acknowledged or archived, and how
	for step := 0; step < 400; step++ {
		switch op := rng.IntN(10); {
		case op < 2:
			logEnd += int64(1 + rng.IntN(10))
		case op < 5:
			m := members[rng.IntN(len(members))]
			from := p.NextAvailable(now)
			got := p.Acquire(m, from, logEnd-1, 1+rng.IntN(10), now)
			for _, a := range got {
				for o := a.First; o <= a.Last; o++ {
					if l, ok := held[o]; ok && now.Before(l.deadline) {
						t.Fatalf("step %d: offset %d delivered to %s while %s holds it", step, o, m, l.owner)
					}
					if how, ok := finished[o]; ok {
						t.Fatalf("step %d: offset %d redelivered after %s", step, o, how)
					}
					deliveries[o]++
					if deliveries[o] != a.Deliveries {
						t.Fatalf("step %d: offset %d delivery count %d, model %d", step, o, a.Deliveries, deliveries[o])
					}
					if deliveries[o] > limits.DeliveryLimit {
						t.Fatalf("step %d: offset %d delivered %d times, limit %d", step, o, deliveries[o], limits.DeliveryLimit)
					}
					held[o] = lock{m, now.Add(limits.LockDuration)}
				}
			}
		case op < 8:
			// Some member acknowledges one of its live locks.
			for o, l := range held {
				if !now.Before(l.deadline) {
					continue
				}
				typ := AckType(1 + rng.IntN(3))
				if !p.Acknowledge(l.owner, o, o, []AckType{typ}, now) {
					t.Fatalf("step %d: %s's acknowledgement of its locked offset %d refused", step, l.owner, o)
				}
				other := members[rng.IntN(len(members))]
				if other != l.owner && p.Acknowledge(other, o, o, []AckType{AckAccept}, now) {
					t.Fatalf("step %d: %s acknowledged %d locked by %s", step, other, o, l.owner)
				}
				delete(held, o)
				switch {
				case typ == AckAccept:
					finished[o] = "accept"
				case typ == AckReject:
					finished[o] = "reject"
				case deliveries[o] >= limits.DeliveryLimit:
					finished[o] = "release at the limit"
				}
				break
			}
		case op < 9:
			now = now.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
			p.Expire(now)
			for o, l := range held {
				if !now.Before(l.deadline) {
					delete(held, o)
					if deliveries[o] >= limits.DeliveryLimit {
						finished[o] = "lock expiry at the limit"
					}
				}
			}
		default:
			if rng.IntN(2) == 0 {
				m := members[rng.IntN(len(members))]
				p.ReleaseMember(m)
				for o, l := range held {
					if l.owner == m {
						delete(held, o)
						if deliveries[o] >= limits.DeliveryLimit {
							finished[o] = "release at the limit"
						}
					}
				}
			} else {
				// A restart: locks die with the broker.
				p = RestorePartition(p.Snapshot(), limits)
				for o := range held {
					delete(held, o)
					if deliveries[o] >= limits.DeliveryLimit {
						finished[o] = "restart at the limit"
					}
				}
			}
		}
		for o, how := range finished {
			if st, _ := p.State(o); st != Acknowledged && st != Archived {
				t.Fatalf("step %d: offset %d finished (%s) but in state %d", step, o, how, st)
			}
		}
		if p.Start() > p.End() {
			t.Fatalf("step %d: start %d above end %d", step, p.Start(), p.End())
		}
	}
	// Drain: with time moving past every lock, every record is delivered
	// until finished, and the start reaches the log end.
	for i := 0; i < 100 && p.Start() < logEnd; i++ {
		now = now.Add(limits.LockDuration)
		got := p.Acquire("a", p.NextAvailable(now), logEnd-1, 1000, now)
		for _, a := range got {
			if !p.Acknowledge("a", a.First, a.Last, []AckType{AckAccept}, now) {
				t.Fatalf("drain: acknowledgement of %d-%d refused", a.First, a.Last)
			}
			for o := a.First; o <= a.Last; o++ {
				if _, ok := finished[o]; ok {
					t.Fatalf("drain: finished offset %d redelivered", o)
				}
			}
		}
	}
	if p.Start() != logEnd {
		t.Fatalf("after draining, start %d, log end %d", p.Start(), logEnd)
	}
}

func TestPartitionScenarios(t *testing.T) {
	now := time.Unix(0, 0)
	lim := Limits{LockDuration: time.Second, DeliveryLimit: 2}
	p := NewPartition(10, lim)
	got := p.Acquire("a", 10, 14, 100, now)
	if len(got) != 1 || got[0] != (AcquiredRun{10, 14, 1}) {
		t.Fatalf("first acquisition %v", got)
	}
	if again := p.Acquire("b", 10, 14, 100, now); len(again) != 0 {
		t.Fatalf("b acquired %v while a holds the locks", again)
	}
	// a accepts 10-11, releases 12, rejects 13; 14's lock runs out.
	if !p.Acknowledge("a", 10, 13, []AckType{AckAccept, AckAccept, AckRelease, AckReject}, now) {
		t.Fatal("acknowledgement refused")
	}
	if p.Start() != 12 {
		t.Fatalf("start %d after accepting 10-11", p.Start())
	}
	now = now.Add(time.Second)
	got = p.Acquire("b", p.NextAvailable(now), 14, 100, now)
	want := []AcquiredRun{{12, 12, 2}, {14, 14, 2}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("redelivery %v, want %v", got, want)
	}
	// Second delivery was the last: releasing archives.
	if !p.Acknowledge("b", 12, 12, []AckType{AckRelease}, now) {
		t.Fatal("release refused")
	}
	if st, _ := p.State(12); st != Archived && st != Acknowledged {
		t.Fatalf("12 in state %d after its last release", st)
	}
	if p.Start() != 14 {
		t.Fatalf("start %d with 12 and 13 archived and 14 locked", p.Start())
	}
	now = now.Add(time.Second)
	p.Expire(now)
	if p.Start() != 15 {
		t.Fatalf("start %d once everything is finished", p.Start())
	}
}
