package partition

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/actors/controller"
	"github.com/samsa-io/samsa/actors/idempotence"
	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
	"github.com/samsa-io/samsa/wire/kerr"
)

// The replication protocol is driven here by a seeded, deterministic
// simulation: one partition replicated over three (or five) brokers, each
// a partition Core on a simulated log, the real controller core (with
// "ZooKeeper" as a map beside it), a simulated network, disks that lose
// their unsynced tail in a crash, and producers. Everything happens at a
// simulated time, as events in one queue; a failure names its seed and
// step, and SIM_SEED=<seed> replays it exactly (SIM_SEEDS=<n> runs n
// seeds).
//
// What the brokers do around the cores is a model of the shell, kept
// close to the code it models (actor_replica.go, actor_produce.go,
// actors/replica/fetcher.go, actors/catalog's LeaderAndIsr handling with
// the real cluster.LeaderAndIsr decision):
//   - a leader serves follower fetches as serveReplicaFetch does: leader
//     epoch checks, the KIP-320 divergence check on the follower's last
//     fetched epoch, FollowerFetched, then the batches up to the log end;
//   - a follower's fetcher asks its partition for its position, fetches,
//     hands the answer on (append; truncate; pause on a refusal), one
//     request at a time per leader; an answer to a fetch of an earlier
//     Follow is still handed on, as the real fetcher does with the part
//     it fetched for;
//   - durable replication (actors/replica/durable.go): each fetch carries
//     the follower's durable end beside its fetch offset, the leader
//     counts the durable end and says so, and a follower whose leader
//     said so fetches again before its fsync completes (at most one
//     answer's worth ahead; a fetch ahead that brings nothing makes the
//     next wait for the fsync), else only once its log end is durable.
//     Some seeds have one broker without the scheme (a mixed cluster),
//     some slow disks (unsynced data across many fetches, more power
//     losses);
//   - LeaderAndIsr requests go through cluster.LeaderAndIsr, the held
//     leader epoch survives restarts (the metadata state is on disk), a
//     replica opens as a follower at its held epoch;
//   - AlterPartition goes to the controller core and its answer back to
//     the core.
//
// Three points of the model are what the shell must do and, as this is
// written, does not (each found by this simulation; see handOn and
// sendAlter): a fetch answered NOT_LEADER_OR_FOLLOWER is retried rather
// than paused (the follower may hear of the new leader before the leader
// does); a diverging-epoch answer truncates to the lower of the leader's
// end of that epoch and the follower's own (Kafka's follower does so);
// and an AlterPartition whose answer is lost is sent again, never taken
// as refused (it may have been written).
//
// The network delays, drops and cuts links (broker to broker, broker to
// ZooKeeper: a cut longer than the session timeout expires the broker's
// registration, and the controller reacts as to a death); brokers crash
// (keeping their durable prefix and a random part of the unsynced tail,
// in whole batches) and restart with a new registration. Producers: two
// idempotent ones with acks=all, one plain with acks=1; each has one
// batch in flight and retries it until it is answered.
//
// A deliberately broken leader that counts fetch offsets while claiming
// to honour durable ends must be caught (the test below), so a change
// that made the simulation blind to it fails.
//
// Invariants, checked after every event:
//  1. every batch acknowledged to an acks=all producer is in the log of
//     the current leader (the durable flush policy makes this hold even
//     when every replica crashes at once);
//  2. no replica's log differs, below its high watermark, from what was
//     committed (the longest prefix any leader had under its high
//     watermark), and a leader's log holds all of it;
//  3. a leader's high watermark never falls while it leads;
//  4. no idempotent batch is twice in any log;
//  5. at the end, after the network heals, every broker is up and a
//     quiet period passed: every replica is in the ISR (the controller's
//     and the leader's), every log is the leader's, the high watermark is
//     the log end, and every produce was answered.

const (
	simTopic      = "t"
	lagMaxMs      = 1000 // replica.lag.time.max.ms
	sessionMs     = 600  // zookeeper.session.timeout.ms
	fetchWaitMs   = 100  // a follower's fetch with nothing to read: the longest it parks
	fetchTimeout  = 300  // a fetch unanswered this long failed
	alterTimeout  = 300  // an AlterPartition unanswered this long failed
	produceTimout = 400  // a produce unanswered this long is retried
	backoffMs     = 50
)

var simTopicID = [16]byte{1, 2, 3}

// rbatch is one batch of a simulated log.
type rbatch struct {
	base, count int64
	epoch       int32
	tag         int // the produced batch this is (a retry has the same tag)
	pid         int64
	seq         int32
	data        []byte // the batch as the leader stamped it
}

func (b rbatch) end() int64 { return b.base + b.count }

func (b rbatch) same(o rbatch) bool {
	return b.base == o.base && b.count == o.count && b.epoch == o.epoch && b.tag == o.tag
}

type epochStart struct {
	epoch int32
	start int64
}

type rwait struct {
	end int64
	fn  func(err error)
}

// rlog is a replica's log: batches, the durable end, the leader epoch
// cache, and durability waits. Its operations follow segment.Log's.
type rlog struct {
	batches []rbatch
	durable int64
	epochs  []epochStart
	waits   []rwait
}

func (l *rlog) end() int64 {
	if len(l.batches) == 0 {
		return 0
	}
	return l.batches[len(l.batches)-1].end()
}

func (l *rlog) state() LogState {
	return LogState{End: l.end(), RecoveryPoint: l.durable, Policy: segment.FlushGroup, SegmentBytes: 1 << 30}
}

// latestEpoch is segment.Log.LatestEpoch: the newest epoch in the cache.
func (l *rlog) latestEpoch() int32 {
	if len(l.epochs) == 0 {
		return -1
	}
	return l.epochs[len(l.epochs)-1].epoch
}

// assignEpoch is segment's epochCache.assign.
func (l *rlog) assignEpoch(epoch int32, start int64) {
	if epoch < 0 {
		return
	}
	if n := len(l.epochs); n > 0 && (epoch <= l.epochs[n-1].epoch || start < l.epochs[n-1].start) {
		return
	}
	l.epochs = append(l.epochs, epochStart{epoch, start})
}

// endOffsetFor is segment's epochCache.endOffsetFor.
func (l *rlog) endOffsetFor(epoch int32) (int32, int64) {
	if len(l.epochs) == 0 || epoch < 0 {
		return -1, -1
	}
	last := l.epochs[len(l.epochs)-1]
	if epoch == last.epoch {
		return epoch, l.end()
	}
	higher := -1
	for i, e := range l.epochs {
		if e.epoch > epoch {
			higher = i
			break
		}
	}
	switch higher {
	case -1:
		return -1, -1
	case 0:
		return epoch, l.epochs[0].start
	}
	return l.epochs[higher-1].epoch, l.epochs[higher].start
}

func (l *rlog) truncateEpochs(end int64) {
	n := len(l.epochs)
	for n > 0 && l.epochs[n-1].start >= end {
		n--
	}
	l.epochs = l.epochs[:n]
}

