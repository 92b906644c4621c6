package fetch

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Incremental fetch sessions (KIP-227).
//
// A consumer fetching many partitions sends, on each fetch, only what
// changed since its previous one (partitions whose fetch offset moved,
// new ones, forgotten ones), and the broker answers only partitions that
// have news (records, an error, a new high watermark, last stable or log
// start offset). The broker keeps the rest in a session, named by a
// session id and sequenced by an epoch the client increments on each
// fetch.
//
// Request (session id, epoch) and what the broker does:
//
//	(0, -1)   sessionless full fetch; answer session id 0
//	(id, -1)  close session id, sessionless full fetch
//	(0, 0)    full fetch opening a new session (id 0 if the cache is full)
//	(id, 0)   close session id, full fetch opening a new session
//	(id, e>0) incremental fetch on session id; epoch must equal the
//	          session's: else INVALID_FETCH_SESSION_EPOCH; an unknown id is
//	          FETCH_SESSION_ID_NOT_FOUND. The client then starts over with a
//	          full fetch.
//
// Versions before 7 have no sessions: every fetch is sessionless and full.
//
// The cache holds at most maxSessions sessions
// (max.incremental.fetch.session.cache.slots, default 1000). A new session
// takes a free slot, else evicts the least recently used session idle for
// at least evictAfter, else the smallest session if the new one has more
// partitions (more partitions gain more from a session), else it is not
// created and the client keeps doing full fetches, which every client
// handles.
//
// Response order: a session keeps its partitions in fetch order; those
// that returned records move to the end, so a response budget (max_bytes)
// filled by the first partitions does not starve the last ones.

// fetchKey names one partition of a fetch: by topic name (v4-12) or by
// topic id (v13+, topic left empty).
type fetchKey struct {
	id        [16]byte
	topic     string
	partition int32
}

// fetchTarget is one partition to read: where and how much.
type fetchTarget struct {
	key                fetchKey
	fetchOffset        int64
	maxBytes           int32 // partition_max_bytes
	currentLeaderEpoch int32 // -1: no check
	lastFetchedEpoch   int32 // a follower's (v12+), -1: none
	durable            bool  // a samsa follower gave its durable end (wire.FetchDurableEndTag)
	durableEnd         int64 // what it gave
}

// sessionPartition is a session's memory of one partition: the client's
// last fetch parameters and what the client was last told.
type sessionPartition struct {
	fetchTarget
	hw, lso, logStart int64 // as last sent; noneSent before anything was sent
	gotData           bool  // scratch for finish: returned records this time
}

// fetchSession is one client's session.
type fetchSession struct {
	id       int32
	epoch    int32 // the epoch the next incremental fetch must carry
	usesIDs  bool  // v13+: partitions named by topic id
	parts    []*sessionPartition
	byKey    map[fetchKey]*sessionPartition
	lastUsed int64 // milliseconds
	served   int64 // incremental fetches served, for the log line when it ends
}

// fetchOutcome is what a read of a target produced, as the session needs
// it to decide what an incremental response carries.
type fetchOutcome struct {
	code              kerr.Code
	hw, lso, logStart int64
	bytes             int64
	redirect          bool  // answered with a preferred read replica (KIP-392) ...
	readReplica       int32 // ... this one
}

// fetchContext is a request resolved against the session cache.
type fetchContext struct {
	targets     []fetchTarget // what to read, in order
	sessionID   int32         // the response's session id
	incremental bool          // answer only partitions with news
	usesIDs     bool
	// ended is the session the request closed or replaced, if any.
	ended *fetchSession
}

// fetchSessions is the session cache; safe for concurrent use (the fetch
// handler runs on every gnet loop, responses complete on partition actors).
// Time comes in as arguments.
type fetchSessions struct {
	mu          sync.Mutex
	maxSessions int
	evictAfter  int64 // milliseconds a session must be idle to be evicted by LRU
	nextID      int32
	byID        map[int32]*fetchSession
}

const (
	defaultFetchSessionSlots = 1000
	fetchSessionEvictMillis  = 120_000 // Kafka's minimum idle time before LRU eviction
	noneSent                 = -2      // sessionPartition offsets before the first response
)

func newFetchSessions(maxSessions int, seed int32) *fetchSessions {
	if seed <= 0 {
		seed = 1
	}
	return &fetchSessions{maxSessions: maxSessions, evictAfter: fetchSessionEvictMillis, nextID: seed, byID: make(map[int32]*fetchSession)}
}

