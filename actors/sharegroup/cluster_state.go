package sharegroup

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/catalog"
	"github.com/samsa-io/samsa/actors/coordinator"
	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/actors/shards"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Versions of the requests a share coordinator sends to the leader of a
// state partition on another broker: both still name topics (v13 of
// each names them by id).
const (
	stateProduceVersion = 9
	stateFetchVersion   = 12
)

type (
	// shareLoaded brings back one share partition's snapshot, read from
	// its state partition for the leader epoch epoch.
	shareLoaded struct {
		key   partKey
		epoch int32
		snap  Snapshot
		found bool
		err   error
	}
	topicMade struct{ err error }
)

// prepare parks a ShareFetch or ShareAcknowledge until the share
// partitions it touches are loaded at the data partitions' current leader
// epochs; it reports whether it parked c (the load sends it back to call).
func (a *coordinatorActor) prepare(c *Call) bool {
	var groupID, member string
	var tps []TopicPartition
	switch r := c.Req.Body.(type) {
	case *kmsg.ShareFetchRequest:
		groupID, member = deref(r.GroupID), deref(r.MemberID)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, TopicPartition{t.TopicID, p.Partition})
			}
		}
		if s := a.sessions[[2]string{groupID, member}]; s != nil {
			tps = append(tps, s.Partitions...)
		}
		if r.ShareSessionEpoch == 0 && !c.reread && !a.hasSession(groupID) {
			c.reread = true
			// The group's first session here since all closed: its share
			// partitions are read again, since an admin may have moved
			// or deleted them (Alter/DeleteShareGroupOffsets, on the
			// coordinator, need the group empty) in the meantime.
			for k := range a.cl.epochs {
				if k.group == groupID {
					delete(a.cl.epochs, k)
				}
			}
		}
	case *kmsg.ShareAcknowledgeRequest:
		groupID, member = deref(r.GroupID), deref(r.MemberID)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, TopicPartition{t.TopicID, p.Partition})
			}
		}
	default:
		return false
	}
	a.cl.seen[[2]string{groupID, member}] = a.now()
	parked := false
	for _, tp := range tps {
		epoch, code := a.leaderEpoch(tp)
		k := partKey{groupID, tp}
		if code != kerr.None || a.cl.failed[k] {
			continue // answered per partition
		}
		if a.loadedAt(k, epoch) {
			continue
		}
		_, busy := a.cl.waiting[k] // a load of k is on its way
		switch {
		case !parked:
			// c waits for one load; back in call, it finds the others.
			parked = true
			a.cl.waiting[k] = append(a.cl.waiting[k], c)
		case !busy:
			a.cl.waiting[k] = []*Call{}
		}
		if busy {
			continue
		}
		a.loadShare(k, epoch)
	}
	return parked
}

// hasSession reports whether any member of groupID has a share session
// here.
func (a *coordinatorActor) hasSession(groupID string) bool {
	for key := range a.sessions {
		if key[0] == groupID {
			return true
		}
	}
	return false
}

// loadShare reads share partition k's latest snapshot from its state
// partition, on another goroutine, and sends it back as shareLoaded.
func (a *coordinatorActor) loadShare(k partKey, epoch int32) {
	self, root := a.self, a.root
	a.ensureTopic(func(err error) {
		if err != nil {
			root.Send(self, &shareLoaded{key: k, epoch: epoch, err: err})
			return
		}
		go func() {
			snap, found, err := a.readSnapshot(k)
			root.Send(self, &shareLoaded{key: k, epoch: epoch, snap: snap, found: found, err: err})
		}()
	})
}

// onShareLoaded installs a loaded snapshot and serves the calls that
// waited for it.
func (a *coordinatorActor) onShareLoaded(m *shareLoaded) {
	calls := a.cl.waiting[m.key]
	delete(a.cl.waiting, m.key)
	if m.err != nil {
		a.env.Log.Warn("sharegroup: share partition state not loaded", "group", m.key.group, "partition", m.key.tp.Partition, "err", m.err)
		a.cl.failed[m.key] = true
	} else {
		delete(a.parts, m.key)
		delete(a.restored, m.key)
		if m.found {
			a.restored[m.key] = m.snap
		}
		a.cl.epochs[m.key] = m.epoch
	}
	for _, c := range calls {
		a.call(c)
	}
}

