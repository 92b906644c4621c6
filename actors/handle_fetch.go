package actors

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// fetchState is the broker's fetch-wide state: the session cache and an
// index of topics by id (Fetch v13 names topics by id), rebuilt when the
// routing table changes.
type fetchState struct {
	sessions *fetchSessions
	ids      atomic.Pointer[topicIDIndex]
	replicaW sync.Once // replica fetches are logged once
	parked   parkedFetches
}

// failDeadFetches answers a fetch's slot at once when its message could
// not be delivered (the partition actor stopped: topic deleted, or given
// up by its supervisor) instead of leaving the fetch to its guard timer.
func (b *Broker) failDeadFetches() {
	b.system.EventStream.Subscribe(func(evt any) {
		dl, ok := evt.(*actor.DeadLetterEvent)
		if !ok {
			return
		}
		if f, ok := dl.Message.(*partitionFetch); ok {
			f.code, f.hw, f.lso, f.logStart, f.res = kerr.NotLeaderOrFollower, -1, -1, -1, nil
			f.op.complete(f)
		}
	})
}

// FetchSessions is the number of incremental fetch sessions (KIP-227) the
// broker keeps.
func (b *Broker) FetchSessions() int { return b.fetches.sessions.Len() }

// Drain answers every fetch parked waiting for data now, and makes later
// fetches answer without waiting: netloop calls it when Shutdown stops
// decoding (netloop.Drainer), so a shutdown does not sit out the clients'
// max wait (franz-go's is 5 s).
func (b *Broker) Drain() { b.fetches.parked.drain() }

type topicIDIndex struct {
	routes *Routes
	byID   map[metadata.TopicID]*TopicRoute
}

// keyFetchSessionSlots bounds the fetch session cache.
const keyFetchSessionSlots = "max.incremental.fetch.session.cache.slots"

func newFetchState(slots int) *fetchState {
	if slots < 0 {
		slots = defaultFetchSessionSlots
	}
	return &fetchState{sessions: newFetchSessions(slots, rand.Int32())}
}

// topicByID finds a topic of r by id.
func (fs *fetchState) topicByID(r *Routes, id [16]byte) *TopicRoute {
	ix := fs.ids.Load()
	if ix == nil || ix.routes != r {
		ix = &topicIDIndex{routes: r, byID: make(map[metadata.TopicID]*TopicRoute, len(r.Topics))}
		for _, t := range r.Topics {
			ix.byID[t.ID] = t
		}
		fs.ids.Store(ix)
	}
	return ix.byID[metadata.TopicID(id)]
}

// handleFetch serves Fetch v4-13 on the loop that decoded it, without
// blocking: it resolves the fetch session, looks each partition up in the
// routing table (unknown ones are answered in the plan), and starts a
// fetchOp that asks the partition actors in parallel. The partition that
// completes the last read (or the max wait timer) builds the answer with
// wire's zero-copy encoder and replies.
func handleFetch(b *Broker, req *wire.Request) {
	kreq, ok := req.Body.(*kmsg.FetchRequest)
	if !ok {
		req.Reply(nil)
		return
	}
	if kreq.ReplicaID >= 0 {
		// Followers fetch with their broker id; replication comes with
		// cluster mode.
		b.fetches.replicaW.Do(func() {
			b.log.Warn("replica fetch refused: this broker runs alone and does not replicate", "replica_id", kreq.ReplicaID, "client", req.ClientAddr)
		})
		replyFetchError(b, req, kreq, kerr.InvalidRequest)
		return
	}
	fc, code := b.fetches.sessions.begin(kreq, b.opts.Now().UnixMilli())
	logSession(b, req, kreq, &fc, code)
	if code != 0 {
		replyFetchError(b, req, kreq, code)
		return
	}
	maxBytes := max(int64(kreq.MaxBytes), 0)
	o := &fetchOp{
		slots:    make([]partitionFetch, len(fc.targets)),
		minBytes: int64(kreq.MinBytes),
		maxBytes: maxBytes,
		canWait:  kreq.MaxWaitMillis > 0 && kreq.MinBytes > 0,
		guard:    b.opts.GatherTimeout,
		b:        b,
		req:      req,
		kreq:     kreq,
		fc:       fc,
		parked:   &b.fetches.parked,
	}
	routes := b.Routes()
	for i := range fc.targets {
		t := &fc.targets[i]
		s := &o.slots[i]
		s.op, s.slot = o, i
		s.offset, s.leaderEpoch = t.fetchOffset, t.currentLeaderEpoch
		s.maxBytes = min(max(int64(t.maxBytes), 0), maxBytes)
		var tr *TopicRoute
		if fc.usesIDs {
			tr = b.fetches.topicByID(routes, t.key.id)
		} else {
			tr = routes.Topics[t.key.topic]
		}
		switch {
		case tr == nil && fc.usesIDs:
			errorOutcome(s, kerr.UnknownTopicID)
		case tr == nil || t.key.partition < 0 || int(t.key.partition) >= len(tr.Partitions):
			errorOutcome(s, kerr.UnknownTopicOrPartition)
		case tr.Partitions[t.key.partition] == nil:
			errorOutcome(s, kerr.NotLeaderOrFollower) // its log is offline
		default:
			s.pid, s.view = tr.Partitions[t.key.partition], tr.view(t.key.partition)
		}
		if s.op == nil {
			o.canWait = false // errors are answered at once
		}
	}
	o.start(time.Duration(kreq.MaxWaitMillis) * time.Millisecond)
}

