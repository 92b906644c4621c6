package api

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/actors/routing"
	"github.com/samsa-io/samsa/wire/kerr"
)

// A fan-out puts the answers in place once all are in; after the gather
// timeout it marks the partitions asked REQUEST_TIMED_OUT, keeps the
// codes of those answered in the plan, and a late answer changes nothing.
func TestFanOutSettlesOrTimesOut(t *testing.T) {
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	t.Cleanup(sys.Shutdown)
	held := make(chan *partition.ListOffsets, 4)
	answering := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*partition.ListOffsets); ok {
			m.Out.Offset = 42
			m.Reply.Put(0)
		}
	}))
	silent := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*partition.ListOffsets); ok {
			held <- m // answered only after the timeout
		}
	}))
	routes := &routing.Routes{Topics: map[string]*routing.Topic{"t": {Name: "t", Partitions: []*actor.PID{answering, silent}}}}
	mark := func(p *kmsg.ListOffsetsResponseTopicPartition) { p.ErrorCode = int16(kerr.RequestTimedOut) }
	ask := func(gatherTimeout time.Duration, partitions ...int32) ([]kmsg.ListOffsetsResponseTopicPartition, bool) {
		e := &env.Env{System: sys, GatherTimeout: gatherTimeout}
		out := make([]kmsg.ListOffsetsResponseTopicPartition, len(partitions))
		f := newFanOut(len(partitions), mark)
		for i, p := range partitions {
			out[i].Default()
			out[i].ErrorCode = int16(f.to(routes, "t", p, &out[i], func(o *kmsg.ListOffsetsResponseTopicPartition) partition.Request {
				return &partition.ListOffsets{Out: o}
			}))
		}
		done := make(chan bool, 1)
		f.send(e, func(timedOut bool) { done <- timedOut })
		return out, <-done
	}

	out, timedOut := ask(time.Minute, 0, 7)
	if timedOut || out[0].Offset != 42 || out[0].ErrorCode != 0 || out[1].ErrorCode != kerr.UnknownTopicOrPartition.Int16() {
		t.Fatalf("answered fan-out: timed out %v, %+v", timedOut, out)
	}
	out, timedOut = ask(20*time.Millisecond, 0, 1, 7)
	if !timedOut {
		t.Fatal("a partition that never answered did not time the fan-out out")
	}
	for i, want := range []kerr.Code{kerr.RequestTimedOut, kerr.RequestTimedOut, kerr.UnknownTopicOrPartition} {
		if got := kerr.Code(out[i].ErrorCode); got != want {
			t.Errorf("partition %d after the timeout: %v, want %v", i, got, want)
		}
	}
	late := <-held
	late.Out.Offset = 99 // the late answer writes its copy, not the response
	late.Reply.Put(0)
	if out[1].Offset == 99 {
		t.Fatal("a late answer reached the response")
	}
}
