package txn_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/actors/txn"
	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
	"github.com/samsa-io/samsa/wire/kerr"
)

// A deterministic simulation of the transaction coordinator's core with
// the partition cores it writes markers to (one broker, no replication:
// that protocol has its own simulation in actors/partition). Producers
// run transactions over random partitions, commit or abort them, crash
// and come back (fencing their old selves); the coordinator's records
// and its markers arrive after random delays; the coordinator itself
// restarts from its log, losing the writes in flight; time passes, so
// abandoned transactions time out. Invariants, checked after every step
// and at the end:
//
//   - read_committed (records below the last stable offset, without the
//     aborted transactions the index names) never shows a record of a
//     transaction that was aborted, nor one not yet decided;
//   - the last stable offset never goes back;
//   - the group's committed offsets (TxnOffsetCommit through the real
//     group core, its batch verified on the group's partition, completed
//     by that partition's marker) are never an uncommitted transaction's,
//     and once everything settles each producer's is its last committed
//     transaction's: offsets and records become visible together;
//   - once everything settles, every transaction a producer was told is
//     committed is visible whole on every partition it wrote, and no
//     other transaction's records are, and no partition is left with a
//     transaction open (its last stable offset is its log end).
//
// The partitions verify a batch that opens a transaction with the
// coordinator first (KIP-890), the answer and the append after it each
// delayed, so markers can land in between. Some batches go astray: they
// reach their partition only much later (a request the client timed
// out), and their producer aborts its transaction and bumps its epoch,
// as a client does after such an error. A stray landing after its
// transaction ended would, unverified, open a transaction no
// coordinator knows and hang its partition.
//
// SIM_SEED=<seed> replays one seed exactly; SIM_SEEDS=<n> runs n.
func TestTransactionSimulation(t *testing.T) {
	first, n := uint64(1), 200
	if testing.Short() {
		n = 40
	}
	if s := os.Getenv("SIM_SEED"); s != "" {
		k, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		first, n = k, 1
	}
	if s := os.Getenv("SIM_SEEDS"); s != "" {
		k, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		n = k
	}
	for seed := first; seed < first+uint64(n); seed++ {
		s := newTSim(t, seed)
		s.run(600)
		s.settle()
	}
}

const (
	simPartitions = 3
	simProducers  = 3
	simTimeoutMs  = 5_000
)

type tsim struct {
	t     *testing.T
	seed  uint64
	rng   *rand.Rand
	now   int64
	step  int
	trail []string

	coord    *txn.Core
	coordLog []txn.Append // durable __transaction_state records
	epoch    int32        // coordinator epoch
	inflight []delayed    // coordinator appends not yet durable
	markers  []delayed    // marker deliveries to partitions
	network  []delayed    // produces, their verifications and strays on their way

	parts []*simPartition // the data partitions, then the group's __consumer_offsets partition
	prods []*simProducer
	pids  int64
	group *group.Group // the group whose offsets the transactions commit (TxnOffsetCommit)

	// Ground truth from the producers' side.
	committed map[string]bool // txn key -> told committed (true) or aborted (false)
	unknown   map[string]bool // the producer crashed with its EndTxn out: either outcome, but whole
}

type delayed struct {
	at  int64
	run func()
}

type markerJob struct {
	m    txn.Markers
	left int
}

type simPartition struct {
	core    *partition.Core
	batches [][]byte
	end     int64
	aborted []segment.AbortedTxn
	lso     int64
}

type simProducer struct {
	id        string
	pid       int64
	epoch     int16
	ready     bool // has a producer id and epoch
	busy      bool // a request to the coordinator is out
	inTxn     bool
	k         int                 // this producer's transaction number
	parts     map[int]bool        // partitions added to the open transaction
	seq       map[int32]int32     // next sequence per partition (per epoch)
	written   map[int]int         // records written per partition in the open transaction
	txnKey    string              // the open transaction's key
	expected  map[string][]string // txn key -> the values written, for the final check
	offsets   map[string]int64    // txn key -> the offset its TxnOffsetCommit committed for this producer's input
	offsetsIn bool                // the open transaction's offsets are committed (pending its marker)
	// awaitingGroup: a TxnOffsetCommit is out to the group coordinator;
	// like a real client, the producer sends nothing else meanwhile.
	awaitingGroup bool
	gen           int   // the instance: answers to an earlier one are dropped
	ending        *bool // the EndTxn out (or to retry), commit or abort
	inst          int   // the instance, for its produces (gen also moves on coordinator restarts)
	producing     bool  // a produce is out: the next request waits for its answer
	mustAbort     bool  // a produce failed or went astray: abort, then bump the epoch
	bump          bool  // re-init with the current producer id and epoch (KIP-360)
}

