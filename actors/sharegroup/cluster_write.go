package sharegroup

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/coordinator"
	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/actors/shards"
	"github.com/samsa-io/samsa/wire/kerr"
)

// stateWriter is one state partition's writes: one append in flight at
// a time, so snapshots land in the order they were taken (two appends
// in flight at once, one of them on another broker's connection, could
// land the older snapshot last, and a new leader would load it).
// Changes made while an append is in flight wait in pending and go, at
// their newest, in the next one.
type stateWriter struct {
	inflight bool
	pending  map[partKey]bool
	waiters  []func(kerr.Code)
}

// stateWritten reports an append to state partition sp done.
type stateWritten struct {
	sp      int32
	code    kerr.Code
	keys    map[partKey]bool
	waiters []func(kerr.Code)
}

// persistCluster appends the touched share partitions' snapshots to their
// state partitions (acks=all, on the state partition's leader, here or on
// another broker) and calls done once all are durable, with the first
// error otherwise; done runs on the actor's goroutine.
func (a *coordinatorActor) persistCluster(touched map[partKey]bool, done func(kerr.Code)) {
	bySP := map[int32][]partKey{}
	for k := range touched {
		sp, _, err := a.stateLeader(k)
		if err != nil {
			a.env.Log.Warn("sharegroup: share state not written", "err", err)
			a.rollBack(touched)
			done(kerr.CoordinatorNotAvailable)
			return
		}
		bySP[sp] = append(bySP[sp], k)
	}
	left, first := len(bySP), kerr.None
	finish := func(code kerr.Code) {
		if code != kerr.None && first == kerr.None {
			first = code
		}
		if left--; left == 0 {
			done(first)
		}
	}
	for sp, keys := range bySP {
		w := a.cl.writers[sp]
		if w == nil {
			w = &stateWriter{pending: map[partKey]bool{}}
			a.cl.writers[sp] = w
		}
		for _, k := range keys {
			w.pending[k] = true
		}
		w.waiters = append(w.waiters, finish)
		if !w.inflight {
			a.flushState(sp, w)
		}
	}
}

// flushState appends the newest snapshots of sp's pending share
// partitions (tombstones for those that are gone).
func (a *coordinatorActor) flushState(sp int32, w *stateWriter) {
	keys, waiters := w.pending, w.waiters
	w.pending, w.waiters, w.inflight = map[partKey]bool{}, nil, true
	recs := make([]group.Record, 0, len(keys))
	var leader int32
	for k := range keys {
		rec := group.Record{Key: EncodeSnapshotKey(k.group, k.tp)}
		if p := a.parts[k]; p != nil {
			rec.Value = EncodeSnapshotValue(p.Snapshot())
		}
		recs = append(recs, rec)
		_, l, err := a.stateLeader(k)
		if err != nil {
			a.onStateWritten(&stateWritten{sp, kerr.CoordinatorNotAvailable, keys, waiters})
			return
		}
		leader = l
	}
	batch := coordinator.BuildBatch(recs, a.now().UnixMilli())
	self, root := a.self, a.root
	reply := func(code kerr.Code) { root.Send(self, &stateWritten{sp, code, keys, waiters}) }
	if leader == a.cl.link.Me {
		shards.Append(a.env, StateTopic, sp, batch, reply)
		return
	}
	go func() { reply(a.produceRemote(leader, sp, batch)) }()
}

// onStateWritten answers the waiters of an append and sends what
// gathered meanwhile. A failed append fails what gathered too, and rolls
// all of it back: the clients are told their changes failed, so they must
// not be written by a later append either.
func (a *coordinatorActor) onStateWritten(m *stateWritten) {
	w := a.cl.writers[m.sp]
	if w != nil {
		w.inflight = false
	}
	if m.code != kerr.None {
		a.env.Log.Warn("sharegroup: share state not written; its share partitions are read again", "partition", m.sp, "err", m.code)
		a.rollBack(m.keys)
		if w != nil {
			a.rollBack(w.pending)
			m.waiters = append(m.waiters, w.waiters...)
			w.pending, w.waiters = map[partKey]bool{}, nil
		}
	}
	for _, fn := range m.waiters {
		fn(m.code)
	}
	if w != nil && len(w.pending) > 0 {
		a.flushState(m.sp, w)
	}
}

// rollBack forgets share partitions whose changes could not be written:
// the changes were answered as failed, so the records they acknowledged
// must come back. They are read again from their last durable state
// before they are served next.
func (a *coordinatorActor) rollBack(keys map[partKey]bool) {
	for k := range keys {
		delete(a.cl.epochs, k)
		delete(a.parts, k)
	}
}

// produceRemote appends batch to a state partition another broker leads,
// with acks=all.
func (a *coordinatorActor) produceRemote(leader, sp int32, batch []byte) kerr.Code {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, int32(a.cl.link.Timeout.Milliseconds())
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = StateTopic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = sp, batch
	rt.Partitions = []kmsg.ProduceRequestTopicPartition{rp}
	req.Topics = []kmsg.ProduceRequestTopic{rt}
	ctx, cancel := context.WithTimeout(context.Background(), a.cl.link.Timeout)
	defer cancel()
	resp, err := a.cl.link.Send(ctx, leader, req, stateProduceVersion)
	if err != nil {
		a.env.Log.Warn("sharegroup: share state not written to its leader", "broker", leader, "partition", sp, "err", err)
		return kerr.RequestTimedOut
	}
	pr := resp.(*kmsg.ProduceResponse)
	if len(pr.Topics) != 1 || len(pr.Topics[0].Partitions) != 1 {
		return kerr.UnknownServerError
	}
	return kerr.Code(pr.Topics[0].Partitions[0].ErrorCode)
}
