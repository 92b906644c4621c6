package partition

import (
	"log/slog"

	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/segment"
)

// Local is a partition's fetch side run on its caller's goroutine instead
// of by an actor: the same code a partition actor runs for a FetchSlot and
// for a rising high watermark. The fetch package's tests drive fetches
// against it with exact control over when each partition answers. The
// caller must use one Local from one goroutine at a time, as an actor
// would.
type Local struct{ p *partitionActor }

// NewLocal serves l (topic "t" in logs) with view published for fetches.
func NewLocal(l *segment.Log, view *View, partition int32, log *slog.Logger) *Local {
	return &Local{p: &partitionActor{plog: l, view: view, log: log,
		spec: metadata.PartitionSpec{Topic: "t", Partition: partition}}}
}

// ServeFetch reads the partition for f and completes it, as the actor
// does on a FetchSlot message.
func (l *Local) ServeFetch(f *FetchSlot) { l.p.serveFetch(f) }

// Publish turns the view on with the partition's current state.
func (l *Local) Publish() { l.p.publishView() }

// CatchUp raises the high watermark to the log end (as an acknowledged
// append does under flush policy never) and wakes the fetches it passes.
func (l *Local) CatchUp() {
	l.p.core, _ = NewCore(Rules{}, nil, -1, l.p.plog.LogEndOffset(), 0, LogState{})
	l.p.onHighWatermark()
}

// ReadChunk answers m as the actor does.
func (l *Local) ReadChunk(m *ReadChunk) {
	m.Out.Data, m.Out.Next, m.Out.End, m.Out.Err = l.p.readChunk(m)
	m.Reply.Put(0)
}

// Log is the partition's log.
func (l *Local) Log() *segment.Log { return l.p.plog }
