package partition

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/segment/segmenttest"
)

// chanOp is a FetchOp whose completions arrive on a channel.
type chanOp chan *FetchSlot

func (o chanOp) Complete(f *FetchSlot)           { o <- f }
func (o chanOp) Progress(int32, int, int64) bool { return false }
func (o chanOp) Stale(int32) bool                { return true }
func (o chanOp) MinBytes() int64                 { return 1 }

// TestRestartStartsFromTheCheckpointedHighWatermark: a cluster-mode
// partition opened on a directory whose replication-offset-checkpoint
// says 30 starts at high watermark 30, as follower (it serves consumers
// up to it before its leader says anything) and as leader (its high
// watermark does not fall back to the log start while it waits for
// its followers).
func TestRestartStartsFromTheCheckpointedHighWatermark(t *testing.T) {
	path := t.TempDir()
	d, err := segment.OpenDir(path, segment.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := d.Open("t", 0, segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	segmenttest.AppendBatches(t, l, 5, 10, 100)
	l.SetHighWatermark(30)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	sys := actor.NewActorSystem()
	t.Cleanup(sys.Shutdown)
	for _, follower := range []bool{true, false} {
		d, err := segment.OpenDir(path, segment.Options{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		var spec atomic.Pointer[metadata.PartitionSpec]
		spec.Store(&metadata.PartitionSpec{Topic: "t", Partition: 0, LeaderEpoch: 4, Follower: follower, Replicas: []int32{1, 2}, ISR: []int32{1, 2},
			Config: topicConfig(t, "flush.messages", "1")})
		pid := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor {
			return NewActor(Config{Spec: &spec, View: NewView(), Dir: d, Log: quiet, Replication: &Replication{Me: 1}})
		}))
		op := make(chanOp, 1)
		sys.Root.Send(pid, &FetchSlot{Op: op, Offset: 0, MaxBytes: 1 << 20, LeaderEpoch: -1, ClientMetadata: true})
		select {
		case f := <-op:
			if f.Code != 0 || f.HW != 30 || len(segmenttest.BatchOffsets(t, f.Res)) != 3 {
				t.Fatalf("follower %v: code %v, high watermark %d, batches %v; want 30 and 3 batches", follower, f.Code, f.HW, segmenttest.BatchOffsets(t, f.Res))
			}
			f.Release()
		case <-time.After(10 * time.Second):
			t.Fatal("the partition did not answer")
		}
		if err := sys.Root.StopFuture(pid).Wait(); err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
