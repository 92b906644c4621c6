package shards

import (
	"errors"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/gather"
	"github.com/samsa-io/samsa/actors/partition"
)

// ErrPartitionMissing: the internal topic's partition has no actor here.
var ErrPartitionMissing = errors.New("shards: the partition has no actor on this broker")

// Chunk is one read of a partition while its actor loads: whole batches
// below the high watermark from the offset asked, the offset to read
// next and the end the load stops at; TimedOut when the partition did
// not answer within the gather timeout.
type Chunk struct {
	Data      []byte
	Next, End int64
	Err       error
	TimedOut  bool
}

// ReadChunk asks topic/p's partition actor for the chunk at offset and
// hands it to deliver, on some other goroutine (a coordinator's actor
// sends it to itself as a message).
func ReadChunk(e *env.Env, topic string, p int32, offset int64, deliver func(Chunk)) {
	read(e, topic, p, &partition.ReadChunk{From: offset}, deliver)
}

// ReadCommitted is ReadChunk for records handed to consumers (share
// groups): at most maxBytes (but always one batch), and below the high
// watermark even on a leader, whose coordinator loads read to the log end.
func ReadCommitted(e *env.Env, topic string, p int32, offset int64, maxBytes int, deliver func(Chunk)) {
	read(e, topic, p, &partition.ReadChunk{From: offset, MaxBytes: maxBytes, Committed: true}, deliver)
}

func read(e *env.Env, topic string, p int32, m *partition.ReadChunk, deliver func(Chunk)) {
	pid, ok := e.Routes.Load().Partition(topic, p)
	if !ok {
		deliver(Chunk{Err: ErrPartitionMissing})
		return
	}
	var chunk partition.Chunk
	g := gather.New(1, e.GatherTimeout, func(_ []int64, timedOut bool) {
		if timedOut {
			deliver(Chunk{TimedOut: true})
			return
		}
		deliver(Chunk{Data: chunk.Data, Next: chunk.Next, End: chunk.End, Err: chunk.Err})
	})
	m.Out, m.Reply = &chunk, gather.Slot{G: g}
	e.Send(pid, m)
}
