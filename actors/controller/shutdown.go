package controller

import (
	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ControlledShutdown is a broker about to stop asking the controller to
// move its work away (Kafka's doControlledShutdown). The broker is marked
// shutting down (it can no longer be elected or join an ISR); partitions
// it leads get another leader from their ISR; partitions it follows stop
// on it and shrink it out of their ISR. Partitions with one replica, or
// queued for deletion, are left alone. The answer (Effects.Reply) lists
// the partitions it still leads; the broker asks again until none are
// left or it gives up.
func (c *Core) ControlledShutdown(req *kmsg.ControlledShutdownRequest) Effects {
	c.begin()
	resp := req.ResponseKind().(*kmsg.ControlledShutdownResponse)
	resp.PartitionsRemaining = []kmsg.ControlledShutdownResponsePartitionsRemaining{}
	b, ok := c.brokers[req.BrokerID]
	switch {
	case !ok:
		resp.ErrorCode = int16(kerr.BrokerNotAvailable)
	case req.BrokerEpoch != -1 && req.BrokerEpoch < b.Epoch:
		resp.ErrorCode = int16(kerr.StaleBrokerEpoch)
	}
	if resp.ErrorCode != 0 {
		c.fx.Reply = resp
		return c.end()
	}
	id := req.BrokerID
	c.shuttingDown[id] = true
	var led, followed []*partition
	for _, r := range c.replicasOn([]int32{id}) {
		p := r.p
		if len(p.replicas) <= 1 || p.state == nil || c.del.queued[p.tp.Topic] {
			continue
		}
		if p.state.Leader == id {
			led = append(led, p)
		} else {
			followed = append(followed, p)
		}
	}
	c.toOnline(led, c.controlledShutdownElection)
	for _, p := range followed {
		c.addStopReplica(id, p, false)
	}
	c.flush()
	c.offlineReplicas(id, followed)
	for _, p := range c.allPartitions() {
		if p.state != nil && p.state.Leader == id && len(p.replicas) > 1 && !c.del.queued[p.tp.Topic] {
			rem := kmsg.NewControlledShutdownResponsePartitionsRemaining()
			rem.Topic, rem.Partition = p.tp.Topic, p.tp.Partition
			resp.PartitionsRemaining = append(resp.PartitionsRemaining, rem)
		}
	}
	c.fx.Reply = resp
	if len(c.fx.Writes) > 0 {
		c.reply = func(WriteError) Effects {
			failed := req.ResponseKind().(*kmsg.ControlledShutdownResponse)
			failed.ErrorCode = int16(kerr.UnknownServerError)
			return Effects{Reply: failed}
		}
	}
	return c.end()
}
