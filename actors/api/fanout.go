package api

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/gather"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/actors/routing"
	"github.com/samsa-io/samsa/wire/kerr"
)

// fanOut is the one way a request reaches several partition actors: it
// collects one typed message per partition the request touches, sends
// them all, and runs done once every partition has answered into its
// message's Out, or with timedOut after the gather timeout (an actor
// died and its message went to dead letters); then the parts' outputs
// must not be read, since late ones may still be writing, and the
// handler answers from a fresh response.
type fanOut struct {
	pids []*actor.PID
	msgs []partition.Request
}

// to adds msg for topic/partition if the routing table has an actor for
// it, and returns the code to answer the partition with otherwise
// (UNKNOWN_TOPIC_OR_PARTITION, or NOT_LEADER_OR_FOLLOWER for a partition
// whose log is offline).
func (f *fanOut) to(routes *routing.Routes, topic string, p int32, msg partition.Request) kerr.Code {
	pid, code := routes.Lookup(topic, p)
	if code == kerr.None {
		f.add(pid, msg)
	}
	return code
}

// add adds msg for the actor pid.
func (f *fanOut) add(pid *actor.PID, msg partition.Request) {
	f.pids = append(f.pids, pid)
	f.msgs = append(f.msgs, msg)
}

// send sends every message and calls done as described above.
func (f *fanOut) send(e *env.Env, done func(timedOut bool)) {
	g := gather.New(len(f.pids), e.GatherTimeout, func(_ []int64, timedOut bool) { done(timedOut) })
	for i, pid := range f.pids {
		f.msgs[i].ReplyTo(gather.Slot{G: g, I: i})
		e.Send(pid, f.msgs[i])
	}
}
