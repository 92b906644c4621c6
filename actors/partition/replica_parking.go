package partition

import "sync"

// ParkedReplicaFetches remembers, for each follower broker, the last of
// its fetches that parked on this leader, so that a partition that grows
// while that fetch does not include it can send it back at once.
//
// Why: a follower fetches all the partitions it follows from one leader
// in one request, parked here for up to replica.fetch.wait.max.ms (500 ms)
// when nothing is new. A partition the follower took on after sending it
// (a topic just created, a leadership just moved) is not in that request,
// so the first records produced to it would wait for the parked fetch to
// time out before the follower even asked for them: with acks=all the
// first produce to a new topic took up to half a second. Answering the
// parked fetch early lets the follower ask again, now with the partition.
// Kafka's follower fetchers have the same gap. Closing it costs a look-up
// here per append only while an in-sync follower has not fetched the
// partition yet in this leadership (Core.Fetching); after its first fetch
// every later one names the partition.
//
// What it leaves: a follower that has not taken the partition on yet
// (its LeaderAndIsr still on the way) fetches again without it and parks;
// the partition's next append hurries it again, but a lone record
// appended in that window waits for the parked fetch as before.
//
// Shared by every partition actor of the broker; safe for concurrent use;
// a nil *ParkedReplicaFetches does nothing.
type ParkedReplicaFetches struct {
	mu sync.Mutex
	by map[int32]parkedReplicaFetch
}

type parkedReplicaFetch struct {
	op    FetchOp
	round int32
}

// Hurrier is a FetchOp that can be answered before its max wait: Hurry
// answers the op with what it has if round is still its current one.
type Hurrier interface {
	Hurry(round int32)
}

// NewParkedReplicaFetches returns an empty registry.
func NewParkedReplicaFetches() *ParkedReplicaFetches {
	return &ParkedReplicaFetches{by: make(map[int32]parkedReplicaFetch)}
}

// park records that follower's fetch op parked in round.
func (p *ParkedReplicaFetches) park(follower int32, op FetchOp, round int32) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.by[follower] = parkedReplicaFetch{op: op, round: round}
	p.mu.Unlock()
}

// hurry answers follower's parked fetch now, if one is parked.
func (p *ParkedReplicaFetches) hurry(follower int32) {
	if p == nil {
		return
	}
	p.mu.Lock()
	f, ok := p.by[follower]
	if ok && f.op.Stale(f.round) {
		delete(p.by, follower) // answered since: nothing to hurry, nothing to keep alive
		ok = false
	}
	p.mu.Unlock()
	if h, can := f.op.(Hurrier); ok && can {
		h.Hurry(f.round)
	}
}
