package controller

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// Reassignments in the seeded simulation (core_sim_test.go): an admin
// moves a partition to random brokers or cancels its move; leaders'
// ISR expansions (alterISR picks among all the replicas, the adding ones
// too) complete them. Invariants, beyond the simulation's own:
//   - a topic znode write and the state writes it goes with leave every
//     state's ISR and leader within the partition's replicas;
//   - adding and removing are what target-then-original gives, and the
//     core lists exactly the partitions ZooKeeper says are moving;
//   - at the end, with every broker up and the ISRs caught up, no
//     reassignment is left, except on a partition stranded as Kafka
//     strands it: its last in-sync replica was reassigned away, so it
//     has no leader to catch the others up (lastOfRemoved).

// applyAssignments writes fx's topic znodes into the model, after its
// state writes (one multi), and checks the states against them.
func (s *sim) applyAssignments(fx Effects) {
	s.t.Helper()
	for _, a := range fx.Assignments {
		cur, ok := s.topics[a.Name]
		if !ok {
			s.fail("assignment write of %s, which does not exist", a.Name)
		}
		if a.ID != cur.ID {
			s.fail("assignment write of %s changes its id", a.Name)
		}
		for p, rs := range a.Partitions {
			add, rem := a.Adding[p], a.Removing[p]
			if len(rs) == 0 || slices.ContainsFunc(add, func(r int32) bool { return !slices.Contains(rs, r) || slices.Contains(rem, r) }) ||
				slices.ContainsFunc(rem, func(r int32) bool { return !slices.Contains(rs, r) }) {
				s.fail("%s-%d: replicas %v adding %v removing %v", a.Name, p, rs, add, rem)
			}
		}
		a.Version = cur.Version + 1
		s.topics[a.Name] = a
	}
	if len(fx.Assignments) == 0 {
		return
	}
	for _, w := range fx.Writes {
		st, rs := s.states[w.TP], s.topics[w.TP.Topic].Partitions[w.TP.Partition]
		if (slices.ContainsFunc(st.ISR, func(r int32) bool { return !slices.Contains(rs, r) }) && !lastOfRemoved(st)) || (st.Leader != NoLeader && !slices.Contains(rs, st.Leader)) {
			s.fail("%s: state %+v outside the replicas %v written with it", w.TP, st, rs)
		}
	}
}

// reassign moves a random partition to random brokers (sometimes a dead
// one, refused) or cancels its reassignment.
func (s *sim) reassign() {
	s.t.Helper()
	var tps []TopicPartition
	for _, name := range sortedKeys(s.topics) {
		for _, p := range sortedKeys(s.topics[name].Partitions) {
			tps = append(tps, TopicPartition{name, p})
		}
	}
	if len(tps) == 0 {
		return
	}
	tp := tps[s.rng.IntN(len(tps))]
	var target []int32
	if s.rng.IntN(4) != 0 {
		target = s.replicaSet(1 + s.rng.IntN(3))
	}
	s.trace = append(s.trace, fmt.Sprintf("reassign %s to %v", tp, target))
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = tp.Topic
	rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	rp.Partition, rp.Replicas = tp.Partition, target
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	before := s.topics[tp.Topic]
	fx := s.core.AlterPartitionReassignments(req)
	resp, ok := fx.Reply.(*kmsg.AlterPartitionAssignmentsResponse)
	if !ok || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		s.fail("AlterPartitionReassignments answered %+v", fx.Reply)
	}
	code := kerr.Code(resp.Topics[0].Partitions[0].ErrorCode)
	moving := len(before.Adding[tp.Partition]) > 0 || len(before.Removing[tp.Partition]) > 0
	switch {
	case target == nil && !moving && code != kerr.NoReassignmentInProgress:
		s.fail("cancelling no reassignment of %s answered %v", tp, code)
	case code == kerr.InvalidReplicaAssignment:
		if !slices.ContainsFunc(target, func(r int32) bool { return !s.brokers[r].up }) {
			s.fail("target %v of %s refused with every broker up", target, tp)
		}
	case code == kerr.UnknownTopicOrPartition:
		if !s.markers[tp.Topic] || !s.cfg.DeleteTopicEnable {
			s.fail("reassigning %s answered UNKNOWN_TOPIC_OR_PARTITION", tp)
		}
	}
	s.apply(fx)
	s.checkListed()
}