// appendLeader appends a produced batch at the log end with the leader's
// epoch (segment.Log.Append).
func (l *rlog) appendLeader(records []byte, epoch int32, tag int) (segment.AppendResult, rbatch) {
	h, _ := wire.ParseBatchHeader(records)
	base := l.end()
	wire.SetBatchBaseOffset(records, base)
	wire.SetBatchLeaderEpoch(records, epoch)
	b := rbatch{base: base, count: int64(h.NumRecords), epoch: epoch, tag: tag, pid: h.ProducerID, seq: h.BaseSequence, data: records}
	l.batches = append(l.batches, b)
	l.assignEpoch(epoch, base)
	return segment.AppendResult{FirstOffset: base, LastOffset: b.end() - 1, LogAppendTime: -1, LogEndOffset: b.end()}, b
}

// appendReplicated is segment.Log.AppendReplicated: the batches keep
// their offsets and epochs, and must continue the log (at or after its
// end, increasing).
func (l *rlog) appendReplicated(bs []rbatch) error {
	next := l.end()
	for _, b := range bs {
		if b.base < next {
			return fmt.Errorf("batch at %d below the log end %d", b.base, next)
		}
		next = b.end()
	}
	for _, b := range bs {
		l.batches = append(l.batches, b)
		l.assignEpoch(b.epoch, b.base)
	}
	return nil
}

// truncateTo is segment.Log.TruncateTo: when offset is at or past the end
// only the epochs starting at the end go; otherwise the batch holding offset goes whole, with every later
// one, the epochs starting at or after the new end, and the waits for
// removed offsets (ErrTruncated).
func (l *rlog) truncateTo(offset int64) int64 {
	if offset >= l.end() {
		l.truncateEpochs(l.end()) // epochs without a batch at the end
		return l.end()
	}
	i := len(l.batches)
	for i > 0 && l.batches[i-1].end() > offset {
		i--
	}
	l.batches = l.batches[:i]
	end := l.end()
	l.durable = min(l.durable, end)
	l.truncateEpochs(end)
	l.failWaits(end, segment.ErrTruncated)
	return end
}

func (l *rlog) failWaits(end int64, err error) {
	l.answerWaits(func(w rwait) bool { return w.end > end }, err)
}

// fsync makes the whole log durable and answers the waits it covers.
func (l *rlog) fsync() {
	l.durable = l.end()
	l.answerWaits(func(w rwait) bool { return w.end <= l.durable }, nil)
}

// answerWaits answers the waits that are due with err and keeps the rest.
func (l *rlog) answerWaits(due func(rwait) bool, err error) {
	var now, kept []rwait
	for _, w := range l.waits {
		if due(w) {
			now = append(now, w)
		} else {
			kept = append(kept, w)
		}
	}
	l.waits = kept
	for _, w := range now {
		w.fn(err)
	}
}

// crash keeps the durable prefix and, of the unsynced tail, the whole
// batches that happened to reach the disk (a torn last batch is cut by
// recovery); waits die with the process.
func (l *rlog) crash(rng *rand.Rand) {
	i := 0
	for i < len(l.batches) && l.batches[i].end() <= l.durable {
		i++
	}
	if tail := len(l.batches) - i; tail > 0 {
		i += rng.IntN(tail + 1)
	}
	l.batches = l.batches[:i]
	l.durable = l.end() // what recovery kept is on disk
	l.truncateEpochs(l.end() + 1)
	l.waits = nil
}

// from returns the batches holding offset and after, up to max of them.
func (l *rlog) from(offset int64, max int) []rbatch {
	i := 0
	for i < len(l.batches) && l.batches[i].end() <= offset {
		i++
	}
	return slices.Clone(l.batches[i:min(len(l.batches), i+max)])
}

// producers rebuilds the producer state from the log, as loadProducers
// does with no snapshot.
func (l *rlog) producers() *idempotence.State {
	st := idempotence.New()
	for _, b := range l.batches {
		h, _ := wire.ParseBatchHeader(b.data)
		h.BaseOffset, h.LeaderEpoch = b.base, b.epoch
		st.Record(&h, b.base, h.MaxTimestamp)
	}
	return st
}

// followed is a fetcher's partition (replica.followedPart).
type followed struct {
	leader, epoch int32
	known         bool
	offset        int64
	lastEpoch     int32
	hw            int64
	paused        bool
	// durable replication (replica/durable.go): the durable end as the
	// partition reported it, for position generation gen; whether the
	// leader's last answer counted it; the offset of the last fetch sent.
	durable  int64
	gen      int
	honoured bool
	sent     int64
}

// rfetcher is the fetcher of one broker from one leader: one request at
// a time for its (one) partition.
type rfetcher struct {
	leader int32
	part   *followed // nil: nothing to fetch
	busy   bool      // a request or its hand-on under way
	gen    int       // the broker incarnation it runs in
	settle bool      // the next fetch waits until the log end is durable
	ahead  bool      // the fetch out went ahead of the fsync
}

type rbroker struct {
	id int32
	// legacy: a broker without the durable scheme (a samsa before it):
	// its fetches carry no durable end, and leading it ignores theirs.
	legacy     bool
	up         bool
	gen        int   // incarnation: events of an earlier one are void
	epoch      int64 // registration epoch as this broker knows it (0: not registered yet)
	registered bool  // its registration is in ZooKeeper
	session    int   // counts its sessions: an expiry names the one it ends
	sessionCut int64 // when its ZooKeeper link was cut (-1: linked)
	log        rlog
	core       *Core
	held       int32 // the leader epoch in the metadata state (on disk); -1 none
	hosted     bool  // the replica exists here (metadata state)
	roled      bool  // a LeaderAndIsr gave it a role since the broker started
	ctrlEpoch  int32
	// the partition's spec
	follower  bool
	lepoch    int32
	replicas  []int32
	isr       []int32
	partEpoch int32

	followerHW int64
	fetchers   map[int32]*rfetcher
	where      int32 // the leader whose fetcher has the partition; -1 none
	// invariant 3
	leadHW int64 // the high watermark while leading; -1 not leading
	// What the checks found already of this log, which only grows but for
	// truncations and crashes (then forgotten, see cut): the batches found
	// to be the committed ones, the acknowledged batches found in it, and
	// the idempotent batches seen.
	verified, ackFound, dupSeen int
	tagsSeen                    map[int]int64
}

// cut forgets what the checks found of a log that lost batches.
func (b *rbroker) cut() {
	b.verified, b.ackFound, b.dupSeen = 0, 0, 0
	b.tagsSeen = map[int]int64{}
}

type rproducer struct {
	id       int
	pid      int64 // -1: not idempotent
	acks     int16
	seq      int32
	cur      []byte // the batch being sent (a fresh copy per attempt)
	tag      int
	count    int
	attempt  int // the attempt whose answer counts
	inflight bool
}

type ackedBatch struct {
	tag  int
	base int64
	all  bool
}

type event struct {
	at int64
	n  int
	fn func()
}

type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].n < q[j].n
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

