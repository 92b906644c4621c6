package sharegroup

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/samsa-io/samsa/actors/catalog"
	"github.com/samsa-io/samsa/actors/coordinator"
	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/actors/shards"
	"github.com/samsa-io/samsa/wire/kerr"
)

// StateTopic keeps every share partition's durable state, as Kafka's
// share coordinator does: one ShareSnapshot record per share partition,
// compacted so the newest snapshot of each is what a restart reads.
const StateTopic = "__share_group_state"

// shareSnapshotType is the record type in the key (Kafka's coordinator
// records open with it; 0 is ShareSnapshot, 1 ShareUpdate).
const shareSnapshotType = 0

// EncodeSnapshotKey is ShareSnapshotKey: type, group id, topic id,
// partition.
func EncodeSnapshotKey(group string, tp TopicPartition) []byte {
	b := binary.BigEndian.AppendUint16(nil, shareSnapshotType)
	b = binary.BigEndian.AppendUint16(b, uint16(len(group)))
	b = append(b, group...)
	b = append(b, tp.Topic[:]...)
	return binary.BigEndian.AppendUint32(b, uint32(tp.Partition))
}

// EncodeSnapshotValue is ShareSnapshotValue v0 (flexible): snapshot
// epoch, state epoch, leader epoch, start offset, state batches.
func EncodeSnapshotValue(s Snapshot) []byte {
	be := binary.BigEndian
	b := be.AppendUint16(nil, 0) // value version
	b = be.AppendUint16(b, 0)    // snapshot epoch
	b = be.AppendUint32(b, 0)    // state epoch
	b = be.AppendUint32(b, math.MaxUint32)
	b = be.AppendUint64(b, uint64(s.Start))
	b = binary.AppendUvarint(b, uint64(len(s.Batches)+1))
	for _, x := range s.Batches {
		b = be.AppendUint64(b, uint64(x.First))
		b = be.AppendUint64(b, uint64(x.Last))
		b = append(b, byte(x.State))
		b = be.AppendUint16(b, uint16(x.Deliveries))
		b = append(b, 0) // no tagged fields
	}
	return append(b, 0)
}

var errSnapshot = errors.New("sharegroup: malformed share snapshot record")

// maxBatchSpan bounds how far above the start offset a state batch may
// reach on load: far above any share partition's in-flight records, far
// below a loop that would hang the actor on a damaged record.
const maxBatchSpan = 1 << 24

// DecodeSnapshot reads one record of the state topic back; a tombstone
// (nil value) decodes to its key and an empty snapshot.
func DecodeSnapshot(key, value []byte) (string, TopicPartition, Snapshot, error) {
	be := binary.BigEndian
	var tp TopicPartition
	if len(key) < 4 || be.Uint16(key) != shareSnapshotType {
		return "", tp, Snapshot{}, errSnapshot
	}
	n := int(be.Uint16(key[2:]))
	if len(key) != 4+n+16+4 {
		return "", tp, Snapshot{}, errSnapshot
	}
	group := string(key[4 : 4+n])
	copy(tp.Topic[:], key[4+n:])
	tp.Partition = int32(be.Uint32(key[4+n+16:]))
	if value == nil {
		return group, tp, Snapshot{}, nil // a tombstone: the state was deleted
	}
	if len(value) < 2+2+4+4+8+1 || be.Uint16(value) != 0 {
		return "", tp, Snapshot{}, errSnapshot
	}
	s := Snapshot{Start: int64(be.Uint64(value[12:]))}
	if s.Start < 0 {
		return "", tp, Snapshot{}, errSnapshot
	}
	rest := value[20:]
	count, k := binary.Uvarint(rest)
	if k <= 0 || count == 0 {
		return "", tp, Snapshot{}, errSnapshot
	}
	rest = rest[k:]
	for i := uint64(0); i < count-1; i++ {
		if len(rest) < 8+8+1+2+1 {
			return "", tp, Snapshot{}, errSnapshot
		}
		b := StateBatch{
			First: int64(be.Uint64(rest)), Last: int64(be.Uint64(rest[8:])),
			State: RecordState(rest[16]), Deliveries: int16(be.Uint16(rest[17:])),
		}
		// A batch the core could not hold (a state it has no meaning
		// for, offsets out of order or reaching further above the start
		// than any share partition keeps in flight) is damage, not state.
		if (b.State != Available && b.State != Acknowledged && b.State != Archived) ||
			b.First < s.Start || b.Last < b.First || b.Last-s.Start >= maxBatchSpan {
			return "", tp, Snapshot{}, errSnapshot
		}
		s.Batches = append(s.Batches, b)
		rest = rest[20:]
	}
	return group, tp, s, nil
}

