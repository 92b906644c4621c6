package replica

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/interbroker"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Fetch versions samsa's followers send. Kafka 3.9's followers send 17
// (ReplicaState with the broker epoch, topics by id); a leader that
// serves less gets the highest version both know (the inter-broker
// client negotiates through ApiVersions), but never below 12, the first
// with last_fetched_epoch and diverging_epoch (KIP-320), which the
// follower's truncation needs. A fetch with a partition whose topic id is
// not known goes at 12 (names), as Kafka's does.
const (
	fetchMaxVersion   = 17
	fetchNamesVersion = 12
)

// cappedFetch is a Fetch request whose negotiated version is at most
// max: kmsg knows versions past what samsa's followers speak, and the
// inter-broker client takes min(the request's MaxVersion, the peer's).
type cappedFetch struct {
	*kmsg.FetchRequest
	max int16
}

func (c cappedFetch) MaxVersion() int16 { return c.max }

// position is where a followed partition fetches from.
type position struct {
	known     bool // asked of the partition actor since it was (re)followed
	offset    int64
	lastEpoch int32
	hw        int64 // the leader's high watermark as last handed on
	logStart  int64 // the leader's log start offset as last handed on
	ownStart  int64 // this follower's log start, sent in each fetch as Kafka's followers do
	// retryAt, when set, holds the partition back after the leader
	// refused it (not the leader yet, or an epoch one of them has not
	// heard of): the LeaderAndIsr that settles it may already be here,
	// so the fetcher tries again after a back-off rather than waiting
	// for another.
	retryAt time.Time
	// The durable end (durable.go). durable, durErr and gen are shared
	// with the partition's durability callbacks, under the fetcher's mu.
	durable int64  // every offset below is durable here, as last told
	durErr  error  // the partition could not make its tail durable
	gen     uint64 // the position's generation: a report for an older one is stale
	// honoured: the leader's last answer for the partition counted the
	// durable end, so fetches may run ahead of the fsync.
	honoured bool
	sent     int64 // the fetch offset of the last fetch that carried the partition (-1: none since known)
}

// idKey names a partition by topic id, as Fetch v13+ answers do.
type idKey struct {
	id        [16]byte
	partition int32
}

type followedPart struct {
	Followed
	pos position
}

// fetcher replicates the partitions this broker follows from one leader.
type fetcher struct {
	fs     *Fetchers
	leader int32

	mu    sync.Mutex
	parts map[partKey]*followedPart
	wake  chan struct{} // a partition was added
	quit  chan struct{}
	done  chan struct{}
	once  sync.Once

	// resp is the memory fetch responses are read into, one after the
	// other (fetchOnce runs on the fetcher's goroutine only): records
	// alias it until their partition appended them, which appendTo
	// waits for. unanswered is set when a partition did not answer in
	// time and may still read its records, so the memory is let go.
	resp       interbroker.ResponseBuffer
	unanswered bool

	// durableCh wakes the fetcher when a partition's durable end moved
	// (durable.go); settle makes the next fetch wait until every
	// partition's log end is durable.
	durableCh chan struct{}
	settle    bool
}

func newFetcher(fs *Fetchers, leader int32) *fetcher {
	return &fetcher{fs: fs, leader: leader, parts: map[partKey]*followedPart{}, wake: make(chan struct{}, 1),
		quit: make(chan struct{}), done: make(chan struct{}), durableCh: make(chan struct{}, 1)}
}

func (f *fetcher) add(k partKey, p Followed) {
	f.mu.Lock()
	f.parts[k] = &followedPart{Followed: p}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *fetcher) remove(k partKey) {
	f.mu.Lock()
	delete(f.parts, k)
	f.mu.Unlock()
}

func (f *fetcher) stop() {
	f.once.Do(func() { close(f.quit) })
	<-f.done
}

func (f *fetcher) log() *logCtx { return &logCtx{f} }

type logCtx struct{ f *fetcher }