type rsim struct {
	t     testing.TB
	seed  uint64
	rng   *rand.Rand
	rules Rules
	n     int // brokers
	now   int64
	steps int
	nev   int
	q     eventQueue

	brokers []*rbroker // by id, [0] unused
	ctl     *controller.Core
	zk      map[controller.TopicPartition]controller.PartitionState
	czxid   int64
	// cut links, by sorted pair; node 0 is ZooKeeper and the controller
	cut      map[[2]int32]bool
	ctlOrder map[int32]int64 // last delivery time per broker: controller requests stay in order

	producers []*rproducer
	tickets   map[int]simTicket
	nticket   int
	acked     []ackedBatch
	tags      int
	committed []rbatch
	hwMax     int64 // the highest high watermark any leader had
	calm      bool  // the final quiet period: no faults
	trace     []string
	// fetchOffsetCounts is a deliberately broken leader for the test that
	// the simulation catches it: it says it honours the durable end but
	// counts the fetch offset.
	fetchOffsetCounts bool
	// powerLosses is the share (of 100) of faults that crash every
	// replica at once; 5 unless a test wants more. fsyncEveryMs bounds the
	// time between a disk's fsyncs: 22 ms unless a test wants slow disks.
	powerLosses  int
	fsyncEveryMs int
	// aheadFetches counts fetches sent ahead of the follower's fsync
	// (the durable scheme at work).
	aheadFetches int
}

type simTicket struct {
	producer, attempt int
	tag               int
}

func newRSim(t testing.TB, seed uint64, n int) *rsim {
	s := &rsim{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, seed*0x9e3779b97f4a7c15+17)), n: n, now: testNow,
		zk: map[controller.TopicPartition]controller.PartitionState{}, cut: map[[2]int32]bool{}, ctlOrder: map[int32]int64{},
		tickets: map[int]simTicket{}, powerLosses: 5, fsyncEveryMs: 22}
	s.rules = RulesOf(topicConfig(t, "min.insync.replicas", "2"))
	s.brokers = make([]*rbroker, n+1)
	for id := 1; id <= n; id++ {
		s.brokers[id] = &rbroker{id: int32(id), held: -1, where: -1, sessionCut: -1, leadHW: -1, fetchers: map[int32]*rfetcher{}, tagsSeen: map[int]int64{}}
		s.start(s.brokers[id])
	}
	if seed%4 == 1 {
		// A mixed cluster: one broker without the durable scheme.
		s.brokers[1+int(seed/4)%n].legacy = true
	}
	for id := 1; id <= n; id++ {
		s.register(s.brokers[id])
	}
	replicas := make([]int32, n)
	for i := range replicas {
		replicas[i] = int32(i + 1)
	}
	s.rng.Shuffle(n, func(i, j int) { replicas[i], replicas[j] = replicas[j], replicas[i] })
	s.ctl = controller.New(controller.Config{BrokerID: 0, Epoch: 1, DeleteTopicEnable: true})
	s.applyCtl(s.ctl.Start(s.registry(), []controller.TopicAssignment{{Name: simTopic, ID: simTopicID,
		Partitions: map[int32][]int32{0: replicas}}}, nil, nil))
	s.producers = []*rproducer{
		{id: 0, pid: 1000, acks: -1},
		{id: 1, pid: 2000, acks: -1},
		{id: 2, pid: -1, acks: 1},
	}
	for _, p := range s.producers {
		s.nextBatch(p)
		s.at(int64(s.rng.IntN(50)), func() { s.send(p) })
	}
	for id := 1; id <= n; id++ {
		s.scheduleFsync(s.brokers[id])
	}
	s.at(int64(100+s.rng.IntN(200)), s.chaos)
	return s
}

func (s *rsim) logf(format string, args ...any) {
	s.trace = append(s.trace, fmt.Sprintf("%6d ms step %d: ", s.now-testNow, s.steps)+fmt.Sprintf(format, args...))
	if keep := max(200, simTail()); len(s.trace) > 2*keep {
		s.trace = slices.Clone(s.trace[len(s.trace)-keep:])
	}
}

func (s *rsim) fail(format string, args ...any) {
	s.t.Helper()
	tail := s.trace
	if n := simTail(); len(tail) > n {
		tail = tail[len(tail)-n:]
	}
	var st strings.Builder
	for id := 1; id <= s.n; id++ {
		b := s.brokers[id]
		fmt.Fprintf(&st, "\n  broker %d up=%v leader=%v epoch=%d isr=%v hw=%d end=%d durable=%d epochs=%v log=%s", id, b.up, b.core != nil && b.core.Leading(),
			b.lepoch, b.core.isrOrNil(), b.hw(), b.log.end(), b.log.durable, b.log.epochs, b.log.describe())
	}
	zk := s.zk[controller.TopicPartition{Topic: simTopic}]
	s.t.Fatalf("seed %d step %d (replay with SIM_SEED=%d): %s\nzookeeper: leader %d epoch %d isr %v version %d%s\nlast events:\n  %s",
		s.seed, s.steps, s.seed, fmt.Sprintf(format, args...), zk.Leader, zk.LeaderEpoch, zk.ISR, zk.Version, st.String(), strings.Join(tail, "\n  "))
}

func (c *Core) isrOrNil() []int32 {
	if c == nil {
		return nil
	}
	return c.ISR()
}

func (b *rbroker) hw() int64 {
	if b.core == nil {
		return -1
	}
	return b.core.HighWatermark()
}

func (l *rlog) describe() string {
	var sb strings.Builder
	for _, b := range l.batches {
		fmt.Fprintf(&sb, " %d+%d@e%d#%d", b.base, b.count, b.epoch, b.tag)
	}
	return sb.String()
}

// at schedules fn after delay ms.
func (s *rsim) at(delay int64, fn func()) {
	s.nev++
	heap.Push(&s.q, &event{at: s.now + delay, n: s.nev, fn: fn})
}

// later schedules fn for broker b's current incarnation only.
func (s *rsim) later(b *rbroker, delay int64, fn func()) {
	gen := b.gen
	s.at(delay, func() {
		if b.up && b.gen == gen {
			fn()
		}
	})
}

func (s *rsim) linked(a, b int32) bool {
	if a > b {
		a, b = b, a
	}
	return !s.cut[[2]int32{a, b}]
}

// deliver sends a message from node a to node b: delivered after a random
// delay unless the link is cut or it is dropped (fn is then not called;
// the sender's timeout notices).
func (s *rsim) deliver(a, b int32, fn func()) {
	if !s.linked(a, b) || (!s.calm && s.rng.IntN(50) == 0) {
		return
	}
	s.at(int64(1+s.rng.IntN(15)), func() {
		if s.linked(a, b) {
			fn()
		}
	})
}

func (s *rsim) run(until int64) {
	for len(s.q) > 0 && s.q[0].at <= until {
		e := heap.Pop(&s.q).(*event)
		s.now = max(s.now, e.at)
		s.steps++
		e.fn()
		s.check()
	}
	s.now = max(s.now, until)
}

// --- ZooKeeper and the controller ---

func (s *rsim) registry() map[int32]controller.BrokerInfo {
	m := map[int32]controller.BrokerInfo{}
	for id := 1; id <= s.n; id++ {
		if b := s.brokers[id]; b.registered {
			m[int32(id)] = controller.BrokerInfo{ID: int32(id), Epoch: b.epoch,
				Endpoints: []controller.Endpoint{{Listener: "PLAINTEXT", Host: "b" + strconv.Itoa(id), Port: 9092, SecurityProtocol: "PLAINTEXT"}}}
		}
	}
	return m
}

// register writes the broker's registration (a new session) if it can
// reach ZooKeeper and its previous one is gone; else it tries again.
func (s *rsim) register(b *rbroker) {
	if !b.up || b.epoch != 0 {
		return // down, or registered as far as it knows
	}
	if b.registered || !s.linked(b.id, 0) {
		s.later(b, backoffMs, func() { s.register(b) })
		return
	}
	s.czxid++
	b.epoch, b.registered, b.sessionCut = s.czxid, true, -1
	b.session++
	s.logf("broker %d registers with epoch %d", b.id, b.epoch)
	if s.ctl != nil {
		s.applyCtl(s.ctl.BrokersChanged(s.registry()))
	}
}