func newTSim(t *testing.T, seed uint64) *tsim {
	s := &tsim{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, 99)), now: 1_000_000, epoch: 1,
		committed: map[string]bool{}, unknown: map[string]bool{}, pids: 1000}
	s.coord = txn.New(txn.Config{MaxTimeoutMs: 60_000, IDExpirationMs: 1 << 40}, s.epoch)
	s.apply(s.coord.Loaded(s.now))
	rules := partition.RulesOf(config.ParseTopic(config.EffectiveTopic(nil, config.Layers{})))
	rules.Transactions = true
	for range simPartitions + 1 { // the last: __consumer_offsets
		c, _ := partition.NewCore(rules, nil, -1, 0, s.now, simLogState(0))
		s.parts = append(s.parts, &simPartition{core: c})
	}
	s.group = group.NewGroup(simGroup, group.Config{})
	for i := range simProducers {
		s.prods = append(s.prods, newSimProducer(fmt.Sprintf("tx-%d", i)))
	}
	return s
}

func newSimProducer(id string) *simProducer {
	return &simProducer{id: id, pid: -1, epoch: -1, expected: map[string][]string{}, offsets: map[string]int64{}}
}

// The group and its offsets partition: each producer commits, in some
// of its transactions, the offset of "its" input partition (its index),
// as consume-transform-produce does.
const (
	simGroup       = "g"
	simInputTopic  = "in"
	simOffsetsPart = simPartitions // index in tsim.parts
)

var simOffsetsTP = txn.TopicPartition{Topic: "__consumer_offsets", Partition: 0}

// tpOf is partition i's name in the coordinator's transactions.
func tpOf(i int) txn.TopicPartition {
	if i == simOffsetsPart {
		return simOffsetsTP
	}
	return txn.TopicPartition{Topic: "t", Partition: int32(i)}
}

func simLogState(end int64) partition.LogState {
	return partition.LogState{End: end, RecoveryPoint: end, Policy: segment.FlushNever, SegmentBytes: 1 << 30}
}

func (s *tsim) note(format string, args ...any) {
	s.trail = append(s.trail, fmt.Sprintf("%d@%d: ", s.step, s.now)+fmt.Sprintf(format, args...))
	if len(s.trail) > 40 {
		s.trail = s.trail[1:]
	}
}

func (s *tsim) fail(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("seed %d step %d (replay with SIM_SEED=%d): %s\nlast events:\n  %s", s.seed, s.step, s.seed,
		fmt.Sprintf(format, args...), strings.Join(s.trail, "\n  "))
}

// apply carries out the coordinator's effects: appends become durable
// after a delay, replies go to the producers, markers are delivered.
func (s *tsim) apply(fx txn.Effects) {
	for _, a := range fx.Appends {
		a := a
		s.inflight = append(s.inflight, delayed{at: s.now + s.rng.Int64N(30), run: func() {
			s.coordLog = append(s.coordLog, a)
			s.apply(s.coord.Appended(a.Token, kerr.None, s.now))
		}})
	}
	for _, r := range fx.Replies {
		r.Ref.(func(txn.Reply))(r)
	}
	for _, m := range fx.Markers {
		s.sendMarkers(m)
	}
	for _, in := range fx.NeedProducerID {
		s.pids++
		in.NewProducerID = s.pids
		s.apply(s.coord.InitProducerID(in, s.now))
	}
}