// logSession writes the debug lines of a session's life: opened, ended
// (with the incremental fetches it served), refused. Rare events, never
// one per fetch.
func logSession(b *Broker, req *wire.Request, kreq *kmsg.FetchRequest, fc *fetchContext, code kerr.Code) {
	if !b.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	if e := fc.ended; e != nil {
		b.log.Debug("fetch session ended by the client", "session_id", e.id, "incremental_fetches", e.served,
			"partitions", len(e.parts), "client", req.ClientAddr)
	}
	if code != 0 {
		b.log.Debug("fetch session refused", "session_id", kreq.SessionID, "epoch", kreq.SessionEpoch,
			"error", code.String(), "client", req.ClientAddr)
	}
	if fc.sessionID != 0 && !fc.incremental {
		b.log.Debug("fetch session opened", "session_id", fc.sessionID, "partitions", len(fc.targets),
			"version", kreq.Version, "client", req.ClientAddr)
	}
}

// answerFetch builds and sends the response of an answered op.
func answerFetch(b *Broker, req *wire.Request, kreq *kmsg.FetchRequest, fc *fetchContext, o *fetchOp, abandoned bool) {
	o.outcomes(abandoned)
	o.include = make([]bool, len(o.slots))
	b.fetches.sessions.finish(fc, o.outs, o.include)
	resp := buildFetchResponse(kreq, fc, o)
	out, err := wire.EncodeFetchResponse(req.Header.CorrelationID, resp)
	if err != nil {
		o.releaseAll()
		b.log.Error("fetch response cannot be encoded; answering without records", "err", err, "client", req.ClientAddr)
		for ti := range resp.Topics {
			for pi := range resp.Topics[ti].Partitions {
				p := &resp.Topics[ti].Partitions[pi]
				p.ErrorCode, p.Records = kerr.UnknownServerError.Int16(), nil
			}
		}
		if out, err = wire.EncodeFetchResponse(req.Header.CorrelationID, resp); err != nil {
			req.Reply(nil)
			return
		}
	}
	out.Done = o.releaseAll
	req.Reply(out)
}

// buildFetchResponse lays out the answer: the included partitions in fetch
// order, consecutive partitions of one topic under one topic entry.
func buildFetchResponse(kreq *kmsg.FetchRequest, fc *fetchContext, o *fetchOp) *wire.FetchResponse {
	resp := &wire.FetchResponse{Version: kreq.Version, SessionID: fc.sessionID}
	n := 0
	for _, in := range o.include {
		if in {
			n++
		}
	}
	parts := make([]wire.FetchPartition, 0, n)
	var aborted []wire.AbortedTransaction
	if kreq.IsolationLevel == 1 {
		aborted = []wire.AbortedTransaction{} // no transactions yet: none aborted
	}
	nChunks := 0
	for i := range o.slots {
		if o.include[i] && o.outs[i].bytes > 0 && o.slots[i].res != nil {
			nChunks += len(o.slots[i].res.Regions)
		}
	}
	chunks := make([]wire.Chunk, 0, nChunks) // one array for every partition's records
	var starts []int                         // index in parts of each topic's first partition
	var prev *fetchTarget
	for i := range o.slots {
		if !o.include[i] {
			continue
		}
		t := &fc.targets[i]
		out := &o.outs[i]
		fp := wire.FetchPartition{
			Partition: t.key.partition, ErrorCode: out.code.Int16(),
			HighWatermark: out.hw, LastStableOffset: out.lso, LogStartOffset: out.logStart,
			AbortedTransactions: aborted, PreferredReadReplica: -1,
		}
		if s := &o.slots[i]; out.bytes > 0 && s.res != nil {
			at := len(chunks)
			for _, r := range s.res.Regions {
				chunks = append(chunks, r.Chunk())
			}
			fp.Records = chunks[at:len(chunks):len(chunks)]
		}
		if prev == nil || !sameTopic(prev, t) {
			resp.Topics = append(resp.Topics, wire.FetchTopic{Name: t.key.topic, ID: t.key.id})
			starts = append(starts, len(parts))
		}
		prev = t
		parts = append(parts, fp)
	}
	for ti := range resp.Topics {
		end := len(parts)
		if ti+1 < len(starts) {
			end = starts[ti+1]
		}
		resp.Topics[ti].Partitions = parts[starts[ti]:end:end]
	}
	return resp
}

func sameTopic(a, b *fetchTarget) bool { return a.key.topic == b.key.topic && a.key.id == b.key.id }

// replyFetchError answers a whole fetch with one error: top-level (v7+,
// where clients read it) and, unless it is a session error (which carries
// no partitions), on every requested partition.
func replyFetchError(b *Broker, req *wire.Request, kreq *kmsg.FetchRequest, code kerr.Code) {
	resp := &wire.FetchResponse{Version: kreq.Version, ErrorCode: code.Int16()}
	if code != kerr.FetchSessionIDNotFound && code != kerr.InvalidFetchSessionEpoch && code != kerr.FetchSessionTopicIDError {
		for _, rt := range kreq.Topics {
			ft := wire.FetchTopic{Name: rt.Topic, ID: rt.TopicID}
			for _, rp := range rt.Partitions {
				ft.Partitions = append(ft.Partitions, wire.FetchPartition{Partition: rp.Partition, ErrorCode: code.Int16(),
					HighWatermark: -1, LastStableOffset: -1, LogStartOffset: -1, PreferredReadReplica: -1})
			}
			resp.Topics = append(resp.Topics, ft)
		}
	}
	out, err := wire.EncodeFetchResponse(req.Header.CorrelationID, resp)
	if err != nil {
		b.log.Error("fetch error response cannot be encoded", "err", err, "client", req.ClientAddr)
		req.Reply(nil)
		return
	}
	req.Reply(out)
}