// expire ends broker b's session: its registration goes and the
// controller hears of it.
func (s *rsim) expire(b *rbroker) {
	if !b.registered {
		return
	}
	b.registered = false
	s.logf("broker %d's session expires", b.id)
	s.applyCtl(s.ctl.BrokersChanged(s.registry()))
	if b.up {
		// The broker notices and registers a new session once it can.
		b.epoch = 0
		s.later(b, backoffMs, func() { s.register(b) })
	}
}

func (s *rsim) applyCtl(fx controller.Effects) {
	if fx.Resign || fx.Reload {
		s.fail("controller resigns or reloads: %+v", fx)
	}
	var versions []int32
	for _, w := range fx.Writes {
		st := w.State
		if w.Create {
			st.Version = 0
		} else {
			st.Version++
		}
		s.zk[w.TP] = st
		versions = append(versions, st.Version)
		s.logf("zookeeper: leader %d epoch %d isr %v version %d", st.Leader, st.LeaderEpoch, st.ISR, st.Version)
	}
	if len(fx.Writes) > 0 {
		if more := s.ctl.Written(fx, versions); more.Reload || more.Resign {
			s.fail("the controller mispredicted its versions")
		}
	}
	for _, snd := range fx.Send {
		if r, ok := snd.Req.(*kmsg.LeaderAndISRRequest); ok {
			s.sendLAI(snd.Broker, r)
		}
	}
}

// sendLAI delivers a LeaderAndIsr to a broker, in order after the
// previous ones, retried while the broker is unreachable and its
// registration the one the request is for.
func (s *rsim) sendLAI(to int32, r *kmsg.LeaderAndISRRequest) {
	b := s.brokers[to]
	when := max(s.now+int64(1+s.rng.IntN(10)), s.ctlOrder[to]+1)
	s.ctlOrder[to] = when
	s.at(when-s.now, func() {
		if info, ok := s.registry()[to]; !ok || info.Epoch != r.BrokerEpoch {
			return // the controller dropped the broker (or its old incarnation)
		}
		if !b.up || !s.linked(0, to) {
			s.at(backoffMs, func() { s.sendLAI(to, r) })
			return
		}
		s.leaderAndIsr(b, r)
	})
}

// --- brokers ---

// start opens the broker (a process start): the replica, if hosted,
// opens as a follower at its held epoch (startProduce), with the producer
// state rebuilt from the log.
func (s *rsim) start(b *rbroker) {
	b.up = true
	b.gen++
	b.core, b.follower, b.lepoch, b.followerHW, b.leadHW, b.where = nil, true, b.held, 0, -1, -1
	b.replicas, b.isr, b.partEpoch = nil, nil, 0
	b.fetchers = map[int32]*rfetcher{}
	b.roled = false
	if b.hosted {
		s.openCore(b)
	}
}

// openCore is startProduce.
func (s *rsim) openCore(b *rbroker) {
	if b.lepoch >= 0 && !b.follower {
		b.log.assignEpoch(b.lepoch, b.log.end())
	}
	c, fx := NewCore(s.rules, b.log.producers(), -1, 0, s.now, b.log.state())
	b.core = c
	s.carry(b, fx)
	if b.follower {
		s.carry(b, b.core.Follow())
	}
}

func (s *rsim) crash(b *rbroker) {
	s.logf("broker %d crashes (end %d, durable %d)", b.id, b.log.end(), b.log.durable)
	b.up = false
	b.gen++
	b.core = nil
	b.leadHW = -1
	b.log.crash(s.rng)
	b.cut()
	// Its session lives on until it times out.
	gen, session := b.gen, b.session
	s.at(sessionMs, func() {
		if b.session == session {
			s.expire(b)
		}
	})
	s.at(int64(200+s.rng.IntN(1500)), func() {
		if !b.up && b.gen == gen {
			s.restart(b)
		}
	})
}

func (s *rsim) restart(b *rbroker) {
	s.logf("broker %d restarts (end %d)", b.id, b.log.end())
	b.epoch = 0
	s.start(b)
	s.scheduleFsync(b)
	s.register(b)
}

func (s *rsim) scheduleFsync(b *rbroker) {
	s.later(b, int64(2+s.rng.IntN(s.fsyncEveryMs-2)), func() {
		b.log.fsync()
		s.scheduleFsync(b)
	})
}

// carry carries out a core's effects as the partition actor does.
func (s *rsim) carry(b *rbroker, fx Effects) {
	s.t.Helper()
	if fx.Problem != nil {
		s.fail("broker %d: problem %s: %v", b.id, fx.Problem.Msg, fx.Problem.Err)
	}
	for _, a := range fx.Acks {
		s.answer(b, a)
	}
	if fx.WaitDurable > 0 {
		gen := b.gen
		b.log.waits = append(b.log.waits, rwait{end: fx.WaitDurable, fn: func(err error) {
			if b.up && b.gen == gen && b.core != nil {
				s.carry(b, b.core.Durable(fx.WaitDurable, err, b.log.state()))
			}
		}})
	}
	if fx.Snapshot && b.core != nil {
		b.core.EncodeSnapshot(s.now, b.log.end())
		b.core.SnapshotWritten(b.log.end())
	}
	if fx.AlterISR != nil {
		s.alterISR(b, *fx.AlterISR)
	}
	if b.core != nil && b.core.Leading() {
		hw := b.core.HighWatermark()
		if b.leadHW >= 0 && hw < b.leadHW {
			s.fail("broker %d's high watermark fell from %d to %d while it leads", b.id, b.leadHW, hw)
		}
		b.leadHW = hw
	}
}

// leaderAndIsr is the catalog's handling: cluster.LeaderAndIsr decides,
// new replicas open as followers at the role's epoch, then each role is
// set and the fetchers follow or unfollow.
func (s *rsim) leaderAndIsr(b *rbroker, r *kmsg.LeaderAndISRRequest) {
	roles, resp := cluster.LeaderAndIsr(r, cluster.BrokerState{ID: b.id, Epoch: b.epoch, ControllerEpoch: b.ctrlEpoch,
		Local: func(string, int32) (cluster.Replica, bool) {
			// Only an epoch given in this incarnation fences (the catalog's roled).
			epoch := b.held
			if !b.roled {
				epoch = -1
			}
			return cluster.Replica{ID: simTopicID, LeaderEpoch: epoch}, b.hosted
		}})
	if resp.ErrorCode == 0 {
		b.ctrlEpoch = max(b.ctrlEpoch, r.ControllerEpoch)
	}
	if len(roles) == 0 {
		s.logf("broker %d refuses a LeaderAndIsr: %+v", b.id, resp)
	}
	for _, role := range roles {
		b.roled = true
		s.logf("broker %d takes leader %d epoch %d isr %v version %d", b.id, role.Leader, role.LeaderEpoch, role.ISR, role.ZkVersion)
		b.held = role.LeaderEpoch
		if !b.hosted {
			b.hosted = true
			b.lepoch, b.follower = role.LeaderEpoch, true
			s.openCore(b)
		}
		s.setRole(b, role)
		switch {
		case role.Leads(b.id):
			s.unfollow(b)
		case role.Leader >= 0:
			s.follow(b, role.Leader, role.LeaderEpoch)
		default:
			s.unfollow(b)
		}
	}
}