func (s *tsim) sendMarkers(m txn.Markers) {
	job := &markerJob{m: m, left: len(m.Partitions)}
	key := fmt.Sprintf("%s/%d/%d", m.TransactionalID, m.ProducerID, m.ProducerEpoch)
	s.note("markers %s commit=%v %v", key, m.Commit, m.Partitions)
	coord := s.coord
	for _, tp := range m.Partitions {
		p := s.partOf(tp)
		s.markers = append(s.markers, delayed{at: s.now + s.rng.Int64N(50), run: func() {
			if s.writeMarker(p, m) && p == s.parts[simOffsetsPart] {
				// As the broker does: the group coordinator completes
				// the transaction's offsets once the marker is written.
				s.group.CompleteTxn(m.ProducerID, m.Commit)
			}
			job.left--
			if job.left == 0 && s.coord == coord {
				s.apply(s.coord.MarkersWritten(m.TransactionalID, m.ProducerID, m.ProducerEpoch, s.now))
			}
		}})
	}
}

func (s *tsim) partOf(tp txn.TopicPartition) *simPartition {
	if tp == simOffsetsTP {
		return s.parts[simOffsetsPart]
	}
	return s.parts[tp.Partition]
}

func (s *tsim) writeMarker(p *simPartition, m txn.Markers) bool {
	a, entry, fx := p.core.Marker(partition.MarkerWrite{ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch,
		Commit: m.Commit, CoordinatorEpoch: m.CoordinatorEpoch, Ticket: "m"}, s.now, simLogState(p.end))
	if a == nil {
		s.note("marker refused: %+v", fx.Acks)
		return false
	}
	if entry != nil {
		p.aborted = append(p.aborted, *entry)
	}
	s.appendTo(p, a.Records, func(res segment.AppendResult) partition.Effects {
		return p.core.Appended(a, res, nil, s.now, simLogState(p.end))
	})
	return true
}

// appendTo writes batch at p's end and hands the result to the core.
func (s *tsim) appendTo(p *simPartition, records []byte, appended func(segment.AppendResult) partition.Effects) {
	h, err := wire.ParseBatchHeader(records)
	if err != nil {
		s.fail("batch does not parse: %v", err)
	}
	b := slices.Clone(records)
	wire.SetBatchBaseOffset(b, p.end)
	first := p.end
	p.end += int64(h.LastOffsetDelta) + 1
	p.batches = append(p.batches, b)
	appended(segment.AppendResult{FirstOffset: first, LastOffset: p.end - 1, LogAppendTime: -1, LogEndOffset: p.end})
}

// produce writes one transactional batch of pr's to partition i: it
// goes through the partition's verification, or, sometimes, astray.
func (s *tsim) produce(pr *simProducer, i int) {
	n := 1 + s.rng.IntN(3)
	var recs []batchtest.Record
	for j := range n {
		v := fmt.Sprintf("%s#%d.%d", pr.txnKey, i, pr.written[i]+j)
		recs = append(recs, batchtest.Record{Value: []byte(v), Timestamp: s.now})
		pr.expected[pr.txnKey] = append(pr.expected[pr.txnKey], v)
	}
	seq := pr.seq[int32(i)]
	batch := batchtest.Build(recs, batchtest.Producer(pr.pid, pr.epoch, seq), batchtest.Attributes(wire.AttrTransactional))
	pr.seq[int32(i)] = seq + int32(n)
	pr.written[i] += n
	if s.rng.IntN(12) == 0 {
		s.note("%s batch %d-%d to %d goes astray", pr.txnKey, seq, seq+int32(n)-1, i)
		pr.mustAbort = true
		s.network = append(s.network, delayed{at: s.now + s.rng.Int64N(2_000), run: func() {
			s.offer(i, pr.id, batch, 0, func(ok bool) { s.note("stray to %d of %s appended=%v", i, pr.txnKey, ok) })
		}})
		return
	}
	pr.producing = true
	inst, key := pr.inst, pr.txnKey
	s.offer(i, pr.id, batch, 0, func(ok bool) {
		if pr.inst != inst {
			return // its producer crashed meanwhile: the batch landed all the same
		}
		pr.producing = false
		if !ok && pr.txnKey == key {
			pr.mustAbort = true // an abortable error: the client aborts
		}
	})
}