// Len is the number of live sessions.
func (c *fetchSessions) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byID)
}

// begin resolves req against the cache. A non-zero code is a top-level
// session error: the response carries it and no partitions.
func (c *fetchSessions) begin(req *kmsg.FetchRequest, now int64) (fetchContext, kerr.Code) {
	usesIDs := req.Version >= 13
	full := func() []fetchTarget {
		n := 0
		for i := range req.Topics {
			n += len(req.Topics[i].Partitions)
		}
		ts := make([]fetchTarget, 0, n)
		for i := range req.Topics {
			rt := &req.Topics[i]
			for j := range rt.Partitions {
				ts = append(ts, targetOf(rt, &rt.Partitions[j], req.Version))
			}
		}
		return ts
	}
	if req.Version < 7 || req.SessionEpoch == -1 {
		var ended *fetchSession
		if req.Version >= 7 && req.SessionID != 0 {
			c.mu.Lock()
			ended = c.remove(req.SessionID)
			c.mu.Unlock()
		}
		return fetchContext{targets: full(), usesIDs: usesIDs, ended: ended}, 0
	}
	if req.SessionEpoch == 0 {
		ts := full()
		c.mu.Lock()
		defer c.mu.Unlock()
		var ended *fetchSession
		if req.SessionID != 0 {
			ended = c.remove(req.SessionID)
		}
		id := c.create(ts, usesIDs, now)
		return fetchContext{targets: ts, sessionID: id, usesIDs: usesIDs, ended: ended}, 0
	}
	if req.SessionEpoch < 0 {
		return fetchContext{}, kerr.InvalidFetchSessionEpoch
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.byID[req.SessionID]
	switch {
	case !ok:
		return fetchContext{}, kerr.FetchSessionIDNotFound
	case s.epoch != req.SessionEpoch:
		return fetchContext{}, kerr.InvalidFetchSessionEpoch
	case s.usesIDs != usesIDs:
		return fetchContext{}, kerr.FetchSessionTopicIDError
	}
	s.epoch = nextEpoch(s.epoch)
	s.lastUsed = now
	s.served++
	for i := range req.Topics {
		rt := &req.Topics[i]
		for j := range rt.Partitions {
			t := targetOf(rt, &rt.Partitions[j], req.Version)
			if sp, ok := s.byKey[t.key]; ok {
				sp.fetchTarget = t
				continue
			}
			sp := &sessionPartition{fetchTarget: t, hw: noneSent, lso: noneSent, logStart: noneSent}
			s.byKey[t.key] = sp
			s.parts = append(s.parts, sp)
		}
	}
	forgot := false
	for i := range req.ForgottenTopics {
		ft := &req.ForgottenTopics[i]
		for _, p := range ft.Partitions {
			k := fetchKey{partition: p}
			if usesIDs {
				k.id = ft.TopicID
			} else {
				k.topic = ft.Topic
			}
			if _, ok := s.byKey[k]; ok {
				delete(s.byKey, k)
				forgot = true
			}
		}
	}
	if forgot {
		kept := s.parts[:0]
		for _, sp := range s.parts {
			if s.byKey[sp.key] == sp {
				kept = append(kept, sp)
			}
		}
		clear(s.parts[len(kept):])
		s.parts = kept
	}
	ts := make([]fetchTarget, len(s.parts))
	for i, sp := range s.parts {
		ts[i] = sp.fetchTarget
	}
	return fetchContext{targets: ts, sessionID: s.id, incremental: true, usesIDs: usesIDs}, 0
}

// finish records what a fetch returned and reports which targets the
// response carries: all of them for a full fetch, those with news for an
// incremental one. outs and include have one entry per target of fc.
func (c *fetchSessions) finish(fc *fetchContext, outs []fetchOutcome, include []bool) {
	if fc.sessionID == 0 {
		for i := range include {
			include[i] = true
		}
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.byID[fc.sessionID]
	if s == nil { // closed or evicted meanwhile: answer as a full fetch would
		for i := range include {
			include[i] = true
		}
		return
	}
	moved := 0
	for i := range fc.targets {
		o := &outs[i]
		sp := s.byKey[fc.targets[i].key]
		// A preferred read replica is always news (Kafka's sessions
		// always answer one), or an incremental consumer would never hear it.
		news := o.bytes > 0 || o.code != 0 || o.redirect || sp == nil ||
			sp.hw != o.hw || sp.lso != o.lso || sp.logStart != o.logStart
		include[i] = news || !fc.incremental
		if sp != nil && include[i] {
			sp.hw, sp.lso, sp.logStart = o.hw, o.lso, o.logStart
		}
		if o.bytes > 0 && sp != nil && !sp.gotData {
			sp.gotData = true
			moved++
		}
	}
	if moved == 0 {
		return
	}
	// Partitions that returned records go to the end, in their order: a
	// stable partition of the slice in place.
	moving := make([]*sessionPartition, 0, moved)
	kept := s.parts[:0]
	for _, sp := range s.parts {
		if sp.gotData {
			sp.gotData = false
			moving = append(moving, sp)
		} else {
			kept = append(kept, sp)
		}
	}
	s.parts = append(kept, moving...)
}

// drop removes session id, if it is still there.
func (c *fetchSessions) drop(id int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(id)
}

// remove drops session id and returns it (nil if unknown), with its
// counters frozen for a log line. Called with mu held.
func (c *fetchSessions) remove(id int32) *fetchSession {
	s := c.byID[id]
	if s == nil {
		return nil
	}
	delete(c.byID, id)
	return &fetchSession{id: s.id, epoch: s.epoch, served: s.served, parts: make([]*sessionPartition, len(s.parts))}
}

// create opens a session for ts if the cache has or can make room; it
// returns the session id, or 0 when there is none. Called with mu held.
func (c *fetchSessions) create(ts []fetchTarget, usesIDs bool, now int64) int32 {
	if c.maxSessions <= 0 || len(ts) == 0 {
		return 0
	}
	if len(c.byID) >= c.maxSessions && !c.evictFor(len(ts), now) {
		return 0
	}
	s := &fetchSession{id: c.newID(), epoch: 1, usesIDs: usesIDs, lastUsed: now,
		parts: make([]*sessionPartition, 0, len(ts)), byKey: make(map[fetchKey]*sessionPartition, len(ts))}
	for _, t := range ts {
		if _, dup := s.byKey[t.key]; dup {
			continue
		}
		sp := &sessionPartition{fetchTarget: t, hw: noneSent, lso: noneSent, logStart: noneSent}
		s.byKey[t.key] = sp
		s.parts = append(s.parts, sp)
	}
	c.byID[s.id] = s
	return s.id
}

// evictFor makes room for a session of n partitions, if the policy allows.
func (c *fetchSessions) evictFor(n int, now int64) bool {
	var lru, smallest *fetchSession
	for _, s := range c.byID {
		if lru == nil || s.lastUsed < lru.lastUsed {
			lru = s
		}
		if smallest == nil || len(s.parts) < len(smallest.parts) {
			smallest = s
		}
	}
	switch {
	case lru != nil && now-lru.lastUsed >= c.evictAfter:
		delete(c.byID, lru.id)
	case smallest != nil && len(smallest.parts) < n:
		delete(c.byID, smallest.id)
	default:
		return false
	}
	return true
}

// newID returns an unused positive session id. Ids advance by a large odd
// step so consecutive clients do not get neighbouring ids.
func (c *fetchSessions) newID() int32 {
	for {
		id := c.nextID
		c.nextID = int32((uint32(c.nextID) + 0x9E3779B1) & 0x7fffffff)
		if id > 0 && c.byID[id] == nil {
			return id
		}
	}
}

// nextEpoch is the epoch after e; it wraps to 1 (0 and -1 are reserved).
func nextEpoch(e int32) int32 {
	if e == 1<<31-1 {
		return 1
	}
	return e + 1
}

func targetOf(rt *kmsg.FetchRequestTopic, rp *kmsg.FetchRequestTopicPartition, version int16) fetchTarget {
	k := fetchKey{partition: rp.Partition}
	if version >= 13 {
		k.id = rt.TopicID
	} else {
		k.topic = rt.Topic
	}
	epoch := rp.CurrentLeaderEpoch
	if version < 9 {
		epoch = -1 // the field is v9+; older clients do not check epochs
	}
	last := rp.LastFetchedEpoch
	if version < 12 {
		last = -1
	}
	durableEnd, durable := wire.FetchDurableEnd(&rp.UnknownTags)
	return fetchTarget{key: k, fetchOffset: rp.FetchOffset, maxBytes: rp.PartitionMaxBytes, currentLeaderEpoch: epoch, lastFetchedEpoch: last,
		durable: durable && version >= 12, durableEnd: durableEnd}
}
