package controller

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// The core is driven here by a seeded simulation: a model ZooKeeper (the
// registrations, assignments, partition states with versions, deletion
// markers), brokers that die, come back with a new epoch, shut down in a
// controlled way and answer StopReplica, leaders that shrink and expand
// their ISRs (sometimes from a stale view), topics created, grown and
// deleted, and controller failovers. After every step the invariants
// below are checked; a failure names its seed, and SIM_SEED=<seed>
// replays it (SIM_SEEDS=<n> runs n seeds instead of 100).
//
// Invariants:
//   - every write expects the version ZooKeeper has, and the core
//     predicts the version it leaves;
//   - at most one leader per partition and leader epoch; leader epochs
//     and versions never go backwards, across failovers too;
//   - a new leader was in the ISR, unless unclean election is on (or an
//     admin asked for one) and the partition is RECOVERING; a leader is registered; the ISR is a
//     non-empty subset of the replicas;
//   - requests go to registered brokers only, with their epoch and the
//     controller's;
//   - every registered broker's latest word (LeaderAndIsr or
//     UpdateMetadata) on a partition is its current state, and every
//     online replica's latest LeaderAndIsr carries the current leader
//     epoch;
//   - ElectLeaders answers as Kafka (success leaves the preferred replica
//     leading, ELECTION_NOT_NEEDED only when it already did,
//     PREFERRED_LEADER_NOT_AVAILABLE only when it could not); after a
//     balance check every partition whose preferred replica can lead is
//     led by it (the sim's imbalance threshold is 0%);
//   - a topic's znodes are deleted only after every replica deleted it,
//     and at the end, with every broker up, no deletion is left.

const simBrokers = 4

type simBroker struct {
	up       bool
	epoch    int64
	view     map[TopicPartition]PartitionState // latest word from the controller
	laiEpoch map[TopicPartition]int32
	deleted  map[TopicPartition]bool
}

type sim struct {
	t    *testing.T
	seed uint64
	rng  *rand.Rand
	cfg  Config
	core *Core

	czxid     int64
	brokers   [simBrokers + 1]*simBroker
	topics    map[string]TopicAssignment
	states    map[TopicPartition]PartitionState
	markers   map[string]bool
	nextTopic int

	leaders  map[TopicPartition]map[int32]int32 // epoch → leader
	stopAcks []stopAck                          // StopReplica answers to deliver
	trace    []string
	sent     int
	healthy  bool // no more disk errors: the end, where every deletion must finish
	// uncleanAsked: an admin's unclean ElectLeaders is under way, which
	// may elect from outside the ISR whatever the config says.
	uncleanAsked bool
}

type stopAck struct {
	broker int32
	epoch  int64
	req    *kmsg.StopReplicaRequest
	resp   *kmsg.StopReplicaResponse
}

func newSim(t *testing.T, seed uint64) *sim {
	s := &sim{
		t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x5a5a)),
		topics: map[string]TopicAssignment{}, states: map[TopicPartition]PartitionState{},
		markers: map[string]bool{}, leaders: map[TopicPartition]map[int32]int32{},
	}
	s.cfg = Config{BrokerID: 1, Epoch: 1, EpochZkVersion: 0, UncleanLeaderElection: s.rng.IntN(3) == 0, DeleteTopicEnable: s.rng.IntN(5) != 0}
	for id := 1; id <= simBrokers; id++ {
		s.brokers[id] = &simBroker{view: map[TopicPartition]PartitionState{}, laiEpoch: map[TopicPartition]int32{}, deleted: map[TopicPartition]bool{}}
		if s.rng.IntN(4) != 0 {
			s.register(int32(id))
		}
	}
	s.failover()
	return s
}

func (s *sim) fail(format string, args ...any) {
	s.t.Helper()
	tail := s.trace
	if len(tail) > 15 {
		tail = tail[len(tail)-15:]
	}
	s.t.Fatalf("seed %d (replay with SIM_SEED=%d): %s\nlast steps:\n  %s", s.seed, s.seed, fmt.Sprintf(format, args...), joinLines(tail))
}

func joinLines(l []string) string {
	out := ""
	for i, x := range l {
		if i > 0 {
			out += "\n  "
		}
		out += x
	}
	return out
}

