package sharegroup

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/coordinator"
	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/actors/shards"
	"github.com/samsa-io/samsa/wire/kerr"
)

// stateCache is what one state partition held up to next: the newest
// snapshot of each share partition it keeps (by record key; absent: none,
// or a tombstone). Loads read only what was appended since.
type stateCache struct {
	next   int64
	latest map[string]Snapshot
}

// stateLoader is one state partition's loads: one read in flight at a
// time; share partitions asked for meanwhile wait in want (with the
// leader epoch they are loaded for) and are served by the next read.
type stateLoader struct {
	inflight bool
	want     map[partKey]int32
	cache    *stateCache
}

// stateLoadDone reports a read of state partition sp done.
type stateLoadDone struct{ sp int32 }

// loadShare reads share partition k's newest snapshot from its state
// partition and sends it back as shareLoaded.
func (a *coordinatorActor) loadShare(k partKey, epoch int32) {
	self, root := a.self, a.root
	a.ensureTopic(func(err error) {
		sp := int32(0)
		if err == nil {
			sp, _, err = a.stateLeader(k)
		}
		if err != nil {
			root.Send(self, &shareLoaded{key: k, epoch: epoch, err: err})
			return
		}
		l := a.cl.loaders[sp]
		if l == nil {
			l = &stateLoader{want: map[partKey]int32{}, cache: &stateCache{latest: map[string]Snapshot{}}}
			a.cl.loaders[sp] = l
		}
		l.want[k] = epoch
		if !l.inflight {
			a.readState(sp, l)
		}
	})
}

// readState brings l's cache up to date on another goroutine (the cache
// is that goroutine's until stateLoadDone) and answers the share
// partitions l wants from it.
func (a *coordinatorActor) readState(sp int32, l *stateLoader) {
	want, cache := l.want, l.cache
	l.want, l.inflight = map[partKey]int32{}, true
	self, root := a.self, a.root
	go func() {
		err := a.refresh(sp, cache)
		for k, epoch := range want {
			snap, found := cache.latest[string(EncodeSnapshotKey(k.group, k.tp))]
			root.Send(self, &shareLoaded{key: k, epoch: epoch, snap: snap, found: found, err: err})
		}
		root.Send(self, &stateLoadDone{sp})
	}()
}

func (a *coordinatorActor) onStateLoadDone(m *stateLoadDone) {
	l := a.cl.loaders[m.sp]
	l.inflight = false
	if len(l.want) > 0 {
		a.readState(m.sp, l)
	}
}

// refresh reads state partition sp from cache.next to its high watermark
// into cache, after a read barrier. A read that fails empties the cache:
// the next one starts over from the log start.
func (a *coordinatorActor) refresh(sp int32, cache *stateCache) error {
	v := a.view()
	if v == nil || v.Topics[StateTopic].Partition(sp) == nil || v.Topics[StateTopic].Partition(sp).Leader < 0 {
		return fmt.Errorf("state partition %d has no leader", sp)
	}
	leader := v.Topics[StateTopic].Partition(sp).Leader
	if err := a.barrier(sp, leader); err != nil {
		return err
	}
	apply := func(data []byte) error {
		return coordinator.ReplayBatches(data, func(key, value []byte) {
			if value == nil {
				delete(cache.latest, string(key))
				return
			}
			if _, _, s, err := DecodeSnapshot(key, value); err == nil {
				cache.latest[string(key)] = s
			}
		})
	}
	var next int64
	var err error
	if leader == a.cl.link.Me {
		next, err = a.readLocal(sp, cache.next, apply)
	} else {
		next, err = a.readRemote(leader, sp, cache.next, apply)
	}
	if err != nil {
		cache.next, cache.latest = 0, map[string]Snapshot{}
		return err
	}
	cache.next = next
	return nil
}

// readSnapshot reads k's newest snapshot (found false: none, or a
// tombstone) from its whole state partition, apart from the loads'
// caches (DescribeShareGroupOffsets). It blocks: it runs on a goroutine
// of its own and touches no actor state.
func (a *coordinatorActor) readSnapshot(k partKey) (Snapshot, bool, error) {
	sp, _, err := a.stateLeader(k)
	if err != nil {
		return Snapshot{}, false, err
	}
	cache := &stateCache{latest: map[string]Snapshot{}}
	if err := a.refresh(sp, cache); err != nil {
		return Snapshot{}, false, err
	}
	snap, found := cache.latest[string(EncodeSnapshotKey(k.group, k.tp))]
	return snap, found, nil
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

// readLocal reads a state partition this broker leads, chunk by chunk,
// from offset from; it returns the offset to read next.
func (a *coordinatorActor) readLocal(sp int32, from int64, apply func([]byte) error) (int64, error) {
	for offset := from; ; {
		ch := make(chan shards.Chunk, 1)
		shards.ReadChunk(a.env, StateTopic, sp, offset, func(c shards.Chunk) { ch <- c })
		c := <-ch
		switch {
		case c.TimedOut:
			return 0, errors.New("the state partition did not answer")
		case c.Err != nil:
			return 0, c.Err
		}
		if err := apply(c.Data); err != nil {
			return 0, err
		}
		if c.Next > offset {
			offset = c.Next
		}
		if c.Next >= c.End || len(c.Data) == 0 {
			return offset, nil
		}
	}
}

// readRemote reads a state partition another broker leads with Fetch, as
// a consumer would, from offset from (its log start if that is later) to
// its high watermark; it returns the offset to read next.
func (a *coordinatorActor) readRemote(leader, sp int32, from int64, apply func([]byte) error) (int64, error) {
	offset := from
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
			return 0, err
		}
		fr := resp.(*kmsg.FetchResponse)
		if fr.ErrorCode != 0 {
			return 0, kerr.Code(fr.ErrorCode)
		}
		if len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 {
			return 0, errors.New("a fetch of the state partition answered no partition")
		}
		p := fr.Topics[0].Partitions[0]
		switch code := kerr.Code(p.ErrorCode); {
		case code == kerr.OffsetOutOfRange && offset < p.LogStartOffset:
			offset = p.LogStartOffset // compaction or deletion moved the start
			continue
		case code != kerr.None:
			return 0, code
		}
		whole, next := wholeBatches(p.RecordBatches)
		if err := apply(whole); err != nil {
			return 0, err
		}
		if next <= offset {
			next = offset
		}
		offset = next
		if offset >= p.HighWatermark || len(whole) == 0 {
			return offset, nil
		}
	}
	return 0, errors.New("the state partition did not end")
}

// wholeBatches is the whole batches at the front of data and the offset
// after the last of them (0 with none).
func wholeBatches(data []byte) ([]byte, int64) {
	n, next := 0, int64(0)
	for pos, h := range eachWholeBatch(data) {
		n = pos + int(h.Size())
		next = h.LastOffset() + 1
	}
	return data[:n], next
}
