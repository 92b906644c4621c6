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
// them all, and runs done once every partition has answered, or with
// timedOut after the gather timeout (an actor died and its message went
// to dead letters).
//
// P is the response's per-partition type. Each message answers into its
// own copy of its partition's place in the response, filled with the
// place's defaults; the copies are put in place only once every
// partition has answered. After a timeout the places of the partitions
// asked are marked instead (timedOut: REQUEST_TIMED_OUT), so a late
// answer lands in a copy nobody reads, and the partitions answered in the
// plan (unknown topics, offline logs) keep their own codes.
type fanOut[P any] struct {
	pids     []*actor.PID
	msgs     []partition.Request
	places   []*P
	copies   []P
	timedOut func(*P)
}

// newFanOut prepares a fan-out of at most n partitions (the request's);
// timedOut marks a place whose partition did not answer in time.
func newFanOut[P any](n int, timedOut func(*P)) *fanOut[P] {
	return &fanOut[P]{pids: make([]*actor.PID, 0, n), msgs: make([]partition.Request, 0, n),
		places: make([]*P, 0, n), copies: make([]P, 0, n), timedOut: timedOut}
}

// to adds the message msg makes (answering into out) for topic/partition
// if the routing table has an actor for it, and returns the code to
// answer the partition with otherwise (UNKNOWN_TOPIC_OR_PARTITION, or
// NOT_LEADER_OR_FOLLOWER for a partition whose log is offline).
func (f *fanOut[P]) to(routes *routing.Routes, topic string, p int32, place *P, msg func(out *P) partition.Request) kerr.Code {
	pid, code := routes.Lookup(topic, p)
	if code == kerr.None {
		f.add(pid, place, msg)
	}
	return code
}

// add adds the message msg makes for the actor pid, answering into a copy
// of place.
func (f *fanOut[P]) add(pid *actor.PID, place *P, msg func(out *P) partition.Request) {
	if len(f.copies) == cap(f.copies) {
		panic("api: fanOut past its size") // the copies would move under the partitions writing them
	}
	f.places, f.copies = append(f.places, place), append(f.copies, *place)
	f.pids = append(f.pids, pid)
	f.msgs = append(f.msgs, msg(&f.copies[len(f.copies)-1]))
}

// send sends every message, and once all are answered (or the gather
// timeout passed) settles the places and calls done.
func (f *fanOut[P]) send(e *env.Env, done func(timedOut bool)) {
	g := gather.New(len(f.pids), e.GatherTimeout, func(_ []int64, timedOut bool) {
		for i, place := range f.places {
			if timedOut {
				f.timedOut(place)
			} else {
				*place = f.copies[i]
			}
		}
		done(timedOut)
	})
	for i, pid := range f.pids {
		f.msgs[i].ReplyTo(gather.Slot{G: g, I: i})
		e.Send(pid, f.msgs[i])
	}
}

// partitionsOf counts the partitions of a request's topics.
func partitionsOf[T any](topics []T, parts func(*T) int) int {
	n := 0
	for i := range topics {
		n += parts(&topics[i])
	}
	return n
}