func (s *sim) register(id int32) {
	s.czxid++
	b := s.brokers[id]
	b.up, b.epoch = true, s.czxid
	// A restarted broker has lost what it was told.
	b.view = map[TopicPartition]PartitionState{}
	b.laiEpoch = map[TopicPartition]int32{}
}

func (s *sim) registry() map[int32]BrokerInfo {
	m := map[int32]BrokerInfo{}
	for id := int32(1); id <= simBrokers; id++ {
		if b := s.brokers[id]; b.up {
			m[id] = BrokerInfo{ID: id, Epoch: b.epoch, Rack: "r" + strconv.Itoa(int(id%2)),
				Endpoints: []Endpoint{{Listener: "PLAINTEXT", Host: "h" + strconv.Itoa(int(id)), Port: 9092, SecurityProtocol: "PLAINTEXT"}}}
		}
	}
	return m
}

func (s *sim) assignments() []TopicAssignment {
	var out []TopicAssignment
	for _, n := range sortedKeys(s.topics) {
		out = append(out, s.topics[n])
	}
	return out
}

func (s *sim) failover() {
	s.cfg.Epoch++
	s.cfg.EpochZkVersion++
	s.core = New(s.cfg)
	s.stopAcks = nil // answers to the old controller are lost with it
	s.apply(s.core.Start(s.registry(), s.assignments(), s.states, sortedKeys(s.markers)))
}

// apply carries out Effects as the shell does: writes (checked against
// the model), then sends, delivered at once.
func (s *sim) apply(fx Effects) {
	s.t.Helper()
	if fx.Resign || fx.Reload {
		s.fail("unexpected resign/reload: %+v", fx)
	}
	versions := make([]int32, 0, len(fx.Writes))
	for _, w := range fx.Writes {
		cur, ok := s.states[w.TP]
		if w.Create {
			if ok {
				s.fail("create of %s, which exists", w.TP)
			}
			if _, ok := s.topics[w.TP.Topic].Partitions[w.TP.Partition]; !ok {
				s.fail("create of %s, which has no assignment", w.TP)
			}
			w.State.Version = 0
		} else {
			if !ok || cur.Version != w.State.Version {
				s.fail("write of %s expects version %d, zookeeper has %d (exists %v)", w.TP, w.State.Version, cur.Version, ok)
			}
			w.State.Version++
		}
		if w.State.ControllerEpoch != s.cfg.Epoch {
			s.fail("write of %s with controller epoch %d, ours is %d", w.TP, w.State.ControllerEpoch, s.cfg.Epoch)
		}
		s.checkTransition(w.TP, cur, ok, w.State)
		s.states[w.TP] = w.State.clone()
		versions = append(versions, w.State.Version)
	}
	s.applyAssignments(fx) // same multi as the writes (reassign_sim_test.go)
	if len(fx.Writes) > 0 {
		if more := s.core.Written(fx, versions); more.Reload || more.Resign {
			s.fail("the core mispredicted its versions")
		}
	}
	for _, name := range fx.DeleteTopics {
		a := s.topics[name]
		for p, rs := range a.Partitions {
			for _, r := range rs {
				if !s.brokers[r].deleted[TopicPartition{name, p}] {
					s.fail("topic %s deleted before broker %d deleted partition %d", name, r, p)
				}
			}
			delete(s.states, TopicPartition{name, p})
		}
		delete(s.topics, name)
		delete(s.markers, name)
	}
	for _, name := range fx.RemoveMarkers {
		delete(s.markers, name)
	}
	for _, snd := range fx.Send {
		s.deliver(snd)
	}
}

