package shards

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// Table holds the actors of one internal topic's partitions.
type Table struct {
	// Spawn starts partition p's actor for leader epoch epoch (0 alone).
	Spawn func(p, epoch int32) (*actor.PID, error)
	// Stop stops one actor (cluster mode: leadership moved away).
	Stop func(pid *actor.PID)
	// Log and What name the actors in log lines ("group coordinator").
	Log  *slog.Logger
	What string

	pids atomic.Pointer[[]*actor.PID]
	// Creating is set once the topic exists or is being made.
	Creating atomic.Bool

	mu      sync.Mutex
	waiters []func(ok bool)
}

// PIDs returns the actors by partition, or nil before they start.
func (t *Table) PIDs() []*actor.PID {
	if p := t.pids.Load(); p != nil {
		return *p
	}
	return nil
}

// WhenStarted runs fn once the table is published (ok) or failed to
// start; at once if it is. Otherwise ensure is called to make the topic
// (it must end in Started or ClusterStarted).
func (t *Table) WhenStarted(fn func(ok bool), ensure func()) {
	t.mu.Lock()
	if p := t.pids.Load(); p != nil {
		t.mu.Unlock()
		fn(true)
		return
	}
	t.waiters = append(t.waiters, fn)
	t.mu.Unlock()
	ensure()
}

// Started publishes the actors (nil: they failed to start) and wakes the
// waiters.
func (t *Table) Started(pids []*actor.PID) {
	t.mu.Lock()
	if pids != nil {
		t.pids.Store(&pids)
	}
	w := t.waiters
	t.waiters = nil
	t.mu.Unlock()
	for _, fn := range w {
		fn(pids != nil)
	}
}

// StartAll spawns an actor for each of n partitions (alone) and
// publishes them; the first failure publishes nothing.
func (t *Table) StartAll(n int32) {
	pids := make([]*actor.PID, n)
	for p := range n {
		pid, err := t.Spawn(p, 0)
		if err != nil {
			t.Log.Error("cannot start a "+t.What+"; its partition is unavailable", "partition", p, "err", err)
			t.Started(nil)
			return
		}
		pids[p] = pid
	}
	t.Started(pids)
}

// SetRole is told whenever this broker starts or stops leading partition
// p (of n) at leader epoch epoch: the partition's actor starts or stops.
func (t *Table) SetRole(p, n int32, leading bool, epoch int32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := t.PIDs()
	next := make([]*actor.PID, max(int(n), len(cur)))
	copy(next, cur)
	if p < 0 || int(p) >= len(next) {
		return
	}
	old := next[p]
	switch {
	case leading && old == nil:
		pid, err := t.Spawn(p, epoch)
		if err != nil {
			t.Log.Error("cannot start a "+t.What+"; its partition is unavailable", "partition", p, "err", err)
			return
		}
		next[p] = pid
		t.Log.Info("leading a partition: its "+t.What+" starts", "partition", p, "leader_epoch", epoch)
	case !leading && old != nil:
		t.Stop(old)
		next[p] = nil
		t.Log.Info("no longer leading a partition: its "+t.What+" stops", "partition", p)
	}
	t.pids.Store(&next)
}

// ClusterStarted publishes a table of n partitions once the topic exists
// in the cluster (entries fill as leaderships arrive) and wakes the
// waiters.
func (t *Table) ClusterStarted(n int32) {
	t.mu.Lock()
	cur := t.PIDs()
	if len(cur) < int(n) {
		next := make([]*actor.PID, n)
		copy(next, cur)
		t.pids.Store(&next)
	}
	w := t.waiters
	t.waiters = nil
	t.mu.Unlock()
	for _, fn := range w {
		fn(true)
	}
}