// setRole is partitionActor.setRole with lead and follow.
func (s *rsim) setRole(b *rbroker, r cluster.Role) {
	b.lepoch, b.follower = r.LeaderEpoch, !r.Leads(b.id)
	b.replicas, b.isr, b.partEpoch = slices.Clone(r.Replicas), slices.Clone(r.ISR), r.ZkVersion
	if !b.follower {
		b.log.assignEpoch(r.LeaderEpoch, b.log.end())
		l := Leadership{Me: b.id, LeaderEpoch: r.LeaderEpoch, PartitionEpoch: r.ZkVersion, Replicas: b.replicas, ISR: b.isr, LagMaxMs: lagMaxMs}
		start := max(b.followerHW, 0)
		if b.core.Leading() {
			start = b.core.HighWatermark()
		} else {
			b.leadHW = -1
		}
		s.carry(b, b.core.Lead(l, start, s.now, b.log.state()))
		s.armISRCheck(b, r.LeaderEpoch)
		return
	}
	if b.core.Leading() {
		b.followerHW = b.core.HighWatermark()
		s.carry(b, b.core.Follow())
	}
	b.leadHW = -1
}

func (s *rsim) armISRCheck(b *rbroker, epoch int32) {
	s.later(b, lagMaxMs/2, func() {
		if b.core == nil || !b.core.Leading() || epoch != b.lepoch {
			return
		}
		s.carry(b, b.core.CheckISR(s.now, b.log.end()))
		s.armISRCheck(b, epoch)
	})
}

// alterISR is the ISRSender: an AlterPartition to the controller, the
// answer (or, lost, a refusal after the timeout) back to the core.
func (s *rsim) alterISR(b *rbroker, prop ISRProposal) {
	s.logf("broker %d proposes isr %v (leader epoch %d, partition epoch %d)", b.id, prop.ISR, prop.LeaderEpoch, prop.PartitionEpoch)
	gen := b.gen
	answered := false
	done := func(isr []int32, epoch int32, outcome ISROutcome) {
		if answered || !b.up || b.gen != gen || b.core == nil {
			return
		}
		answered = true
		s.logf("broker %d: isr change answered %d %v epoch %d", b.id, outcome, isr, epoch)
		s.carry(b, b.core.ISRUpdated(prop, isr, epoch, outcome, b.log.state()))
	}
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version, req.BrokerID, req.BrokerEpoch = 3, b.id, b.epoch
	t := kmsg.NewAlterPartitionRequestTopic()
	t.Topic, t.TopicID = simTopic, simTopicID
	rp := kmsg.NewAlterPartitionRequestTopicPartition()
	rp.Partition, rp.LeaderEpoch, rp.PartitionEpoch, rp.NewISR = 0, prop.LeaderEpoch, prop.PartitionEpoch, prop.ISR
	for _, id := range prop.ISR {
		rp.NewEpochISR = append(rp.NewEpochISR, kmsg.AlterPartitionRequestTopicPartitionNewEpochISR{BrokerID: id, BrokerEpoch: -1})
	}
	t.Partitions = []kmsg.AlterPartitionRequestTopicPartition{rp}
	req.Topics = []kmsg.AlterPartitionRequestTopic{t}
	s.sendAlter(b, req, done, &answered)
}

// sendAlter sends an AlterPartition, and again after a timeout while no
// answer came (Kafka's AlterPartitionManager resends until the
// controller answers: a lost answer says nothing of whether the write
// happened, so it must not count as a refusal).
func (s *rsim) sendAlter(b *rbroker, req *kmsg.AlterPartitionRequest, done func([]int32, int32, ISROutcome), answered *bool) {
	s.later(b, alterTimeout, func() {
		if !*answered {
			s.sendAlter(b, req, done, answered)
		}
	})
	s.deliver(b.id, 0, func() {
		fx := s.ctl.AlterPartition(req)
		s.applyCtl(fx)
		resp := fx.Reply.(*kmsg.AlterPartitionResponse)
		s.deliver(0, b.id, func() {
			if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
				done(nil, 0, ISRFenced)
				return
			}
			pr := resp.Topics[0].Partitions[0]
			switch kerr.Code(pr.ErrorCode) {
			case kerr.None:
			case kerr.IneligibleReplica, kerr.OperationNotAttempted, kerr.InvalidRequest:
				done(nil, 0, ISRRefused)
				return
			default:
				done(nil, 0, ISRFenced)
				return
			}
			done(pr.ISR, pr.PartitionEpoch, ISRChanged)
		})
	})
}

// --- the follower side: fetchers ---

// follow is Fetchers.Follow: the partition moves to the leader's
// fetcher, with a fresh position.
func (s *rsim) follow(b *rbroker, leader, epoch int32) {
	if b.where >= 0 && b.where != leader {
		b.fetchers[b.where].part = nil
	}
	f := b.fetchers[leader]
	if f == nil {
		f = &rfetcher{leader: leader, gen: b.gen}
		b.fetchers[leader] = f
	}
	b.where = leader
	f.part = &followed{leader: leader, epoch: epoch}
	if !f.busy {
		s.runFetcher(b, f)
	}
}

func (s *rsim) unfollow(b *rbroker) {
	if b.where >= 0 {
		b.fetchers[b.where].part = nil
		b.where = -1
	}
}

type fetchReq struct {
	from             int32
	epoch            int32
	offset           int64
	lastFetchedEpoch int32
	durable          int64 // -1: not given
}

type fetchResp struct {
	code      kerr.Code
	hw        int64
	batches   []rbatch
	diverging *EpochEnd
	honoured  bool
}

// runFetcher is one round of fetcher.run: the position if unknown, the
// durability gate (replica/durable.go), one fetch, its answer handed on,
// then the next round.
func (s *rsim) runFetcher(b *rbroker, f *rfetcher) {
	p := f.part
	if p == nil || p.paused || !b.up || f.gen != b.gen {
		return
	}
	if !p.known {
		if b.core == nil {
			return
		}
		// replicaPosition fsyncs a tail not yet durable.
		b.log.fsync()
		p.known, p.offset, p.lastEpoch = true, b.log.end(), b.log.latestEpoch()
		p.gen++
		p.durable, p.honoured, p.sent = b.log.durable, false, -1
	}
	need := p.offset
	if p.honoured && !f.settle && p.sent >= 0 {
		need = min(need, p.sent)
	}
	f.settle = false
	f.busy = true
	if p.durable < need {
		// Wait for the fsync (the real gate's wait; a lost tail reads the
		// position again).
		gen := b.gen
		b.log.waits = append(b.log.waits, rwait{end: need, fn: func(err error) {
			if !b.up || b.gen != gen {
				return
			}
			switch {
			case err != nil:
				p.known = false
			default:
				p.durable = max(p.durable, need)
			}
			f.busy = false
			s.runFetcher(b, f) // f.part, if followed anew meanwhile
		}})
		return
	}
	req := fetchReq{from: b.id, epoch: p.epoch, offset: p.offset, lastFetchedEpoch: p.lastEpoch, durable: -1}
	if !b.legacy {
		req.durable = p.durable
	}
	p.sent = p.offset
	f.ahead = p.durable < p.offset
	if f.ahead {
		s.aheadFetches++
	}
	done := false
	finish := func(resp *fetchResp) {
		if done || !b.up || f.gen != b.gen {
			return
		}
		done = true
		if resp == nil {
			f.busy = false
			s.later(b, backoffMs, func() {
				if !f.busy { // a Follow in the meantime may have started the next round
					s.runFetcher(b, f)
				}
			})
			return
		}
		s.handOn(b, f, p, resp)
	}
	s.later(b, fetchTimeout, func() { finish(nil) })
	leader := s.brokers[f.leader]
	s.deliver(b.id, f.leader, func() {
		if !leader.up {
			return
		}
		resp := s.serveReplicaFetch(leader, req)
		s.deliver(f.leader, b.id, func() { finish(&resp) })
	})
}