func (l *logCtx) warn(msg string, args ...any) {
	l.f.fs.cfg.Log.Warn(msg, append([]any{"leader", l.f.leader}, args...)...)
}

// run fetches until stopped: one request at a time, each from every
// partition's position, each answer handed to the partitions before the
// next request, and each request only once what must be durable by then
// is (durable.go).
func (f *fetcher) run() {
	defer close(f.done)
	for {
		parts := f.gate(f.ready())
		if len(parts) == 0 {
			select {
			case <-f.quit:
				return
			case <-f.wake:
				continue
			case <-time.After(f.fs.cfg.Backoff):
				continue // a paused partition may have been followed again
			}
		}
		ahead := f.ahead(parts)
		records, err := f.fetchOnce(parts, ahead)
		if err != nil {
			f.log().warn("replica fetch failed; retrying", "err", err)
			select {
			case <-f.quit:
				return
			case <-time.After(f.fs.cfg.Backoff):
			}
		}
		// A fetch sent ahead of the fsync does not wait at the leader; if
		// it brought nothing, the next waits for the fsync, so it tells
		// the leader the durable end and may wait at the leader again.
		f.settle = ahead && !records
		select {
		case <-f.quit:
			return
		default:
		}
	}
}

// ready returns the partitions to fetch, asking the partition actors for
// the positions not known yet.
func (f *fetcher) ready() []*followedPart {
	f.mu.Lock()
	var out []*followedPart
	now := time.Now()
	for _, p := range f.parts {
		if (p.pos.retryAt.IsZero() || now.After(p.pos.retryAt)) && !f.fs.holdBack(p.Followed) {
			out = append(out, p)
		}
	}
	f.mu.Unlock()
	kept := out[:0]
	for _, p := range out {
		if !p.pos.known {
			at, err := f.askPosition(p)
			if err != nil {
				continue
			}
			p.pos.known, p.pos.offset, p.pos.lastEpoch, p.pos.ownStart = true, at.End, at.LastEpoch, at.LogStart
			p.pos.honoured, p.pos.sent = false, -1
			f.mu.Lock()
			p.pos.durable = max(at.Durable, 0)
			f.mu.Unlock()
		}
		kept = append(kept, p)
	}
	return kept
}

// askPosition asks the partition actor for its position, opening a new
// generation of durability reports for it.
func (f *fetcher) askPosition(p *followedPart) (partition.ReplicaAt, error) {
	type answer struct {
		at  partition.ReplicaAt
		err error
	}
	ch := make(chan answer, 1)
	f.mu.Lock()
	p.pos.gen++
	p.pos.durable, p.pos.durErr = -1, nil
	f.mu.Unlock()
	f.fs.cfg.Root.Send(p.PID, &partition.ReplicaPosition{Reply: func(at partition.ReplicaAt, err error) { ch <- answer{at: at, err: err} }})
	select {
	case a := <-ch:
		return a.at, a.err
	case <-time.After(f.fs.cfg.ActorTimeout):
		return partition.ReplicaAt{}, errors.New("the partition actor did not answer")
	case <-f.quit:
		return partition.ReplicaAt{}, errors.New("stopping")
	}
}