// offer gives partition i a batch of transactional id id; a batch that
// would open a transaction there is verified with the coordinator first,
// the answer and the append after it each delayed. done says whether it
// was appended.
func (s *tsim) offer(i int, id string, batch []byte, guard uint64, done func(bool)) {
	p := s.parts[i]
	a, fx := p.core.Produce(partition.Produce{Records: batch, Version: 11, Acks: -1, Ticket: "p",
		TransactionalID: id, Verify: true, Guard: guard, Coordinator: i == simOffsetsPart}, s.now, simLogState(p.end))
	if need := fx.Verify; need != nil {
		s.network = append(s.network, delayed{at: s.now + s.rng.Int64N(40), run: func() {
			tp := tpOf(i)
			code := s.coord.Verify(id, need.ProducerID, need.ProducerEpoch, []txn.TopicPartition{tp})[0]
			if code != kerr.None {
				s.note("verification of %s pid %d epoch %d on %d: %v", id, need.ProducerID, need.ProducerEpoch, i, code)
				done(false)
				return
			}
			s.network = append(s.network, delayed{at: s.now + s.rng.Int64N(40), run: func() {
				s.offer(i, id, batch, need.Guard, done)
			}})
		}})
		return
	}
	if a == nil {
		s.note("produce of %s to %d refused: %+v", id, i, fx.Acks)
		done(false)
		return
	}
	s.appendTo(p, a.Records, func(res segment.AppendResult) partition.Effects {
		return p.core.Appended(a, res, nil, s.now, simLogState(p.end))
	})
	done(true)
}

// act lets one producer take its next step.
func (s *tsim) act(pr *simProducer) {
	if pr.busy || pr.producing {
		return
	}
	switch {
	case !pr.ready:
		pr.busy = true
		gen := pr.gen
		current, epoch := int64(-1), int16(-1)
		if pr.bump {
			current, epoch = pr.pid, pr.epoch
		}
		s.apply(s.coord.InitProducerID(txn.InitProducerID{Ref: func(r txn.Reply) {
			if pr.gen != gen {
				return
			}
			pr.busy = false
			switch r.Err {
			case kerr.None:
				pr.pid, pr.epoch, pr.ready, pr.bump = r.ProducerID, r.ProducerEpoch, true, false
				pr.seq = map[int32]int32{}
				s.note("%s init pid %d epoch %d", pr.id, pr.pid, pr.epoch)
			case kerr.ProducerFenced:
				s.crash(pr)
			}
		}, TransactionalID: pr.id, TimeoutMs: simTimeoutMs, ProducerID: current, ProducerEpoch: epoch, NewProducerID: -1}, s.now))
	case !pr.inTxn:
		pr.k++
		pr.txnKey = fmt.Sprintf("%s/%d/%d/%d", pr.id, pr.pid, pr.epoch, pr.k)
		pr.inTxn, pr.parts, pr.written, pr.mustAbort, pr.offsetsIn = true, map[int]bool{}, map[int]int{}, false, false
		s.note("%s begins %s", pr.id, pr.txnKey)
	case pr.ending == nil && !pr.mustAbort && s.rng.IntN(3) > 0 && len(pr.written) < simPartitions:
		i := s.rng.IntN(simPartitions)
		if pr.parts[i] {
			s.produce(pr, i)
			return
		}
		pr.busy = true
		key, gen := pr.txnKey, pr.gen
		s.apply(s.coord.AddPartitions(txn.AddPartitions{Ref: func(r txn.Reply) {
			if pr.gen != gen {
				return
			}
			pr.busy = false
			if r.Err == kerr.None && pr.txnKey == key {
				pr.parts[i] = true
				s.produce(pr, i)
			}
		}, TransactionalID: pr.id, ProducerID: pr.pid, ProducerEpoch: pr.epoch,
			Partitions: []txn.TopicPartition{{Topic: "t", Partition: int32(i)}}}, s.now))
	case pr.ending == nil && !pr.mustAbort && !pr.offsetsIn && s.rng.IntN(2) == 0:
		s.commitOffsets(pr)
	default:
		if pr.ending == nil {
			commit := s.rng.IntN(3) > 0 && !pr.mustAbort
			pr.ending = &commit // a retry asks the same
		}
		commit := *pr.ending
		pr.busy = true
		key, gen := pr.txnKey, pr.gen
		s.apply(s.coord.EndTxn(txn.EndTxn{Ref: func(r txn.Reply) {
			if pr.gen != gen {
				if r.Err == kerr.None {
					// Answered after its producer crashed: decided after all.
					delete(s.unknown, key)
					s.committed[key] = commit
				}
				return
			}
			pr.busy = false
			switch r.Err {
			case kerr.None:
				s.committed[key] = commit
				pr.inTxn, pr.ending = false, nil
				s.note("%s ended %s commit=%v", pr.id, key, commit)
				if pr.mustAbort {
					pr.ready, pr.bump = false, true // the client bumps its epoch after such an abort
				}
			case kerr.ProducerFenced, kerr.InvalidProducerIDMapping:
				s.crash(pr) // fenced: a new instance takes over
			}
		}, TransactionalID: pr.id, ProducerID: pr.pid, ProducerEpoch: pr.epoch, Commit: commit}, s.now))
	}
}