// reportDurable is the partition's durability callback: p's durable end
// moves to end once it is fsynced, unless the position was read again
// since.
func (s *rsim) reportDurable(b *rbroker, p *followed, end int64) {
	gen, pgen := b.gen, p.gen
	b.log.waits = append(b.log.waits, rwait{end: end, fn: func(err error) {
		if err == nil && b.up && b.gen == gen && p.gen == pgen {
			p.durable = max(p.durable, end)
		}
	}})
}

// next ends a fetcher round: the next one at once after data, after a
// while when the leader had nothing (its fetch parks up to max wait). A
// fetch that went ahead of the fsync did not park: with nothing, the next
// one waits for the fsync instead (settle).
func (s *rsim) next(b *rbroker, f *rfetcher, idle bool) {
	f.busy = false
	delay := int64(0)
	switch {
	case idle && f.ahead:
		f.settle = true
	case idle:
		delay = int64(1 + s.rng.IntN(fetchWaitMs))
	}
	s.later(b, delay, func() {
		if !f.busy {
			s.runFetcher(b, f)
		}
	})
}

// handOn is fetcher.handOn for part p.
func (s *rsim) handOn(b *rbroker, f *rfetcher, p *followed, resp *fetchResp) {
	switch resp.code {
	case kerr.None:
		p.honoured = resp.honoured
	case kerr.FencedLeaderEpoch:
		// Its epoch is older than the leader's: a newer LeaderAndIsr is on
		// its way.
		s.logf("broker %d's fetch from %d at epoch %d: %v, pausing", b.id, p.leader, p.epoch, resp.code)
		p.paused = true
		s.next(b, f, true)
		return
	case kerr.UnknownLeaderEpoch, kerr.NotLeaderOrFollower:
		// The leader has not heard of its epoch or its leadership yet (the
		// follower's LeaderAndIsr came first): next round.
		s.next(b, f, true)
		return
	case kerr.OffsetOutOfRange:
		if resp.hw >= 0 && p.offset > resp.hw {
			s.truncate(b, p, resp.hw)
		} else {
			p.known = false
		}
		s.next(b, f, true)
		return
	default:
		s.fail("unexpected fetch error %v", resp.code)
	}
	if d := resp.diverging; d != nil {
		s.logf("broker %d's fetch from %d at %d (last epoch %d): diverging %+v", b.id, p.leader, p.offset, p.lastEpoch, *d)
	}
	if d := resp.diverging; d != nil && (d.Epoch >= 0 || d.EndOffset >= 0) {
		// Kafka's follower cuts where the leader's epoch ends or where its
		// own largest epoch up to that one ends, whichever is lower (the
		// leader's end alone may lie past a divergent tail of an epoch the
		// leader never had: a cut there cuts nothing, and the same answer
		// comes again forever); the next fetch checks again from there.
		to := d.EndOffset
		if e, end := b.log.endOffsetFor(d.Epoch); e >= 0 {
			to = min(to, end)
		}
		s.truncate(b, p, to)
		s.next(b, f, false)
		return
	}
	if len(resp.batches) == 0 && resp.hw == p.hw {
		s.next(b, f, true)
		return
	}
	s.followerAppend(b, resp.batches, resp.hw, func(end int64, err error) {
		if err != nil {
			p.known = false
		} else {
			p.offset, p.hw = end, resp.hw
			if n := len(resp.batches); n > 0 {
				p.lastEpoch = resp.batches[n-1].epoch
			}
			if end > p.durable {
				s.reportDurable(b, p, end)
			}
		}
		s.next(b, f, len(resp.batches) == 0)
	})
}

// truncate is fetcher.truncate with followerTruncate.
func (s *rsim) truncate(b *rbroker, p *followed, to int64) {
	if b.core == nil || !b.follower {
		p.known = false
		return
	}
	before := b.log.end()
	end := b.log.truncateTo(max(to, 0))
	if end < before {
		s.logf("broker %d truncates %d → %d", b.id, before, end)
		b.cut()
	}
	c, fx := NewCore(s.rules, b.log.producers(), -1, 0, s.now, b.log.state())
	b.core = c
	s.carry(b, fx)
	s.carry(b, b.core.Follow())
	b.followerHW = min(b.followerHW, end)
	s.carry(b, b.core.FollowerHighWatermark(b.followerHW, b.log.state()))
	p.offset, p.known = end, false
}

// followerAppend is partitionActor.followerAppend with a Durable
// callback: the reply comes at once, durability is reported apart
// (reportDurable).
func (s *rsim) followerAppend(b *rbroker, bs []rbatch, leaderHW int64, reply func(int64, error)) {
	if b.core == nil || !b.follower {
		reply(0, ErrNotFollower)
		return
	}
	if len(bs) > 0 {
		if err := b.log.appendReplicated(bs); err != nil {
			reply(0, err)
			return
		}
		var records []byte
		for _, x := range bs {
			records = append(records, x.data...)
		}
		s.carry(b, b.core.Replicated(records, b.log.state()))
	}
	s.carry(b, b.core.FollowerHighWatermark(leaderHW, b.log.state()))
	b.followerHW = b.core.HighWatermark()
	reply(b.log.end(), nil)
}

// --- the leader side ---

// serveReplicaFetch is partitionActor.serveReplicaFetch.
func (s *rsim) serveReplicaFetch(b *rbroker, req fetchReq) fetchResp {
	switch {
	case b.core == nil || !b.core.Leading():
		return fetchResp{code: kerr.NotLeaderOrFollower, hw: -1}
	case req.epoch >= 0 && req.epoch < b.lepoch:
		return fetchResp{code: kerr.FencedLeaderEpoch, hw: -1}
	case req.epoch > b.lepoch:
		return fetchResp{code: kerr.UnknownLeaderEpoch, hw: -1}
	}
	if req.lastFetchedEpoch >= 0 {
		if epoch, end := b.log.endOffsetFor(req.lastFetchedEpoch); epoch < req.lastFetchedEpoch || end < req.offset {
			return fetchResp{hw: b.core.HighWatermark(), diverging: &EpochEnd{Epoch: epoch, EndOffset: end}}
		}
	}
	if req.offset < 0 || req.offset > b.log.end() {
		return fetchResp{code: kerr.OffsetOutOfRange, hw: -1}
	}
	durable := req.durable
	if b.legacy || s.fetchOffsetCounts {
		durable = -1
	}
	fx, _ := b.core.FollowerFetched(req.from, req.offset, durable, s.now, b.log.state())
	s.carry(b, fx)
	if simVerbose {
		s.logf("leader %d: fetch by %d at %d durable %d (last epoch %d); high watermark %d", b.id, req.from, req.offset, req.durable, req.lastFetchedEpoch, b.core.HighWatermark())
	}
	return fetchResp{hw: b.core.HighWatermark(), batches: b.log.from(req.offset, 1+s.rng.IntN(4)), honoured: !b.legacy && req.durable >= 0}
}