// ensureTopic runs fn once the state topic exists, making it on first use
// (share.coordinator.state.topic.* partitions, replication factor and
// min.insync.replicas, compacted); fn runs on the actor's goroutine.
func (a *coordinatorActor) ensureTopic(fn func(error)) {
	if a.cl.topicReady {
		fn(nil)
		return
	}
	if v := a.view(); v != nil && v.Topics[StateTopic] != nil {
		a.cl.topicReady = true
		fn(nil)
		return
	}
	a.cl.topicWaiters = append(a.cl.topicWaiters, fn)
	if a.cl.topicCreating {
		return
	}
	a.cl.topicCreating = true
	rf := a.cl.link.StateReplication
	if v := a.view(); v != nil {
		rf = min(rf, int16(max(1, len(v.Brokers))))
	}
	isr := min(a.cl.link.StateMinISR, rf)
	self, root := a.self, a.root
	a.env.Send(a.meta, &catalog.CreateInternalTopic{
		Name: StateTopic, Partitions: a.cl.link.StatePartitions,
		ReplicationFactor: rf, ReplicationFactorKey: "share.coordinator.state.topic.replication.factor",
		Configs: [][2]string{{"cleanup.policy", "compact"}, {"compression.type", "producer"},
			{"min.insync.replicas", strconv.Itoa(int(isr))}},
		Done: func(_ int32, _ bool, err error) { root.Send(self, &topicMade{err}) },
	})
}

func (a *coordinatorActor) onTopicMade(err error) {
	a.cl.topicCreating = false
	a.cl.topicReady = err == nil
	ws := a.cl.topicWaiters
	a.cl.topicWaiters = nil
	for _, fn := range ws {
		fn(err)
	}
}

// stateLeader is the state topic's partition count, the partition that
// keeps k and its leader.
func (a *coordinatorActor) stateLeader(k partKey) (sp, leader int32, err error) {
	v := a.view()
	if v == nil || v.Topics[StateTopic] == nil {
		return 0, 0, errors.New("the state topic is not in the cluster view")
	}
	t := v.Topics[StateTopic]
	sp = StatePartitionFor(k.group, k.tp, int32(len(t.Partitions)))
	p := t.Partition(sp)
	if p == nil || p.Leader < 0 {
		return sp, 0, fmt.Errorf("state partition %d has no leader", sp)
	}
	return sp, p.Leader, nil
}

// readSnapshot reads k's state partition up to its high watermark and
// returns k's newest snapshot (found false: none, or a tombstone). It
// blocks: it runs on a goroutine of its own and touches no actor state.
func (a *coordinatorActor) readSnapshot(k partKey) (Snapshot, bool, error) {
	sp, leader, err := a.stateLeader(k)
	if err != nil {
		return Snapshot{}, false, err
	}
	if err := a.barrier(sp, leader); err != nil {
		return Snapshot{}, false, err
	}
	want := string(EncodeSnapshotKey(k.group, k.tp))
	var snap Snapshot
	found := false
	apply := func(data []byte) error {
		return coordinator.ReplayBatches(data, func(key, value []byte) {
			if string(key) != want {
				return
			}
			if value == nil {
				found = false
				return
			}
			if _, _, s, err := DecodeSnapshot(key, value); err == nil {
				snap, found = s, true
			}
		})
	}
	if leader == a.cl.link.Me {
		err = a.readLocal(sp, apply)
	} else {
		err = a.readRemote(leader, sp, apply)
	}
	return snap, found, err
}

// barrierType opens the key of a read barrier record: a record type no
// share coordinator writes, so loads pass over it.
const barrierType = 0x7fff