func (s *sim) checkTransition(tp TopicPartition, old PartitionState, existed bool, nu PartitionState) {
	s.t.Helper()
	a := s.topics[tp.Topic].Partitions[tp.Partition]
	if len(nu.ISR) == 0 {
		s.fail("%s: empty ISR", tp)
	}
	for _, r := range nu.ISR {
		if !slices.Contains(a, r) && !lastOfRemoved(nu) {
			s.fail("%s: ISR %v not within replicas %v", tp, nu.ISR, a)
		}
	}
	if nu.Leader != NoLeader && !slices.Contains(nu.ISR, nu.Leader) {
		s.fail("%s: leader %d not in ISR %v", tp, nu.Leader, nu.ISR)
	}
	if existed {
		if nu.LeaderEpoch < old.LeaderEpoch {
			s.fail("%s: leader epoch went back from %d to %d", tp, old.LeaderEpoch, nu.LeaderEpoch)
		}
		if nu.Leader != old.Leader && nu.LeaderEpoch == old.LeaderEpoch {
			s.fail("%s: leader changed %d→%d without a new epoch", tp, old.Leader, nu.Leader)
		}
		if nu.Leader != old.Leader && nu.Leader != NoLeader && !slices.Contains(old.ISR, nu.Leader) {
			if unclean := s.cfg.UncleanLeaderElection || s.uncleanAsked; !unclean || nu.LeaderRecoveryState != Recovering {
				s.fail("%s: leader %d elected from outside the ISR %v", tp, nu.Leader, old.ISR)
			}
		}
	}
	if nu.Leader != NoLeader {
		m := s.leaders[tp]
		if m == nil {
			m = map[int32]int32{}
			s.leaders[tp] = m
		}
		if l, ok := m[nu.LeaderEpoch]; ok && l != nu.Leader {
			s.fail("%s: two leaders in epoch %d: %d and %d", tp, nu.LeaderEpoch, l, nu.Leader)
		}
		m[nu.LeaderEpoch] = nu.Leader
	}
}

func (s *sim) deliver(snd Send) {
	s.t.Helper()
	b := s.brokers[snd.Broker]
	if snd.Broker < 1 || snd.Broker > simBrokers || !b.up {
		s.fail("request %T to broker %d, which is not registered", snd.Req, snd.Broker)
	}
	if s.sent++; s.sent%16 == 1 {
		checkEncodes(s.t, snd.Req) // a sample: decoding every request would double the run
	}
	if s.stale(snd) {
		return
	}
	switch r := snd.Req.(type) {
	case *kmsg.LeaderAndISRRequest:
		s.checkHeader(snd, r.ControllerEpoch, r.BrokerEpoch)
		for _, ts := range r.TopicStates {
			for _, ps := range ts.PartitionStates {
				tp := TopicPartition{ts.Topic, ps.Partition}
				b.view[tp] = PartitionState{Leader: ps.Leader, LeaderEpoch: ps.LeaderEpoch, ISR: ps.ISR, Version: ps.ZKVersion}
				b.laiEpoch[tp] = ps.LeaderEpoch
			}
		}
	case *kmsg.UpdateMetadataRequest:
		s.checkHeader(snd, r.ControllerEpoch, r.BrokerEpoch)
		for _, ts := range r.TopicStates {
			for _, ps := range ts.PartitionStates {
				tp := TopicPartition{ts.Topic, ps.Partition}
				if ps.Leader == LeaderDuringDelete {
					delete(b.view, tp)
					continue
				}
				b.view[tp] = PartitionState{Leader: ps.Leader, LeaderEpoch: ps.LeaderEpoch, ISR: ps.ISR, Version: ps.ZKVersion}
			}
		}
	case *kmsg.StopReplicaRequest:
		s.checkHeader(snd, r.ControllerEpoch, r.BrokerEpoch)
		resp := r.ResponseKind().(*kmsg.StopReplicaResponse)
		for _, t := range r.Topics {
			for _, ps := range t.PartitionStates {
				tp := TopicPartition{t.Topic, ps.Partition}
				pr := kmsg.NewStopReplicaResponsePartition()
				pr.Topic, pr.Partition = t.Topic, ps.Partition
				if ps.Delete {
					if !s.healthy && s.rng.IntN(10) == 0 {
						pr.ErrorCode = 56 // KAFKA_STORAGE_ERROR
					} else {
						b.deleted[tp] = true
					}
				}
				delete(b.laiEpoch, tp)
				resp.Partitions = append(resp.Partitions, pr)
			}
		}
		s.stopAcks = append(s.stopAcks, stopAck{snd.Broker, b.epoch, r, resp})
	default:
		s.fail("unexpected request %T", snd.Req)
	}
}