// fetchOnce sends one Fetch for parts and hands each partition its part
// of the answer, reporting whether any brought records. A fetch sent
// ahead of the fsync (durable.go) asks the leader not to wait.
func (f *fetcher) fetchOnce(parts []*followedPart, ahead bool) (bool, error) {
	addr, ok := f.fs.leaderAddr(f.leader)
	if !ok {
		return false, fmt.Errorf("broker %d is not in the cluster view", f.leader)
	}
	cfg := f.fs.cfg
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = cfg.Me, int32(cfg.MaxWait.Milliseconds()), cfg.MinBytes, cfg.MaxBytes
	if ahead {
		req.MaxWaitMillis = 0
	}
	req.ReplicaState.ID, req.ReplicaState.Epoch = cfg.Me, -1
	if cfg.Epoch != nil {
		req.ReplicaState.Epoch = cfg.Epoch.Load()
	}
	req.SessionID, req.SessionEpoch = 0, -1
	byTopic := map[string]int{}
	index := map[partKey]*followedPart{}
	byID := map[idKey]*followedPart{}
	maxVersion := int16(fetchMaxVersion)
	for _, p := range parts {
		if p.ID == [16]byte{} {
			maxVersion = fetchNamesVersion
		}
		i, ok := byTopic[p.Topic]
		if !ok {
			t := kmsg.NewFetchRequestTopic()
			t.Topic, t.TopicID = p.Topic, p.ID
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			byTopic[p.Topic] = i
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.FetchOffset, rp.LastFetchedEpoch = p.Partition, p.LeaderEpoch, p.pos.offset, p.pos.lastEpoch
		rp.LogStartOffset, rp.PartitionMaxBytes = p.pos.ownStart, cfg.PartitionMaxBytes
		wire.SetFetchDurableEnd(&rp.UnknownTags, f.durableOf(p))
		p.pos.sent = p.pos.offset
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
		index[partKey{p.Topic, p.Partition}] = p
		byID[idKey{p.ID, p.Partition}] = p
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.MaxWait+30*time.Second)
	defer cancel()
	go func() {
		select {
		case <-f.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	resp, err := cfg.Client.SendReusing(ctx, addr, cappedFetch{req, maxVersion}, &f.resp)
	if err != nil {
		return false, err
	}
	defer func() {
		if f.unanswered {
			f.resp.Drop()
			f.unanswered = false
		}
	}()
	fr := resp.(*kmsg.FetchResponse)
	if fr.Version < fetchNamesVersion {
		return false, fmt.Errorf("the leader serves Fetch up to v%d; followers need v%d+", fr.Version, fetchNamesVersion)
	}
	if fr.ErrorCode != 0 {
		return false, fmt.Errorf("fetch refused: %s", kerr.Code(fr.ErrorCode))
	}
	records := false
	for _, t := range fr.Topics {
		for _, rp := range t.Partitions {
			p := index[partKey{t.Topic, rp.Partition}]
			if fr.Version >= 13 {
				p = byID[idKey{t.TopicID, rp.Partition}]
			}
			if p == nil {
				continue
			}
			records = records || len(rp.RecordBatches) > 0
			f.handOn(p, rp)
		}
	}
	return records, nil
}

// handOn gives a partition its part of a fetch answer.
func (f *fetcher) handOn(p *followedPart, rp kmsg.FetchResponseTopicPartition) {
	f.mu.Lock()
	current := f.parts[partKey{p.Topic, p.Partition}] == p
	f.mu.Unlock()
	if !current {
		return // followed anew (another leader or epoch) while the fetch was out
	}
	switch code := kerr.Code(rp.ErrorCode); code {
	case kerr.None:
		p.pos.honoured = wire.FetchDurableHonoured(&rp.UnknownTags)
	case kerr.NotLeaderOrFollower, kerr.FencedLeaderEpoch, kerr.UnknownTopicOrPartition, kerr.UnknownTopicID, kerr.UnknownLeaderEpoch:
		// The leader and this follower have not heard the same from the
		// controller yet (one of them is a LeaderAndIsr behind): try
		// again shortly; a new LeaderAndIsr replaces the partition here
		// anyway.
		f.mu.Lock()
		p.pos.retryAt = time.Now().Add(f.fs.cfg.Backoff)
		f.mu.Unlock()
		f.fs.cfg.Log.Debug("the leader refuses this follower for now; retrying", "leader", f.leader, "topic", p.Topic, "partition", p.Partition, "error", code.String())
		return
	case kerr.OffsetOutOfRange:
		f.outOfRange(p, rp)
		return
	default:
		f.log().warn("replica fetch error", "topic", p.Topic, "partition", p.Partition, "error", code.String())
		return
	}
	if d := rp.DivergingEpoch; d.Epoch >= 0 || d.EndOffset >= 0 {
		f.truncate(p, d.EndOffset, d.Epoch)
		return
	}
	if len(rp.RecordBatches) == 0 && rp.HighWatermark == p.pos.hw && rp.LogStartOffset == p.pos.logStart {
		return
	}
	f.fs.fetched(p.Followed, len(rp.RecordBatches))
	end, err := f.appendTo(p, rp.RecordBatches, rp.HighWatermark, rp.LogStartOffset)
	if err != nil {
		if !errors.Is(err, partition.ErrNotFollower) {
			f.log().warn("the follower could not append what the leader sent", "topic", p.Topic, "partition", p.Partition, "err", err)
		}
		p.pos.known = false // ask again
		return
	}
	p.pos.offset, p.pos.hw, p.pos.logStart = end, rp.HighWatermark, rp.LogStartOffset
	// The partition raised its log start to the leader's, up to its own
	// high watermark (min of the leader's and its log end).
	p.pos.ownStart = max(p.pos.ownStart, min(rp.LogStartOffset, rp.HighWatermark, end))
	if e, ok := lastEpoch(rp.RecordBatches); ok {
		p.pos.lastEpoch = e
	}
}

// outOfRange: a follower ahead of its leader's log end (it had a tail
// the leader never got) truncates to it; one behind the leader's log
// start cannot catch up by fetching, which retention makes rare: it is
// reported and retried.
func (f *fetcher) outOfRange(p *followedPart, rp kmsg.FetchResponseTopicPartition) {
	if rp.HighWatermark >= 0 && p.pos.offset > rp.HighWatermark {
		f.truncate(p, rp.HighWatermark, -1)
		return
	}
	f.log().warn("the follower's position is out of the leader's range", "topic", p.Topic, "partition", p.Partition, "offset", p.pos.offset,
		"leader_log_start", rp.LogStartOffset)
	p.pos.known = false
}

func (f *fetcher) truncate(p *followedPart, to int64, divergingEpoch int32) {
	ch := make(chan error, 1)
	var end int64
	f.fs.cfg.Root.Send(p.PID, &partition.ReplicaTruncate{To: to, DivergingEpoch: divergingEpoch, Reply: func(e int64, err error) { end = e; ch <- err }})
	select {
	case err := <-ch:
		if err != nil {
			p.pos.known = false
			return
		}
		p.pos.offset = end
		p.pos.known = false // re-read the last epoch after the cut
	case <-time.After(f.fs.cfg.ActorTimeout):
		p.pos.known = false
	case <-f.quit:
	}
}

func (f *fetcher) appendTo(p *followedPart, records []byte, hw, logStart int64) (int64, error) {
	type answer struct {
		end int64
		err error
	}
	ch := make(chan answer, 1)
	f.mu.Lock()
	gen := p.pos.gen
	f.mu.Unlock()
	f.fs.cfg.Root.Send(p.PID, &partition.ReplicaAppend{Records: records, LeaderHW: hw, LeaderLogStart: logStart, From: p.pos.offset,
		Reply: func(end int64, err error) { ch <- answer{end, err} }, Durable: f.durableReport(p, gen)})
	select {
	case a := <-ch:
		return a.end, a.err
	case <-time.After(f.fs.cfg.ActorTimeout):
		f.unanswered = true
		return 0, errors.New("the partition actor did not answer")
	case <-f.quit:
		f.unanswered = true
		return 0, errors.New("stopping")
	}
}

// lastEpoch is the leader epoch of the last batch in records.
func lastEpoch(records []byte) (int32, bool) {
	var epoch int32
	found := false
	for len(records) >= wire.BatchHeaderSize {
		h, err := wire.ParseBatchHeader(records)
		if err != nil || h.Size() > int64(len(records)) {
			break
		}
		epoch, found = h.LeaderEpoch, true
		records = records[h.Size():]
	}
	return epoch, found
}