// barrier appends a read barrier to state partition sp with acks=all, and
// returns once it is in: the high watermark is then past every snapshot
// appended before, acknowledged or not. Without it a state partition's
// new leader, whose high watermark lags until its followers fetch again,
// could hide the newest snapshot of a share partition from a read up to
// the high watermark, and an acknowledged record would be delivered again.
func (a *coordinatorActor) barrier(sp, leader int32) error {
	key := binary.BigEndian.AppendUint16(nil, barrierType)
	key = binary.BigEndian.AppendUint32(key, uint32(a.cl.link.Me))
	batch := coordinator.BuildBatch([]group.Record{{Key: key, Value: []byte{}}}, a.now().UnixMilli())
	var code kerr.Code
	if leader == a.cl.link.Me {
		ch := make(chan kerr.Code, 1)
		shards.Append(a.env, StateTopic, sp, batch, func(c kerr.Code) { ch <- c })
		code = <-ch
	} else {
		code = a.produceRemote(leader, sp, batch)
	}
	if code != kerr.None {
		return fmt.Errorf("read barrier on state partition %d: %w", sp, code)
	}
	return nil
}

// readLocal reads a state partition this broker leads, chunk by chunk.
func (a *coordinatorActor) readLocal(sp int32, apply func([]byte) error) error {
	for offset := int64(0); ; {
		ch := make(chan shards.Chunk, 1)
		shards.ReadChunk(a.env, StateTopic, sp, offset, func(c shards.Chunk) { ch <- c })
		c := <-ch
		switch {
		case c.TimedOut:
			return errors.New("the state partition did not answer")
		case c.Err != nil:
			return c.Err
		}
		if err := apply(c.Data); err != nil {
			return err
		}
		if c.Next >= c.End || len(c.Data) == 0 {
			return nil
		}
		offset = c.Next
	}
}

// readRemote reads a state partition another broker leads with Fetch, as
// a consumer would, from its log start to its high watermark.
func (a *coordinatorActor) readRemote(leader, sp int32, apply func([]byte) error) error {
	offset := int64(0)
	for range 10000 {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 0, 0, 16<<20
		req.SessionEpoch = -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = StateTopic
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = sp, offset, 8<<20, -1, -1
		rt.Partitions = []kmsg.FetchRequestTopicPartition{rp}
		req.Topics = []kmsg.FetchRequestTopic{rt}
		ctx, cancel := context.WithTimeout(context.Background(), a.cl.link.Timeout)
		resp, err := a.cl.link.Send(ctx, leader, req, stateFetchVersion)
		cancel()
		if err != nil {
			return err
		}
		fr := resp.(*kmsg.FetchResponse)
		if fr.ErrorCode != 0 {
			return kerr.Code(fr.ErrorCode)
		}
		if len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 {
			return errors.New("a fetch of the state partition answered no partition")
		}
		p := fr.Topics[0].Partitions[0]
		switch code := kerr.Code(p.ErrorCode); {
		case code == kerr.OffsetOutOfRange && offset < p.LogStartOffset:
			offset = p.LogStartOffset // compaction or deletion moved the start
			continue
		case code != kerr.None:
			return code
		}
		whole, next := wholeBatches(p.RecordBatches)
		if err := apply(whole); err != nil {
			return err
		}
		if next <= offset {
			next = offset
		}
		offset = next
		if offset >= p.HighWatermark || len(whole) == 0 {
			return nil
		}
	}
	return errors.New("the state partition did not end")
}

// wholeBatches is the whole batches at the front of data and the offset
// after the last of them (0 with none).
func wholeBatches(data []byte) ([]byte, int64) {
	n, next := 0, int64(0)
	for len(data)-n >= int(wire.BatchHeaderSize) {
		h, err := wire.ParseBatchHeader(data[n:])
		if err != nil || h.Size() > int64(len(data)-n) {
			break
		}
		n += int(h.Size())
		next = h.LastOffset() + 1
	}
	return data[:n], next
}

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
