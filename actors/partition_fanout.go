package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/samsa-io/samsa/actors/gather"
	"github.com/samsa-io/samsa/wire/kerr"
)

// lookupPartition finds the actor of topic/partition: an unknown topic or
// partition is UNKNOWN_TOPIC_OR_PARTITION, a known one whose actor is gone
// (its log cannot open, or it gave up) NOT_LEADER_OR_FOLLOWER.
func lookupPartition(routes *Routes, topic string, partition int32) (*actor.PID, kerr.Code) {
	tr := routes.Topics[topic]
	switch {
	case tr == nil || partition < 0 || int(partition) >= len(tr.Partitions):
		return nil, kerr.UnknownTopicOrPartition
	case tr.Partitions[partition] == nil:
		return nil, kerr.NotLeaderOrFollower
	}
	return tr.Partitions[partition], kerr.None
}

// partitionTasks collects functions to run inside partition actors, one
// per partition of a request, for the APIs that read or change a log but
// do not wait (ListOffsets, DeleteRecords, OffsetForLeaderEpoch).
type partitionTasks struct {
	pids []*actor.PID
	runs []func(p *partitionActor)
}

func (t *partitionTasks) add(pid *actor.PID, run func(p *partitionActor)) {
	t.pids = append(t.pids, pid)
	t.runs = append(t.runs, run)
}

// start sends every task and calls done once all have run, or with
// timedOut set after the broker's gather timeout (a dead actor): then
// the tasks' outputs must not be read, late ones may still be writing.
func (t *partitionTasks) start(b *Broker, done func(timedOut bool)) {
	g := gather.New(len(t.pids), b.opts.GatherTimeout, func(_ []int64, timedOut bool) { done(timedOut) })
	for i, pid := range t.pids {
		b.system.Root.Send(pid, &partitionTask{run: t.runs[i], g: g, slot: i})
	}
}

// checkLeaderEpoch compares a client's current leader epoch (-1: not
// given) with the partition's: an older one is FENCED_LEADER_EPOCH (the
// client's metadata is stale), a newer one UNKNOWN_LEADER_EPOCH (ours is).
func checkLeaderEpoch(client, ours int32) kerr.Code {
	switch {
	case client < 0 || client == ours:
		return kerr.None
	case client < ours:
		return kerr.FencedLeaderEpoch
	}
	return kerr.UnknownLeaderEpoch
}