// commitOffsets is the client's sendOffsetsToTransaction: AddOffsetsToTxn
// (the group's partition joins the transaction), then TxnOffsetCommit to
// the group coordinator, which appends the offset as a transactional
// batch of the producer to the group's partition (verified there like a
// client's batch) and keeps it pending until the marker.
func (s *tsim) commitOffsets(pr *simProducer) {
	pr.busy = true
	key, gen, pid, epoch := pr.txnKey, pr.gen, pr.pid, pr.epoch
	s.apply(s.coord.AddPartitions(txn.AddPartitions{Ref: func(r txn.Reply) {
		if pr.gen != gen {
			return
		}
		if r.Err != kerr.None || pr.txnKey != key {
			pr.busy = false
			return
		}
		offset := int64(pr.k)
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.Version, req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = 2, pr.id, simGroup, pid, epoch
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = simInputTopic
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.Metadata = int32(s.indexOf(pr)), offset, kmsg.StringPtr(key)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		// The group coordinator answers whatever the transaction
		// coordinator does meanwhile (a restart of it does not end this
		// request): only a crash of the producer drops the answer.
		inst := pr.inst
		pr.awaitingGroup = true
		answered := func(resp kmsg.Response) {
			if pr.inst != inst {
				return
			}
			pr.busy, pr.awaitingGroup = false, false
			code := kerr.Code(resp.(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode)
			if code != kerr.None || pr.txnKey != key {
				if pr.txnKey == key {
					pr.mustAbort = true
				}
				return
			}
			pr.offsetsIn = true
			s.note("%s committed offset %d in %s", pr.id, offset, key)
		}
		s.applyGroup(s.group.TxnOffsetCommit("t", req, time.UnixMilli(s.now)), pr.id, key, offset, answered)
	}, TransactionalID: pr.id, ProducerID: pid, ProducerEpoch: epoch, Partitions: []txn.TopicPartition{simOffsetsTP}}, s.now))
}

// applyGroup carries out the group's effects: each append becomes a
// transactional batch of the producer on the group's partition, after
// a delay and through its verification; its outcome goes back to the
// group, whose replies go to answered.
func (s *tsim) applyGroup(fx group.Effects, id, key string, offset int64, answered func(kmsg.Response)) {
	for _, r := range fx.Replies {
		answered(r.Response)
	}
	for _, a := range fx.Appends {
		if a.Txn == nil {
			s.fail("the group appended a non-transactional batch: %+v", a)
		}
		v := fmt.Sprintf("%s#offsets.%d", key, a.Token)
		batch := batchtest.Build([]batchtest.Record{{Value: []byte(v), Timestamp: s.now}},
			batchtest.Producer(a.Txn.ProducerID, a.Txn.ProducerEpoch, -1), batchtest.Attributes(wire.AttrTransactional))
		token := a.Token
		s.network = append(s.network, delayed{at: s.now + s.rng.Int64N(40), run: func() {
			s.offer(simOffsetsPart, id, batch, 0, func(ok bool) {
				code := kerr.None
				if !ok {
					code = kerr.InvalidTxnState
				} else {
					s.expectOffsetsRecord(id, key, v, offset)
				}
				s.applyGroup(s.group.OnAppended(token, code, time.UnixMilli(s.now)), id, key, offset, answered)
			})
		}})
	}
}

// expectOffsetsRecord notes an offsets batch in the group's partition:
// its record is one more the final check expects of the transaction
// (visible whole if committed), and its offset is the group's if the
// transaction commits, whether or not its producer heard back (it may
// have crashed, or the coordinator moved, with the transaction going on).
func (s *tsim) expectOffsetsRecord(id, key, v string, offset int64) {
	for _, pr := range s.prods {
		if pr.id == id {
			pr.expected[key] = append(pr.expected[key], v)
			pr.offsets[key] = offset
		}
	}
}

func (s *tsim) indexOf(pr *simProducer) int {
	return slices.Index(s.prods, pr)
}

// crash replaces pr by a new instance with the same id (its open
// transaction, if any, is never ended by it: the next init or the
// timeout aborts it).
func (s *tsim) crash(pr *simProducer) {
	s.note("%s crashes (open: %v %s)", pr.id, pr.inTxn, pr.txnKey)
	if pr.inTxn {
		if pr.ending != nil && *pr.ending {
			s.unknown[pr.txnKey] = true // its commit may still go through
		} else if _, told := s.committed[pr.txnKey]; !told {
			s.committed[pr.txnKey] = false // never committed: must never be visible
		}
	}
	fresh := newSimProducer(pr.id)
	fresh.expected, fresh.offsets, fresh.k, fresh.gen, fresh.inst = pr.expected, pr.offsets, pr.k, pr.gen+1, pr.inst+1
	*pr = *fresh
}

// restartCoordinator drops the coordinator: its writes in flight are
// durable or lost at random, replies never come, and a new core loads
// the log at the next coordinator epoch.
func (s *tsim) restartCoordinator() {
	s.note("coordinator restarts")
	old := s.inflight
	s.inflight = nil
	for _, d := range old {
		if s.rng.IntN(2) == 0 {
			d.run() // durable after all (and answered by the old core, which is dropped now)
		}
	}
	s.coord.Unload()
	s.epoch++
	s.coord = txn.New(txn.Config{MaxTimeoutMs: 60_000, IDExpirationMs: 1 << 40}, s.epoch)
	for _, a := range s.coordLog {
		if err := s.coord.Load(a.Key, a.Value); err != nil {
			s.fail("coordinator log does not load: %v", err)
		}
	}
	for _, pr := range s.prods {
		if !pr.awaitingGroup {
			pr.busy = false // the requests out were answered NOT_COORDINATOR; the client retries
		}
		pr.gen++ // and answers from the old core are not for it
	}
	s.apply(s.coord.Loaded(s.now))
}

func (s *tsim) run(steps int) {
	for range steps {
		s.step++
		s.now += 1 + s.rng.Int64N(40)
		switch r := s.rng.IntN(100); {
		case r < 55:
			s.act(s.prods[s.rng.IntN(len(s.prods))])
		case r < 75:
			s.deliver(&s.inflight, 1)
		case r < 86:
			s.deliver(&s.markers, 1)
		case r < 93:
			s.deliver(&s.network, 1)
		case r < 95:
			s.crash(s.prods[s.rng.IntN(len(s.prods))])
		case r < 96:
			s.restartCoordinator()
		default:
			s.now += simTimeoutMs / 2
			s.apply(s.coord.Tick(s.now))
		}
		s.check()
	}
}

// deliver runs up to n of the due delayed actions (the earliest first).
func (s *tsim) deliver(q *[]delayed, n int) {
	for range n {
		if len(*q) == 0 {
			return
		}
		i := 0
		for j, d := range *q {
			if d.at < (*q)[i].at {
				i = j
			}
		}
		d := (*q)[i]
		*q = slices.Delete(*q, i, i+1)
		d.run()
	}
}

// settle lets everything finish: producers stop, every write and marker
// arrives, open transactions time out; then the final check.
func (s *tsim) settle() {
	for _, pr := range s.prods {
		if pr.inTxn {
			s.crash(pr)
		}
	}
	for round := 0; round < 200 && (len(s.inflight) > 0 || len(s.markers) > 0 || len(s.network) > 0 || s.open()); round++ {
		s.step++
		s.deliver(&s.network, len(s.network))
		s.deliver(&s.inflight, len(s.inflight))
		s.deliver(&s.markers, len(s.markers))
		s.now += simTimeoutMs
		s.apply(s.coord.Tick(s.now))
		s.check()
	}
	if s.open() {
		s.fail("transactions still open after settling: %+v", s.coord.Transactions())
	}
	visible := map[string]int{}
	for i, p := range s.parts {
		for _, v := range s.readCommitted(p) {
			visible[v]++
		}
		if lso := p.core.LastStableOffset(); lso != p.end {
			s.fail("partition %d: last stable offset %d after settling, log end %d", i, lso, p.end)
		}
	}
	for _, pr := range s.prods {
		for key, values := range pr.expected {
			told := s.committed[key]
			if s.unknown[key] {
				// Either outcome, but all or nothing.
				told = len(values) > 0 && visible[values[0]] == 1
			}
			for _, v := range values {
				switch {
				case told && visible[v] != 1:
					s.fail("%s was committed but %s is visible %d times", key, v, visible[v])
				case !told && visible[v] != 0:
					s.fail("%s was not committed but %s is visible", key, v)
				}
			}
		}
	}
	s.checkSettledOffsets(visible)
}

// checkSettledOffsets: once everything settled, each producer's committed
// input offset is the one of its last committed transaction that
// committed one (none if none did), so committed offsets and committed
// records became visible together, and no aborted transaction's offset
// is the group's.
func (s *tsim) checkSettledOffsets(visible map[string]int) {
	got := map[int32]group.FetchedOffset{}
	for _, f := range s.group.FetchOffsets(nil, false) {
		got[f.Partition] = f
	}
	for i, pr := range s.prods {
		want, wantKey := int64(-1), ""
		for key, off := range pr.offsets {
			committed := s.committed[key]
			if values := pr.expected[key]; s.unknown[key] {
				committed = len(values) > 0 && visible[values[0]] == 1
			}
			if committed && off > want {
				want, wantKey = off, key
			}
		}
		f, ok := got[int32(i)]
		switch {
		case want < 0 && ok:
			s.fail("%s committed no offsets, but the group has %d (%s)", pr.id, f.Offset, f.Metadata)
		case want >= 0 && (!ok || f.Offset != want || f.Metadata != wantKey):
			s.fail("%s: the group's offset is %+v (present %v), want %d of %s", pr.id, f, ok, want, wantKey)
		}
	}
}

func (s *tsim) open() bool {
	for _, tx := range s.coord.Transactions() {
		if tx.State == txn.Ongoing || tx.State == txn.PrepareCommit || tx.State == txn.PrepareAbort {
			return true
		}
	}
	return false
}

// check holds after every step: read_committed shows no record of a
// transaction not committed, and no partition's stable offset went back.
func (s *tsim) check() {
	for i, p := range s.parts {
		lso := p.core.LastStableOffset()
		if lso < p.lso {
			s.fail("partition %d: last stable offset went back from %d to %d", i, p.lso, lso)
		}
		p.lso = lso
		for _, v := range s.readCommitted(p) {
			key := v[:strings.LastIndexByte(v, '#')]
			if !s.committed[key] && !s.unknown[key] {
				s.fail("partition %d: read_committed shows %s of %s, which was not committed", i, v, key)
			}
		}
	}
	for _, f := range s.group.FetchOffsets(nil, false) {
		if !s.committed[f.Metadata] && !s.unknown[f.Metadata] {
			s.fail("the group's offset %d for %s-%d is %s's, which was not committed", f.Offset, f.Topic, f.Partition, f.Metadata)
		}
	}
}

// readCommitted is what a read_committed consumer gets from p: the data
// records below the last stable offset, without those of the aborted
// transactions the index lists (as a client filters them).
func (s *tsim) readCommitted(p *simPartition) []string {
	lso := p.core.LastStableOffset()
	var out []string
	for _, b := range p.batches {
		h, _ := wire.ParseBatchHeader(b)
		if h.BaseOffset >= lso || h.IsControl() {
			continue
		}
		if h.LastOffset() >= lso {
			s.fail("a batch straddles the last stable offset %d: %d-%d", lso, h.BaseOffset, h.LastOffset())
		}
		if slices.ContainsFunc(p.aborted, func(a segment.AbortedTxn) bool {
			return a.ProducerID == h.ProducerID && a.FirstOffset <= h.BaseOffset && h.BaseOffset <= a.LastOffset
		}) {
			continue
		}
		it, _, err := wire.NewBatchRecordIter(b, nil, 1<<20)
		if err != nil {
			s.fail("batch: %v", err)
		}
		var rec wire.Record
		for it.Next(&rec) {
			out = append(out, string(rec.Value))
		}
	}
	return out
}