// checkListed compares the core's list of reassignments with the topic
// znodes.
func (s *sim) checkListed() {
	s.t.Helper()
	listed := map[TopicPartition]bool{}
	for _, t := range s.core.ListPartitionReassignments(kmsg.NewPtrListPartitionReassignmentsRequest()).Topics {
		for _, p := range t.Partitions {
			tp := TopicPartition{t.Topic, p.Partition}
			listed[tp] = true
			a := s.topics[t.Topic]
			if !slices.Equal(p.Replicas, a.Partitions[p.Partition]) || !slices.Equal(p.AddingReplicas, nonNil(a.Adding[p.Partition])) ||
				!slices.Equal(p.RemovingReplicas, nonNil(a.Removing[p.Partition])) {
				s.fail("listed %s as %v +%v -%v, zookeeper has %+v", tp, p.Replicas, p.AddingReplicas, p.RemovingReplicas, a)
			}
		}
	}
	for _, name := range sortedKeys(s.topics) {
		a := s.topics[name]
		for p := range a.Partitions {
			tp := TopicPartition{name, p}
			if moving := len(a.Adding[p]) > 0 || len(a.Removing[p]) > 0; moving != listed[tp] {
				s.fail("%s: moving in zookeeper %v, listed %v", tp, moving, listed[tp])
			}
		}
	}
}

// completeReassignments has each moving partition's leader take every
// target replica into its ISR, as they would once caught up (every
// broker is up): then no reassignment may be left.
func (s *sim) completeReassignments() {
	s.t.Helper()
	for range 3 {
		for _, name := range sortedKeys(s.topics) {
			a := s.topics[name]
			for _, p := range sortedKeys(a.Partitions) {
				tp := TopicPartition{name, p}
				st, ok := s.states[tp]
				if !ok || (len(a.Adding[p]) == 0 && len(a.Removing[p]) == 0) || st.Leader == NoLeader || s.markers[name] {
					continue
				}
				isr := slices.Clone(st.ISR)
				for _, r := range a.Partitions[p] {
					if !slices.Contains(isr, r) && !slices.Contains(a.Removing[p], r) {
						isr = append(isr, r)
					}
				}
				s.trace = append(s.trace, fmt.Sprintf("catch up %s: isr %v", tp, isr))
				req := alterV3(a.ID, p, st, st.Leader, isr, func(b int32) int64 { return s.brokers[b].epoch })
				req.Topics[0].Partitions[0].LeaderRecoveryState = Recovered
				s.apply(s.core.AlterPartition(req))
			}
		}
	}
	s.checkListed()
	for _, name := range sortedKeys(s.topics) {
		a := s.topics[name]
		for p := range a.Partitions {
			st := s.states[TopicPartition{name, p}]
			stranded := lastOfRemoved(st) && !slices.Contains(a.Partitions[p], st.ISR[0])
			if (len(a.Adding[p]) > 0 || len(a.Removing[p]) > 0) && !s.markers[name] && !stranded {
				s.fail("%s-%d still moving at the end: %v +%v -%v, state %+v", name, p, a.Partitions[p], a.Adding[p], a.Removing[p], s.states[TopicPartition{name, p}])
			}
		}
	}
}

// lastOfRemoved is a state whose only in-sync replica was reassigned
// away: as in Kafka, the replica leaves the ISR unless it is the last
// member (the ISR never goes empty), and the partition is left without a
// leader until unclean election or the replica's return.
func lastOfRemoved(st PartitionState) bool {
	return st.Leader == NoLeader && len(st.ISR) == 1
}
