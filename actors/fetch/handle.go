package fetch

import (
	"context"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/actors/metrics"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/actors/quota"
	"github.com/samsa-io/samsa/actors/routing"
	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Service serves Fetch for the broker: the session cache, an index of
// topics by id (Fetch v13 names topics by id), rebuilt when the routing
// table changes, and the fetches parked waiting for data.
type Service struct {
	env      *env.Env
	maxBytes int64 // fetch.max.bytes
	sessions *fetchSessions
	ids      atomic.Pointer[topicIDIndex]
	replicaW sync.Once // replica fetches are logged once
	parked   parkedFetches
	// rackAware is replica.selector.class = RackAwareReplicaSelector: a
	// consumer fetch that names a rack goes to the partition actor, which
	// may point it at a replica in that rack (KIP-392).
	rackAware bool
}

// KeyMaxBytes caps a fetch response's record data.
const KeyMaxBytes = "fetch.max.bytes"

// KeySessionSlots bounds the fetch session cache.
const KeySessionSlots = "max.incremental.fetch.session.cache.slots"

// New starts the fetch service: sessionSlots incremental sessions at
// most (negative: the default, 0: none, every fetch full). A fetch slot
// whose message could not be delivered (the partition actor stopped:
// topic deleted, or given up by its supervisor) comes back through the
// actor system's dead letters and is answered at once.
func New(e *env.Env, sessionSlots int) *Service {
	if sessionSlots < 0 {
		sessionSlots = defaultFetchSessionSlots
	}
	s := &Service{env: e, sessions: newFetchSessions(sessionSlots, rand.Int32()), maxBytes: math.MaxInt32}
	if e.Config != nil {
		if v := config.ParseInt(e.Config.Value(KeyMaxBytes)); v > 0 {
			s.maxBytes = v
		}
		s.rackAware = e.Cluster != nil && strings.TrimSpace(e.Config.Value(config.KeyReplicaSelectorClass)) == config.RackAwareReplicaSelector
	}
	e.System.EventStream.Subscribe(func(evt any) {
		dl, ok := evt.(*actor.DeadLetterEvent)
		if !ok {
			return
		}
		if f, ok := dl.Message.(*partition.FetchSlot); ok {
			f.Code, f.HW, f.LSO, f.LogStart, f.Res = kerr.NotLeaderOrFollower, -1, -1, -1, nil
			f.Op.Complete(f)
		}
	})
	return s
}

// Sessions is the number of incremental fetch sessions (KIP-227) kept.
func (s *Service) Sessions() int { return s.sessions.Len() }

// Drain answers every fetch parked waiting for data now, and makes later
// fetches answer without waiting: the broker calls it when netloop's
// Shutdown stops decoding (netloop.Drainer), so a shutdown does not sit
// out the clients' max wait (franz-go's is 5 s).
func (s *Service) Drain() { s.parked.drain() }

type topicIDIndex struct {
	routes *routing.Routes
	byID   map[metadata.TopicID]*routing.Topic
}

// topicByID finds a topic of r by id.
func (s *Service) topicByID(r *routing.Routes, id [16]byte) *routing.Topic {
	ix := s.ids.Load()
	if ix == nil || ix.routes != r {
		ix = &topicIDIndex{routes: r, byID: make(map[metadata.TopicID]*routing.Topic, len(r.Topics))}
		for _, t := range r.Topics {
			ix.byID[t.ID] = t
		}
		s.ids.Store(ix)
	}
	return ix.byID[metadata.TopicID(id)]
}

// Handle serves Fetch v4-17 on the loop that decoded it, without
// blocking: it resolves the fetch session, looks each partition up in the
// routing table (unknown ones are answered in the plan), and starts a
// fetchOp that asks the partition actors in parallel. The partition that
// completes the last read (or the max wait timer) builds the answer with
// wire's zero-copy encoder and replies.
func (svc *Service) Handle(req *wire.Request) {
	kreq, ok := req.Body.(*kmsg.FetchRequest)
	if !ok {
		req.Reply(nil)
		return
	}
	replicaID := ReplicaID(kreq)
	if replicaID >= 0 && svc.env.Cluster == nil {
		// Followers fetch with their broker id; alone there are none.
		svc.replicaW.Do(func() {
			svc.env.Log.Warn("replica fetch refused: this broker runs alone and does not replicate", "replica_id", replicaID, "client", req.ClientAddr)
		})
		replyFetchError(svc, req, kreq, kerr.InvalidRequest)
		return
	}
	fc, code := svc.sessions.begin(kreq, svc.env.Now().UnixMilli())
	logSession(svc, req, kreq, &fc, code)
	if code != 0 {
		replyFetchError(svc, req, kreq, code)
		return
	}
	// The broker's fetch.max.bytes caps what the request asks: a client
	// asking for 2 GiB gets at most that much record data at once.
	maxBytes := min(max(int64(kreq.MaxBytes), 0), svc.maxBytes)
	if q := svc.env.Quotas; q.Enabled() && replicaID < 0 {
		// A consumer with a quota gets at most its quota's window at once.
		if limit, ok := q.WindowCap(quota.Fetch, req.Session.Principal(), req.Header.ClientID); ok {
			maxBytes = max(min(maxBytes, limit), 1)
		}
	}
	o := &fetchOp{
		slots:    make([]partition.FetchSlot, len(fc.targets)),
		minBytes: int64(kreq.MinBytes),
		maxBytes: maxBytes,
		canWait:  kreq.MaxWaitMillis > 0 && kreq.MinBytes > 0,
		guard:    svc.env.GatherTimeout,
		svc:      svc,
		req:      req,
		kreq:     kreq,
		fc:       fc,
		parked:   &svc.parked,
	}
	routes := svc.env.Routes.Load()
	auth := newFetchAuth(svc.env.Auth, req, replicaID)
	for i := range fc.targets {
		t := &fc.targets[i]
		s := &o.slots[i]
		s.Op, s.Slot = o, i
		s.Offset, s.LeaderEpoch = t.fetchOffset, t.currentLeaderEpoch
		s.ReadCommitted = kreq.IsolationLevel == 1 && kreq.Version >= 4
		if replicaID >= 0 {
			s.Follower = &partition.FollowerFetch{ID: replicaID, LastFetchedEpoch: t.lastFetchedEpoch, Durable: t.durable, DurableEnd: t.durableEnd}
		} else if kreq.Version >= 11 {
			s.ClientMetadata, s.ClientRack = true, kreq.Rack
		}
		s.MaxBytes = min(max(int64(t.maxBytes), 0), maxBytes)
		var tr *routing.Topic
		if fc.usesIDs {
			tr = svc.topicByID(routes, t.key.id)
		} else {
			tr = routes.Topics[t.key.topic]
		}
		switch {
		case auth != nil && auth.denied(fc.usesIDs, t.key.topic, tr):
			errorOutcome(s, kerr.TopicAuthorizationFailed)
		case (tr == nil || t.key.partition < 0 || int(t.key.partition) >= len(tr.Partitions)) && svc.knownElsewhere(t):
			// Hosted by other brokers only: Kafka answers
			// NOT_LEADER_OR_FOLLOWER (with the leader, from v16), so the
			// client goes to the leader rather than dropping the topic.
			errorOutcome(s, kerr.NotLeaderOrFollower)
		case tr == nil && fc.usesIDs:
			errorOutcome(s, kerr.UnknownTopicID)
		case tr == nil || t.key.partition < 0 || int(t.key.partition) >= len(tr.Partitions):
			errorOutcome(s, kerr.UnknownTopicOrPartition)
		case tr.Partitions[t.key.partition] == nil:
			errorOutcome(s, kerr.NotLeaderOrFollower) // its log is offline
		default:
			s.PID, s.View = tr.Partitions[t.key.partition], tr.View(t.key.partition)
			if s.Follower != nil || svc.rackAware && s.ClientRack != "" {
				// A follower's fetch must reach the leader's actor,
				// which records its position, and a rack-aware
				// consumer's, which may be pointed at another
				// replica; the view's shortcut would skip both.
				s.View = nil
			}
		}
		if s.Op == nil {
			o.canWait = false // errors are answered at once
		}
	}
	o.start(time.Duration(kreq.MaxWaitMillis) * time.Millisecond)
}

// knownElsewhere reports whether the cluster view has t's partition
// (cluster mode): a partition this broker holds no replica of.
func (svc *Service) knownElsewhere(t *fetchTarget) bool {
	if svc.env.Cluster == nil {
		return false
	}
	v := svc.env.Cluster.Load()
	if v == nil {
		return false
	}
	ct := v.Topics[t.key.topic]
	if t.key.topic == "" {
		ct, _ = v.TopicByID(t.key.id)
	}
	return ct.Partition(t.key.partition) != nil
}

// ReplicaID is the broker id of the follower that sent kreq, or negative
// for a consumer: from v15 it is in ReplicaState (KIP-903), before in the
// top-level replica id.
func ReplicaID(kreq *kmsg.FetchRequest) int32 {
	if kreq.Version >= 15 {
		return kreq.ReplicaState.ID
	}
	return kreq.ReplicaID
}

// logSession writes the debug lines of a session's life: opened, ended
// (with the incremental fetches it served), refused. Rare events, never
// one per fetch.
func logSession(svc *Service, req *wire.Request, kreq *kmsg.FetchRequest, fc *fetchContext, code kerr.Code) {
	if !svc.env.Log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	if e := fc.ended; e != nil {
		svc.env.Log.Debug("fetch session ended by the client", "session_id", e.id, "incremental_fetches", e.served,
			"partitions", len(e.parts), "client", req.ClientAddr)
	}
	if code != 0 {
		svc.env.Log.Debug("fetch session refused", "session_id", kreq.SessionID, "epoch", kreq.SessionEpoch,
			"error", code.String(), "client", req.ClientAddr)
	}
	if fc.sessionID != 0 && !fc.incremental {
		svc.env.Log.Debug("fetch session opened", "session_id", fc.sessionID, "partitions", len(fc.targets),
			"version", kreq.Version, "client", req.ClientAddr)
	}
}

// answerFetch builds and sends the response of an answered op.
func answerFetch(svc *Service, req *wire.Request, kreq *kmsg.FetchRequest, fc *fetchContext, o *fetchOp, abandoned bool) {
	o.outcomes(abandoned)
	if q := svc.env.Quotas; q.Enabled() && ReplicaID(kreq) < 0 {
		if d := throttleFetch(svc, q, req, o); d > 0 {
			answerThrottled(svc, req, kreq, fc, o, d)
			return
		}
	}
	o.include = make([]bool, len(o.slots))
	svc.sessions.finish(fc, o.outs, o.include)
	resp := buildFetchResponse(kreq, fc, o)
	out, err := wire.EncodeFetchResponse(req.Header.CorrelationID, resp)
	if err != nil {
		o.releaseAll()
		svc.env.Log.Error("fetch response cannot be encoded; answering without records", "err", err, "client", req.ClientAddr)
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

// abortedOf is a read's aborted transactions as the response lists them
// (never nil: read_committed answers carry the array, even empty).
func abortedOf(as []segment.AbortedTxn) []wire.AbortedTransaction {
	out := make([]wire.AbortedTransaction, len(as))
	for i, a := range as {
		out[i] = wire.AbortedTransaction{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset}
	}
	return out
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
	readCommitted := kreq.IsolationLevel == 1
	nChunks := 0
	for i := range o.slots {
		if o.include[i] && o.outs[i].bytes > 0 && o.slots[i].Res != nil {
			nChunks += len(o.slots[i].Res.Regions)
		}
	}
	chunks := make([]wire.Chunk, 0, nChunks) // one array for every partition's records
	hints := leaderHints{svc: o.svc, req: o.req}
	var starts []int // index in parts of each topic's first partition
	var prev *fetchTarget
	for i := range o.slots {
		if !o.include[i] {
			continue
		}
		t := &fc.targets[i]
		out := &o.outs[i]
		if out.code != kerr.None {
			o.svc.metrics().CountError(kreq.Key(), out.code)
		}
		fp := wire.FetchPartition{
			Partition: t.key.partition, ErrorCode: out.code.Int16(),
			HighWatermark: out.hw, LastStableOffset: out.lso, LogStartOffset: out.logStart,
			PreferredReadReplica: -1,
		}
		if readCommitted {
			fp.AbortedTransactions = abortedOf(o.slots[i].Aborted)
		}
		if out.redirect {
			fp.PreferredReadReplica = out.readReplica
		}
		if d := o.slots[i].Diverging; d != nil && kreq.Version >= 12 {
			fp.DivergingEpoch = &wire.EpochEndOffset{Epoch: d.Epoch, EndOffset: d.EndOffset}
		}
		fp.DurableHonoured = out.code == kerr.None && o.slots[i].DurableHonoured && kreq.Version >= 12
		if kreq.Version >= 16 && (out.code == kerr.NotLeaderOrFollower || out.code == kerr.FencedLeaderEpoch) {
			fp.CurrentLeader = hints.leaderOf(t)
		}
		if s := &o.slots[i]; out.bytes > 0 && s.Res != nil {
			at := len(chunks)
			for _, r := range s.Res.Regions {
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
	resp.NodeEndpoints = hints.nodes
	return resp
}

// leaderHints fills the KIP-951 fields of a v16+ answer, as Kafka does
// for a partition answered NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH:
// CurrentLeader (the leader and epoch the cluster view names, -1/-1 when
// it names none) and, for a leader the view has an endpoint for, its
// address in NodeEndpoints, so the client moves without a Metadata
// round trip. Alone there is no other leader to name.
type leaderHints struct {
	svc   *Service
	req   *wire.Request // nil in tests; its listener's endpoints are given
	view  *cluster.View
	nodes []wire.NodeEndpoint
}

func (h *leaderHints) leaderOf(t *fetchTarget) *wire.LeaderAndEpoch {
	if h.svc == nil || h.svc.env.Cluster == nil {
		return nil
	}
	if h.view == nil {
		if h.view = h.svc.env.Cluster.Load(); h.view == nil {
			return nil
		}
	}
	var ct *cluster.Topic
	if t.key.topic != "" {
		ct = h.view.Topics[t.key.topic]
	} else {
		ct, _ = h.view.TopicByID(t.key.id)
	}
	cp := ct.Partition(t.key.partition)
	if cp == nil {
		return &wire.LeaderAndEpoch{LeaderID: -1, LeaderEpoch: -1}
	}
	if b, ok := h.view.Brokers[cp.Leader]; ok && !slices.ContainsFunc(h.nodes, func(n wire.NodeEndpoint) bool { return n.NodeID == cp.Leader }) {
		var session *wire.Session
		if h.req != nil {
			session = h.req.Session
		}
		if e, ok := b.Endpoint(h.svc.env.ClientListenerOf(session)); ok {
			n := wire.NodeEndpoint{NodeID: b.ID, Host: e.Host, Port: e.Port}
			if b.Rack != "" {
				rack := b.Rack
				n.Rack = &rack
			}
			h.nodes = append(h.nodes, n)
		}
	}
	return &wire.LeaderAndEpoch{LeaderID: cp.Leader, LeaderEpoch: cp.LeaderEpoch}
}

func sameTopic(a, b *fetchTarget) bool { return a.key.topic == b.key.topic && a.key.id == b.key.id }

// replyFetchError answers a whole fetch with one error: top-level (v7+,
// where clients read it) and, unless it is a session error (which carries
// no partitions), on every requested partition.
func replyFetchError(svc *Service, req *wire.Request, kreq *kmsg.FetchRequest, code kerr.Code) {
	svc.metrics().CountError(kreq.Key(), code)
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
		svc.env.Log.Error("fetch error response cannot be encoded", "err", err, "client", req.ClientAddr)
		req.Reply(nil)
		return
	}
	req.Reply(out)
}

// metrics are the broker's metrics, nil (counting nothing) for a service
// built without an environment (tests).
func (s *Service) metrics() *metrics.Broker {
	if s == nil || s.env == nil {
		return nil
	}
	return s.env.Metrics
}