// stale reports a request for an earlier registration of its broker
// (sent while a restart is being processed): the broker refuses it with
// STALE_BROKER_EPOCH, a StopReplica's answer saying so.
func (s *sim) stale(snd Send) bool {
	var epoch int64
	switch r := snd.Req.(type) {
	case *kmsg.LeaderAndISRRequest:
		epoch = r.BrokerEpoch
	case *kmsg.UpdateMetadataRequest:
		epoch = r.BrokerEpoch
	case *kmsg.StopReplicaRequest:
		epoch = r.BrokerEpoch
		if epoch < s.brokers[snd.Broker].epoch {
			resp := r.ResponseKind().(*kmsg.StopReplicaResponse)
			resp.ErrorCode = 77
			for _, t := range r.Topics {
				for _, ps := range t.PartitionStates {
					pr := kmsg.NewStopReplicaResponsePartition()
					pr.Topic, pr.Partition, pr.ErrorCode = t.Topic, ps.Partition, 77
					resp.Partitions = append(resp.Partitions, pr)
				}
			}
			s.stopAcks = append(s.stopAcks, stopAck{snd.Broker, s.brokers[snd.Broker].epoch, r, resp})
		}
	}
	return epoch < s.brokers[snd.Broker].epoch
}

func (s *sim) checkHeader(snd Send, ctrlEpoch int32, brokerEpoch int64) {
	s.t.Helper()
	if ctrlEpoch != s.cfg.Epoch || brokerEpoch != s.brokers[snd.Broker].epoch {
		s.fail("%T to %d with controller epoch %d (want %d), broker epoch %d (want %d)",
			snd.Req, snd.Broker, ctrlEpoch, s.cfg.Epoch, brokerEpoch, s.brokers[snd.Broker].epoch)
	}
}

func checkEncodes(t *testing.T, req kmsg.Request) {
	t.Helper()
	b := req.AppendTo(nil)
	back := req.ResponseKind().RequestKind()
	back.SetVersion(req.GetVersion())
	if err := back.ReadFrom(b); err != nil {
		t.Fatalf("%T v%d does not decode: %v", req, req.GetVersion(), err)
	}
}

// check is the invariants that hold between steps.
func (s *sim) check() {
	s.t.Helper()
	for tp, st := range s.states {
		if s.markers[tp.Topic] && s.cfg.DeleteTopicEnable {
			continue // queued for deletion: brokers were told leader -2, and nobody is elected
		}
		if st.Leader != NoLeader && !s.brokers[st.Leader].up {
			s.fail("%s: leader %d is not registered", tp, st.Leader)
		}
		for id := int32(1); id <= simBrokers; id++ {
			b := s.brokers[id]
			if !b.up {
				continue
			}
			v, ok := b.view[tp]
			if !ok || v.Leader != st.Leader || v.LeaderEpoch != st.LeaderEpoch || v.Version != st.Version || !slices.Equal(v.ISR, st.ISR) {
				s.fail("broker %d's view of %s is %+v (known %v), zookeeper has %+v", id, tp, v, ok, st)
			}
			if slices.Contains(s.topics[tp.Topic].Partitions[tp.Partition], id) && !s.core.shuttingDown[id] {
				if e, ok := b.laiEpoch[tp]; !ok || e != st.LeaderEpoch {
					s.fail("replica %d of %s last got LeaderAndIsr epoch %d (%v), current is %d", id, tp, e, ok, st.LeaderEpoch)
				}
			}
		}
	}
}