// startLoad reads the state topic into restored before the first
// request is served, or creates the topic on a broker that never had it.
func (a *coordinatorActor) startLoad() {
	if a.loading {
		return
	}
	a.loading = true
	if _, ok := a.env.Routes.Load().Topics[StateTopic]; ok {
		a.readFrom(0)
		return
	}
	self, root := a.self, a.root
	a.env.Send(a.meta, &catalog.CreateInternalTopic{
		Name: StateTopic, Partitions: 1,
		Configs: [][2]string{{"cleanup.policy", "compact"}, {"compression.type", "producer"}},
		Done:    func(_ int32, _ bool, err error) { root.Send(self, &stateReady{err}) },
	})
}

func (a *coordinatorActor) readFrom(offset int64) {
	self, root := a.self, a.root
	shards.ReadChunk(a.env, StateTopic, 0, offset, func(c shards.Chunk) { root.Send(self, &stateLoad{c}) })
}

func (a *coordinatorActor) loadStep(c shards.Chunk) {
	switch {
	case c.TimedOut:
		a.loaded(errors.New("the state topic did not answer"))
		return
	case c.Err != nil:
		a.loaded(c.Err)
		return
	}
	err := coordinator.ReplayBatches(c.Data, func(key, value []byte) {
		g, tp, s, err := DecodeSnapshot(key, value)
		if err != nil {
			a.env.Log.Warn("sharegroup: skipping a record of the state topic", "err", err)
			return
		}
		if value == nil {
			delete(a.restored, partKey{g, tp})
			return
		}
		a.restored[partKey{g, tp}] = s
	})
	if err != nil {
		a.loaded(err)
		return
	}
	if c.Next >= c.End || len(c.Data) == 0 {
		a.loaded(nil)
		return
	}
	a.readFrom(c.Next)
}

// loaded serves the queued calls, or fails them if the state could not
// be read (the next call tries again).
func (a *coordinatorActor) loaded(err error) {
	a.loading = false
	q := a.queue
	a.queue = nil
	if err != nil {
		a.env.Log.Error("share groups are unavailable: their state topic could not be read", "topic", StateTopic, "err", err)
		for _, c := range q {
			replyError(c, kerr.CoordinatorNotAvailable)
		}
		return
	}
	a.ready = true
	if n := len(a.restored); n > 0 {
		a.env.Log.Info("share group state loaded", "share_partitions", n)
	}
	for _, c := range q {
		a.call(c)
	}
}

// persist appends the snapshots of the touched share partitions and
// calls done once they are durable (or failed).
func (a *coordinatorActor) persist(touched map[partKey]bool, done func(kerr.Code)) {
	if len(touched) == 0 {
		done(kerr.None)
		return
	}
	if a.cl != nil {
		a.ensureTopic(func(err error) {
			if err != nil {
				a.env.Log.Warn("sharegroup: the state topic cannot be made", "err", err)
				done(kerr.CoordinatorNotAvailable)
				return
			}
			a.persistCluster(touched, done)
		})
		return
	}
	recs := make([]group.Record, 0, len(touched))
	for k := range touched {
		rec := group.Record{Key: EncodeSnapshotKey(k.group, k.tp)}
		if p := a.parts[k]; p != nil {
			rec.Value = EncodeSnapshotValue(p.Snapshot())
		}
		// No share partition: its state was deleted, and the tombstone
		// lets compaction drop it.
		recs = append(recs, rec)
	}
	shards.Append(a.env, StateTopic, 0, coordinator.BuildBatch(recs, a.now().UnixMilli()), done)
}
