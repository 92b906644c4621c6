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
	c.t.SetRole(p, n, leading, epoch)
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