// --- producers ---

func (s *rsim) nextBatch(p *rproducer) {
	s.tags++
	p.tag = s.tags
	p.count = 1 + s.rng.IntN(3)
	var opts []batchtest.Option
	if p.pid >= 0 {
		opts = append(opts, batchtest.Producer(p.pid, 0, p.seq))
	}
	p.cur = batchtest.Plain(p.count, s.now, opts...)
}

// send sends p's batch to the broker it believes leads (now and then a
// stale or random one).
func (s *rsim) send(p *rproducer) {
	if p.inflight || p.cur == nil {
		return
	}
	zk := s.zk[controller.TopicPartition{Topic: simTopic}]
	to := zk.Leader
	if to <= 0 || s.rng.IntN(10) == 0 {
		to = int32(1 + s.rng.IntN(s.n))
	}
	p.attempt++
	p.inflight = true
	attempt := p.attempt
	s.nticket++
	tk := s.nticket
	s.tickets[tk] = simTicket{producer: p.id, attempt: attempt, tag: p.tag}
	records := slices.Clone(p.cur)
	s.at(produceTimout, func() {
		if p.attempt == attempt && p.inflight {
			p.inflight = false
			s.at(backoffMs, func() { s.send(p) })
		}
	})
	b := s.brokers[to]
	const client = 100 // the producers' node: its links are never cut
	s.deliver(client, to, func() {
		if !b.up {
			return
		}
		if b.core == nil || b.follower {
			s.answer(b, Ack{Ticket: tk, Code: kerr.NotLeaderOrFollower, BaseOffset: -1})
			return
		}
		a, fx := b.core.Produce(Produce{Records: records, Version: 9, Acks: p.acks, Ticket: tk}, s.now, b.log.state())
		s.carry(b, fx)
		if a != nil {
			res, _ := b.log.appendLeader(a.Records, b.lepoch, p.tag)
			s.carry(b, b.core.Appended(a, res, nil, s.now, b.log.state()))
		}
	})
}

// answer sends a produce answer back to its producer.
func (s *rsim) answer(b *rbroker, a Ack) {
	tk := s.tickets[a.Ticket.(int)]
	p := s.producers[tk.producer]
	s.deliver(b.id, 100, func() {
		if p.attempt != tk.attempt || !p.inflight {
			return // an answer to an attempt given up on
		}
		p.inflight = false
		if a.Code != kerr.None {
			s.logf("producer %d batch #%d: %v from broker %d", p.id, tk.tag, a.Code, b.id)
			// Every error is retried: OUT_OF_ORDER_SEQUENCE_NUMBER too, which
			// a stale leader that missed the producer's last batches answers.
			s.at(backoffMs, func() { s.send(p) })
			return
		}
		s.logf("producer %d batch #%d acked at %d by broker %d", p.id, tk.tag, a.BaseOffset, b.id)
		s.acked = append(s.acked, ackedBatch{tag: tk.tag, base: a.BaseOffset, all: p.acks == -1})
		if p.pid >= 0 {
			p.seq += int32(p.count)
		}
		if s.calm {
			p.cur = nil // the run ends: no new batches
			return
		}
		s.nextBatch(p)
		s.at(int64(s.rng.IntN(30)), func() { s.send(p) })
	})
}

// --- faults ---

func (s *rsim) chaos() {
	if s.calm {
		return
	}
	id := int32(1 + s.rng.IntN(s.n))
	b := s.brokers[id]
	switch r := s.rng.IntN(100); {
	case r < 25:
		if b.up {
			s.crash(b)
		}
	case r < 25+s.powerLosses:
		// Every replica at once: a power loss.
		for i := 1; i <= s.n; i++ {
			if s.brokers[i].up {
				s.crash(s.brokers[i])
			}
		}
	case r < 45+s.powerLosses:
		other := int32(s.rng.IntN(s.n + 1)) // 0: ZooKeeper
		if other != id {
			s.cutLink(id, other)
		}
	case r < 70+s.powerLosses:
		s.healAll()
	default:
		// the leader, cut from everyone
		zk := s.zk[controller.TopicPartition{Topic: simTopic}]
		if zk.Leader > 0 && s.rng.IntN(2) == 0 {
			for i := int32(0); i <= int32(s.n); i++ {
				if i != zk.Leader {
					s.cutLink(zk.Leader, i)
				}
			}
		}
	}
	s.at(int64(50+s.rng.IntN(600)), s.chaos)
}

func (s *rsim) cutLink(a, b int32) {
	if a > b {
		a, b = b, a
	}
	if s.cut[[2]int32{a, b}] {
		return
	}
	s.cut[[2]int32{a, b}] = true
	s.logf("link %d–%d cut", a, b)
	if a == 0 {
		br := s.brokers[b]
		session := br.session
		br.sessionCut = s.now
		cutAt := s.now
		s.at(sessionMs, func() {
			if !s.linked(0, b) && br.sessionCut == cutAt && br.session == session {
				s.expire(br)
			}
		})
	}
}

func (s *rsim) healAll() {
	if len(s.cut) > 0 {
		s.logf("network heals")
	}
	for k := range s.cut {
		delete(s.cut, k)
		if k[0] == 0 {
			s.brokers[k[1]].sessionCut = -1
		}
	}
}

// --- invariants ---

func (s *rsim) leader() *rbroker {
	zk := s.zk[controller.TopicPartition{Topic: simTopic}]
	if zk.Leader <= 0 {
		return nil
	}
	b := s.brokers[zk.Leader]
	if !b.up || b.core == nil || !b.core.Leading() || b.lepoch != zk.LeaderEpoch {
		return nil
	}
	return b
}

