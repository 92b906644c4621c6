package coordinator

import (
	"strconv"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// In cluster mode a group's coordinator is the leader of its
// __consumer_offsets partition, wherever that is: this broker runs the
// coordinator actor of a partition only while it leads it (the actor
// loads the partition's groups when it starts, as after a restart), and
// stops it when leadership moves away. The published table then has a
// nil entry for every partition led elsewhere, which the router answers
// NOT_COORDINATOR, sending the client back to FindCoordinator.

// SetRole is told by the metadata actor whenever this broker starts or
// stops leading __consumer_offsets partition p of a topic with n
// partitions.
func (c *Coordinators) SetRole(p, n int32, leading bool, epoch int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.PIDs()
	next := make([]*actor.PID, max(int(n), len(cur)))
	copy(next, cur)
	if p < 0 || int(p) >= len(next) {
		return
	}
	old := next[p]
	switch {
	case leading && old == nil:
		pid, err := c.spawnOne(p, epoch)
		if err != nil {
			c.env.Log.Error("cannot start a group coordinator; its groups are unavailable", "partition", p, "err", err)
			return
		}
		next[p] = pid
		c.env.Log.Info("coordinating the groups of a __consumer_offsets partition", "partition", p, "leader_epoch", epoch)
	case !leading && old != nil:
		c.env.System.Root.Stop(old)
		next[p] = nil
		c.env.Log.Info("no longer coordinating the groups of a __consumer_offsets partition", "partition", p)
	}
	c.pids.Store(&next)
}

// spawnOne starts the coordinator actor of partition p for the leader
// epoch it leads at (the name tells its incarnations apart: one stopping
// may still hold the previous name).
func (c *Coordinators) spawnOne(p, epoch int32) (*actor.PID, error) {
	cfg, every := groupConfig(c.env.Config)
	fresh := new(atomic.Bool)
	props := actor.PropsFromProducer(func() actor.Actor {
		a := NewActor(c.env, p, cfg, every).(*groupCoordinatorActor)
		a.fresh = fresh
		return a
	}, actor.WithDispatcher(c.env.Dispatcher))
	return c.env.System.Root.SpawnNamed(props, "group-coordinator-"+strconv.Itoa(int(p))+"-e"+strconv.Itoa(int(epoch)))
}

// clusterStarted publishes a table of n partitions once __consumer_offsets
// exists in the cluster (the entries fill as leaderships arrive) and
// wakes the requests waiting for it.
func (c *Coordinators) clusterStarted(n int32) {
	c.mu.Lock()
	cur := c.PIDs()
	if len(cur) < int(n) {
		next := make([]*actor.PID, n)
		copy(next, cur)
		c.pids.Store(&next)
	}
	w := c.waiters
	c.waiters = nil
	c.mu.Unlock()
	for _, fn := range w {
		fn(true)
	}
}