func (s *sim) step() {
	s.t.Helper()
	up := func() []int32 {
		var out []int32
		for id := int32(1); id <= simBrokers; id++ {
			if s.brokers[id].up {
				out = append(out, id)
			}
		}
		return out
	}
	pick := func(ids []int32) int32 { return ids[s.rng.IntN(len(ids))] }
	if s.rng.IntN(100) < 8 { // an admin reassigns or cancels (reassign_sim_test.go)
		s.reassign()
		s.check()
		return
	}
	switch n := s.rng.IntN(100); {
	case n < 10: // a broker dies
		if ids := up(); len(ids) > 0 {
			id := pick(ids)
			s.trace = append(s.trace, fmt.Sprintf("kill %d", id))
			s.brokers[id].up = false
			s.apply(s.core.BrokersChanged(s.registry()))
		}
	case n < 20: // a broker comes (back)
		var down []int32
		for id := int32(1); id <= simBrokers; id++ {
			if !s.brokers[id].up {
				down = append(down, id)
			}
		}
		if len(down) > 0 {
			id := pick(down)
			s.trace = append(s.trace, fmt.Sprintf("start %d", id))
			s.register(id)
			s.apply(s.core.BrokersChanged(s.registry()))
		}
	case n < 25: // a broker restarts within one watch: only its epoch moved
		if ids := up(); len(ids) > 0 {
			id := pick(ids)
			s.trace = append(s.trace, fmt.Sprintf("bounce %d", id))
			s.register(id)
			s.apply(s.core.BrokersChanged(s.registry()))
		}
	case n < 37: // a topic is created
		s.nextTopic++
		name := "t" + strconv.Itoa(s.nextTopic)
		a := TopicAssignment{Name: name, Partitions: map[int32][]int32{}}
		a.ID[0], a.ID[15] = 1, byte(s.nextTopic)
		rf := 1 + s.rng.IntN(3)
		for p := range int32(1 + s.rng.IntN(3)) {
			a.Partitions[p] = s.replicaSet(rf)
		}
		s.trace = append(s.trace, fmt.Sprintf("create %s %v", name, a.Partitions))
		s.topics[name] = a
		s.apply(s.core.TopicsChanged(s.assignments()))
	case n < 42: // a topic grows
		if len(s.topics) > 0 {
			name := pick2(s.rng, sortedKeys(s.topics))
			if s.markers[name] {
				break // the admin path refuses to grow a topic being deleted
			}
			a := s.topics[name]
			a.Partitions = cloneAssign(a.Partitions)
			np := int32(len(a.Partitions))
			a.Partitions[np] = s.replicaSet(len(a.Partitions[0]))
			s.topics[name] = a
			s.trace = append(s.trace, fmt.Sprintf("grow %s to %d", name, np+1))
			s.apply(s.core.TopicsChanged(s.assignments()))
		}
	case n < 50: // a topic is marked for deletion
		if len(s.topics) > 0 {
			name := pick2(s.rng, sortedKeys(s.topics))
			s.trace = append(s.trace, "delete "+name)
			s.markers[name] = true
			s.apply(s.core.DeletionRequested(sortedKeys(s.markers)))
		}
	case n < 75: // a leader changes its ISR
		s.alterISR()
	case n < 82: // a broker shuts down in a controlled way, and usually stops
		if ids := up(); len(ids) > 0 {
			id := pick(ids)
			s.trace = append(s.trace, fmt.Sprintf("controlled shutdown %d", id))
			req := kmsg.NewPtrControlledShutdownRequest()
			req.Version, req.BrokerID, req.BrokerEpoch = 3, id, s.brokers[id].epoch
			fx := s.core.ControlledShutdown(req)
			resp, ok := fx.Reply.(*kmsg.ControlledShutdownResponse)
			if !ok || resp.ErrorCode != 0 {
				s.fail("controlled shutdown of %d answered %+v", id, fx.Reply)
			}
			s.apply(fx)
			for _, rem := range resp.PartitionsRemaining {
				st := s.states[TopicPartition{rem.Topic, rem.Partition}]
				if st.Leader != id {
					s.fail("controlled shutdown says %d still leads %s-%d, zookeeper says %d", id, rem.Topic, rem.Partition, st.Leader)
				}
			}
			if s.rng.IntN(4) != 0 {
				s.trace = append(s.trace, fmt.Sprintf("kill %d", id))
				s.brokers[id].up = false
				s.apply(s.core.BrokersChanged(s.registry()))
			}
		}
	case n < 92: // StopReplica answers arrive
		s.deliverAcks()
	case n < 95: // an admin or the balance check elects leaders
		s.electLeaders()
	default: // the controller moves
		s.trace = append(s.trace, "failover")
		s.failover()
	}
	s.check()
}