func (s *rsim) check() {
	s.t.Helper()
	// 2: the committed prefix grows from every leader's high watermark
	// and never changes.
	for id := 1; id <= s.n; id++ {
		b := s.brokers[id]
		if !b.up || b.core == nil {
			continue
		}
		hw := b.core.HighWatermark()
		if hw > b.log.end() {
			s.fail("broker %d's high watermark %d is past its log end %d", id, hw, b.log.end())
		}
		if b.core.Leading() {
			s.hwMax = max(s.hwMax, hw)
		} else if hw > s.hwMax {
			s.fail("follower %d's high watermark %d is past any leader's (%d)", id, hw, s.hwMax)
		}
		for i := b.verified; i < len(b.log.batches); i++ {
			x := b.log.batches[i]
			if x.base >= hw {
				break
			}
			if i < len(s.committed) {
				if c := s.committed[i]; !x.same(c) {
					s.fail("broker %d's batch %d (%d+%d@e%d#%d) below its high watermark %d differs from the committed one (%d+%d@e%d#%d)",
						id, i, x.base, x.count, x.epoch, x.tag, hw, c.base, c.count, c.epoch, c.tag)
				}
				b.verified = i + 1
				continue
			}
			if !b.core.Leading() || x.end() > hw {
				break // a batch only partly committed: the rest of it is not yet
			}
			s.committed = append(s.committed, x)
			b.verified = i + 1
		}
	}
	if l := s.leader(); l != nil {
		if len(l.log.batches) < len(s.committed) {
			s.fail("leader %d's log (end %d) lacks committed batches (committed to %d)", l.id, l.log.end(), s.committed[len(s.committed)-1].end())
		}
		// 1: acknowledged acks=all batches are in the leader's log.
		for ; l.ackFound < len(s.acked); l.ackFound++ {
			if a := s.acked[l.ackFound]; a.all && !l.log.holds(a.tag, a.base) {
				s.fail("batch #%d acknowledged at offset %d is not in leader %d's log", a.tag, a.base, l.id)
			}
		}
	}
	// 4: no idempotent batch twice in a log.
	for id := 1; id <= s.n; id++ {
		b := s.brokers[id]
		for ; b.dupSeen < len(b.log.batches); b.dupSeen++ {
			x := b.log.batches[b.dupSeen]
			if x.pid < 0 {
				continue
			}
			if at, ok := b.tagsSeen[x.tag]; ok {
				s.fail("broker %d has batch #%d twice: at %d and %d", id, x.tag, at, x.base)
			}
			b.tagsSeen[x.tag] = x.base
		}
	}
}

func (l *rlog) holds(tag int, base int64) bool {
	i, ok := slices.BinarySearchFunc(l.batches, base, func(b rbatch, off int64) int {
		switch {
		case b.base < off:
			return -1
		case b.base > off:
			return 1
		}
		return 0
	})
	return ok && l.batches[i].tag == tag
}

// finish heals everything, restarts what is down, lets the producers
// finish and checks that the cluster settled (invariant 5).
func (s *rsim) finish(quietMs int64) {
	s.calm = true
	s.logf("calm: the network heals, every broker starts")
	s.healAll()
	for id := 1; id <= s.n; id++ {
		if b := s.brokers[id]; !b.up {
			s.restart(b)
		}
	}
	s.run(s.now + quietMs)
	for _, p := range s.producers {
		if p.cur != nil {
			s.fail("producer %d's batch #%d is still not acknowledged after the quiet period", p.id, p.tag)
		}
	}
	zk := s.zk[controller.TopicPartition{Topic: simTopic}]
	l := s.leader()
	if l == nil {
		s.fail("no leader after the quiet period (zookeeper says %d)", zk.Leader)
	}
	if len(zk.ISR) != s.n {
		s.fail("the ISR in zookeeper is %v after the quiet period", zk.ISR)
	}
	if len(l.core.ISR()) != s.n {
		s.fail("leader %d's ISR is %v after the quiet period", l.id, l.core.ISR())
	}
	for id := 1; id <= s.n; id++ {
		b := s.brokers[id]
		if b == l {
			continue
		}
		if l.core.HighWatermark() != l.log.end() {
			s.fail("leader %d's high watermark %d is not its log end %d after the quiet period", l.id, l.core.HighWatermark(), l.log.end())
		}
		if len(b.log.batches) != len(l.log.batches) {
			s.fail("broker %d's log (end %d) is not the leader's (end %d) after the quiet period", id, b.log.end(), l.log.end())
		}
		for i := range b.log.batches {
			if !b.log.batches[i].same(l.log.batches[i]) {
				s.fail("broker %d's batch %d differs from leader %d's after the quiet period", id, i, l.id)
			}
		}
	}
}

// simVerbose logs every follower fetch in the trace (SIM_VERBOSE=1).
var simVerbose = os.Getenv("SIM_VERBOSE") != ""

// simTail is how many trace lines a failure shows (SIM_TRACE, 60).
func simTail() int {
	if n, err := strconv.Atoi(os.Getenv("SIM_TRACE")); err == nil {
		return n
	}
	return 60
}

// simSeeds reads which seeds a simulation runs: SIM_SEED=<seed> replays
// one, SIM_SEEDS=<n> runs n from 1 (or from SIM_SEED, given both), else
// dflt (a fifth of it with -short).
func simSeeds(t *testing.T, dflt int) (first uint64, n int) {
	first, n = 1, dflt
	if testing.Short() {
		n = max(dflt/5, 1)
	}
	seeds, one := os.Getenv("SIM_SEEDS"), os.Getenv("SIM_SEED")
	if one != "" {
		k, err := strconv.ParseUint(one, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		first, n = k, 1
	}
	if seeds != "" {
		k, err := strconv.Atoi(seeds)
		if err != nil {
			t.Fatal(err)
		}
		n = k
	}
	return first, n
}

func TestReplicationSimulation(t *testing.T) {
	seeds := 300 // about 3 s
	if raceEnabled {
		seeds = 60 // about 6 s
	}
	first, n := simSeeds(t, seeds)
	ahead := 0
	for seed := first; seed < first+uint64(n); seed++ {
		brokers := 3
		if seed%5 == 0 {
			brokers = 5
		}
		s := newRSim(t, seed, brokers)
		if seed%3 == 2 {
			// Slow disks: followers hold unsynced data across many
			// fetches, and crashes take more of it.
			s.fsyncEveryMs, s.powerLosses = 200, 15
		}
		s.run(s.now + 4000)
		s.finish(5000)
		ahead += s.aheadFetches
	}
	if n >= 10 && ahead == 0 {
		t.Fatalf("no follower fetched ahead of its fsync in %d seeds: the durable scheme was not exercised", n)
	}
	t.Logf("%d fetches went ahead of the follower's fsync", ahead)
}

// simProbe runs a simulation whose failure ends the run, not the test:
// for the tests that the simulation catches a broken protocol.
type simProbe struct {
	testing.TB
	failure string
}

func (p *simProbe) Helper() {}

func (p *simProbe) Fatalf(format string, args ...any) {
	p.failure = fmt.Sprintf(format, args...)
	panic(p)
}

// run runs fn, returning the simulation's failure ("" for none).
func (p *simProbe) run(fn func()) (failure string) {
	defer func() {
		if r := recover(); r != nil {
			if r != any(p) {
				panic(r)
			}
			failure = p.failure
		}
	}()
	fn()
	return ""
}

// TestReplicationSimulationCatchesFetchOffsetPositions: a leader that
// answers followers it honours their durable end but counts their fetch
// offsets (what they hold, fsynced or not) acknowledges records a
// follower's crash can take away; the simulation finds a seed where an
// acknowledged or committed batch is then lost. This is the evidence that
// the simulation exercises the durable scheme, and that the invariants
// would catch a leader that counted the wrong position.
func TestReplicationSimulationCatchesFetchOffsetPositions(t *testing.T) {
	const seeds = 2000
	for seed := uint64(1); seed <= seeds; seed++ {
		probe := &simProbe{TB: t}
		failure := probe.run(func() {
			s := newRSim(probe, seed, 3)
			s.fetchOffsetCounts = true
			s.fsyncEveryMs, s.powerLosses = 200, 25
			s.run(s.now + 4000)
			s.finish(5000)
		})
		if strings.Contains(failure, "acknowledged") || strings.Contains(failure, "committed") {
			t.Logf("seed %d: %s", seed, strings.SplitN(failure, "\n", 2)[0])
			return
		}
	}
	t.Fatalf("no seed of %d lost an acknowledged batch with a leader counting fetch offsets", seeds)
}