// electLeaders is an admin's ElectLeaders (preferred for all partitions
// or some, known or not; or unclean), or the leader balance check.
func (s *sim) electLeaders() {
	s.t.Helper()
	before := maps.Clone(s.states)
	canLead := func(tp TopicPartition, st PartitionState) bool {
		pref := s.topics[tp.Topic].Partitions[tp.Partition][0]
		return s.brokers[pref].up && !s.core.shuttingDown[pref] && slices.Contains(st.ISR, pref)
	}
	if s.rng.IntN(4) == 0 {
		s.trace = append(s.trace, "leader balance check")
		s.apply(s.core.CheckLeaderBalance())
		for _, tp := range sortedTPs(s.states) {
			st := s.states[tp]
			if !s.markers[tp.Topic] && canLead(tp, st) && st.Leader != s.topics[tp.Topic].Partitions[tp.Partition][0] {
				s.fail("after the balance check %s is led by %d, its preferred replica could lead: %+v", tp, st.Leader, st)
			}
		}
		return
	}
	req := kmsg.NewPtrElectLeadersRequest()
	req.Version = int16(s.rng.IntN(3))
	if req.Version > 0 && s.rng.IntN(3) == 0 {
		req.ElectionType = ElectUnclean
	}
	if s.rng.IntN(3) != 0 {
		req.Topics = []kmsg.ElectLeadersRequestTopic{}
		for _, tp := range sortedTPs(s.states) {
			if s.rng.IntN(2) == 0 {
				req.Topics = append(req.Topics, kmsg.ElectLeadersRequestTopic{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
			}
		}
		req.Topics = append(req.Topics, kmsg.ElectLeadersRequestTopic{Topic: "none", Partitions: []int32{0}})
	}
	s.trace = append(s.trace, fmt.Sprintf("elect leaders type %d, all %v", req.ElectionType, req.Topics == nil))
	s.uncleanAsked = req.ElectionType == ElectUnclean
	fx := s.core.ElectLeaders(req)
	s.apply(fx)
	s.uncleanAsked = false
	resp, ok := fx.Reply.(*kmsg.ElectLeadersResponse)
	if !ok || resp.ErrorCode != 0 {
		s.fail("ElectLeaders answered %+v", fx.Reply)
	}
	for _, rt := range resp.Topics {
		for _, pr := range rt.Partitions {
			tp := TopicPartition{rt.Topic, pr.Partition}
			old, existed := before[tp]
			now := s.states[tp]
			code := kerr.Code(pr.ErrorCode)
			var pref int32 = -1
			if a, ok := s.topics[tp.Topic].Partitions[tp.Partition]; ok {
				pref = a[0]
			}
			bad := false
			switch {
			case code == kerr.UnknownTopicOrPartition:
				bad = pref != -1
			case !existed || s.markers[tp.Topic] && s.cfg.DeleteTopicEnable:
				// a New partition or a topic being deleted: refused some way
				bad = code == kerr.None
			case code == kerr.ElectionNotNeeded:
				bad = req.Topics == nil || req.ElectionType == ElectPreferred && old.Leader != pref ||
					req.ElectionType == ElectUnclean && old.Leader != NoLeader && !s.brokers[old.Leader].up
			case code == kerr.None && req.ElectionType == ElectPreferred:
				bad = now.Leader != pref || now.LeaderEpoch != old.LeaderEpoch+1
			case code == kerr.None:
				bad = now.Leader == NoLeader || !s.brokers[now.Leader].up
			case code == kerr.PreferredLeaderNotAvailable:
				bad = canLead(tp, old) && old.ControllerEpoch <= s.cfg.Epoch
			case code == kerr.EligibleLeadersNotAvailable:
				bad = req.ElectionType != ElectUnclean
			default:
				bad = code != kerr.InvalidTopicException
			}
			if bad {
				s.fail("ElectLeaders answered %s %v; before %+v (existed %v), now %+v, preferred %d", tp, code, old, existed, now, pref)
			}
		}
	}
}

func (s *sim) deliverAcks() {
	acks := s.stopAcks
	s.stopAcks = nil
	for _, a := range acks {
		if b := s.brokers[a.broker]; b.up && b.epoch == a.epoch {
			s.apply(s.core.StopReplicaAnswered(a.broker, a.req, a.resp))
		}
	}
}

func (s *sim) replicaSet(rf int) []int32 {
	ids := []int32{1, 2, 3, 4}
	s.rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	return slices.Clone(ids[:rf])
}

// alterISR has a leader that believes it leads (from its own view) ask
// for an ISR change: a shrink, or an expansion by a live replica.
// Sometimes its view is stale, and the core must refuse.
func (s *sim) alterISR() {
	var cands []TopicPartition
	for _, tp := range sortedTPs(s.states) {
		st := s.states[tp]
		if st.Leader != NoLeader && s.brokers[st.Leader].up {
			cands = append(cands, tp)
		}
	}
	if len(cands) == 0 {
		return
	}
	tp := cands[s.rng.IntN(len(cands))]
	st := s.states[tp]
	leader := st.Leader
	view, ok := s.brokers[leader].view[tp]
	if !ok || s.rng.IntN(3) != 0 {
		view = st // usually up to date
	}
	isr := slices.Clone(view.ISR)
	replicas := s.topics[tp.Topic].Partitions[tp.Partition]
	if s.rng.IntN(2) == 0 && len(isr) > 1 {
		i := s.rng.IntN(len(isr))
		if isr[i] != leader {
			isr = slices.Delete(isr, i, i+1)
		}
	} else {
		r := replicas[s.rng.IntN(len(replicas))]
		if !slices.Contains(isr, r) {
			isr = append(isr, r)
		}
	}
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version, req.BrokerID, req.BrokerEpoch = 3, leader, s.brokers[leader].epoch
	rt := kmsg.NewAlterPartitionRequestTopic()
	rt.TopicID = s.topics[tp.Topic].ID
	rp := kmsg.NewAlterPartitionRequestTopicPartition()
	rp.Partition, rp.LeaderEpoch, rp.PartitionEpoch = tp.Partition, view.LeaderEpoch, view.Version
	rp.LeaderRecoveryState = st.LeaderRecoveryState
	if rp.LeaderRecoveryState == Recovering && len(isr) == 1 {
		rp.LeaderRecoveryState = Recovered // the leader has recovered
	}
	for _, b := range isr {
		e := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
		e.BrokerID, e.BrokerEpoch = b, s.brokers[b].epoch
		rp.NewEpochISR = append(rp.NewEpochISR, e)
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	s.trace = append(s.trace, fmt.Sprintf("alter %s by %d: isr %v at epoch %d version %d", tp, leader, isr, view.LeaderEpoch, view.Version))
	fx := s.core.AlterPartition(req)
	resp, ok := fx.Reply.(*kmsg.AlterPartitionResponse)
	if !ok || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		s.fail("AlterPartition answered %+v", fx.Reply)
	}
	s.apply(fx)
	pr := resp.Topics[0].Partitions[0]
	now := s.states[tp]
	// A reassignment the new ISR completes writes on (after the answer,
	// as in Kafka).
	completed := len(fx.Assignments) > 0
	if pr.ErrorCode == 0 && !completed && (!slices.Equal(pr.ISR, now.ISR) || pr.PartitionEpoch != now.Version || pr.LeaderEpoch != now.LeaderEpoch) {
		s.fail("AlterPartition answered %+v, zookeeper has %+v", pr, now)
	}
	if pr.ErrorCode == 0 && view.Version != st.Version && !slices.Equal(isr, st.ISR) {
		s.fail("AlterPartition from a stale view (version %d, current %d) accepted", view.Version, st.Version)
	}
}

// finish brings every broker up and lets the answers flow: every
// deletion must then complete (or, with deletion disabled, every marker
// is gone).
func (s *sim) finish() {
	s.trace = append(s.trace, "finish: every broker restarts")
	s.healthy = true
	for id := int32(1); id <= simBrokers; id++ {
		s.register(id) // restart everyone: deletions waiting on a broker resume
	}
	s.apply(s.core.BrokersChanged(s.registry()))
	s.completeReassignments()
	for range 20 {
		s.deliverAcks()
	}
	s.check()
	if len(s.markers) > 0 {
		s.fail("deletions left at the end: %v", sortedKeys(s.markers))
	}
	for name := range s.core.topics {
		if s.topics[name].Name == "" {
			s.fail("core still knows deleted topic %s", name)
		}
	}
}

func TestCoreSimulation(t *testing.T) {
	seeds, steps := 100, 300
	if testing.Short() {
		seeds = 20
	}
	first := uint64(1)
	if v := os.Getenv("SIM_SEEDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		seeds = n
	}
	if v := os.Getenv("SIM_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		first, seeds = n, 1
	}
	for seed := first; seed < first+uint64(seeds); seed++ {
		s := newSim(t, seed)
		for range steps {
			s.step()
		}
		s.finish()
	}
}

func pick2(rng *rand.Rand, names []string) string { return names[rng.IntN(len(names))] }

func cloneAssign(m map[int32][]int32) map[int32][]int32 {
	out := make(map[int32][]int32, len(m))
	for k, v := range m {
		out[k] = slices.Clone(v)
	}
	return out
}

func sortedTPs(m map[TopicPartition]PartitionState) []TopicPartition { return sortedPartitionKeys(m) }
