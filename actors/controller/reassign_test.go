package controller

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

func reassignReq(target map[TopicPartition][]int32) *kmsg.AlterPartitionAssignmentsRequest {
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	for _, tp := range sortedPartitionKeys(target) {
		rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
		rt.Topic = tp.Topic
		rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
		rp.Partition, rp.Replicas = tp.Partition, target[tp]
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func reassignCodes(fx Effects) map[TopicPartition]kerr.Code {
	out := map[TopicPartition]kerr.Code{}
	resp := fx.Reply.(*kmsg.AlterPartitionAssignmentsResponse)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[TopicPartition{t.Topic, p.Partition}] = kerr.Code(p.ErrorCode)
		}
	}
	return out
}

// laiTo returns the LeaderAndIsr partition states fx sends to broker b
// for tp, in order.
func laiTo(fx Effects, b int32, tp TopicPartition) []kmsg.LeaderAndISRRequestTopicPartition {
	var out []kmsg.LeaderAndISRRequestTopicPartition
	for _, s := range fx.Send {
		if r, ok := s.Req.(*kmsg.LeaderAndISRRequest); ok && s.Broker == b {
			for _, ts := range r.TopicStates {
				for _, ps := range ts.PartitionStates {
					if ts.Topic == tp.Topic && ps.Partition == tp.Partition {
						out = append(out, ps)
					}
				}
			}
		}
	}
	return out
}

func stopsTo(fx Effects, b int32) (stop, del bool) {
	for _, s := range fx.Send {
		if r, ok := s.Req.(*kmsg.StopReplicaRequest); ok && s.Broker == b {
			for _, t := range r.Topics {
				for _, ps := range t.PartitionStates {
					if ps.Delete {
						del = true
					} else {
						stop = true
					}
				}
			}
		}
	}
	return stop, del
}

// isrGrows is the leader's AlterPartition adding to the ISR, at the
// core's current state.
func isrGrows(c *Core, leader int32, isr ...int32) *kmsg.AlterPartitionRequest {
	return alterV3(c.topics["t"].id, 0, *c.parts[tp0].state, leader, isr, func(b int32) int64 { return c.brokers[b].Epoch })
}

// alterV3 is leader's AlterPartition v3 asking for isr at state s.
func alterV3(id TopicID, partition int32, s PartitionState, leader int32, isr []int32, epoch func(int32) int64) *kmsg.AlterPartitionRequest {
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version = 3
	req.BrokerID, req.BrokerEpoch = leader, epoch(leader)
	rt := kmsg.NewAlterPartitionRequestTopic()
	rt.TopicID = id
	rp := kmsg.NewAlterPartitionRequestTopicPartition()
	rp.Partition, rp.LeaderEpoch, rp.PartitionEpoch = partition, s.LeaderEpoch, s.Version
	for _, b := range isr {
		e := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
		e.BrokerID, e.BrokerEpoch = b, epoch(b)
		rp.NewEpochISR = append(rp.NewEpochISR, e)
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func lastAssignment(t *testing.T, fx Effects) TopicAssignment {
	t.Helper()
	if len(fx.Assignments) != 1 {
		t.Fatalf("assignment writes %+v, want one", fx.Assignments)
	}
	return fx.Assignments[0]
}

// A move of [1,2,3] to [4,2,3] (1 leads): the znode gets [4,2,3,1] with
// adding [4] and removing [1]; 4 is told is_new; once the ISR holds 4 the
// leader moves into the target, 1 leaves the ISR, is stopped and deleted,
// and the znode gets [4,2,3].
func TestReassignMovesReplicaThroughBothPhases(t *testing.T) {
	c := started(t, Config{}, brokerSet(1, 2, 3, 4), state(1, 4, 7, 1, 2, 3), 1, 2, 3)
	fx := c.AlterPartitionReassignments(reassignReq(map[TopicPartition][]int32{tp0: {4, 2, 3}}))
	if code := reassignCodes(fx)[tp0]; code != kerr.None {
		t.Fatalf("answer %v", code)
	}
	a := lastAssignment(t, fx)
	if !slices.Equal(a.Partitions[0], []int32{4, 2, 3, 1}) || !slices.Equal(a.Adding[0], []int32{4}) || !slices.Equal(a.Removing[0], []int32{1}) || a.ID != (TopicID{9}) {
		t.Fatalf("phase U wrote %+v", a)
	}
	if len(fx.Writes) != 1 || fx.Writes[0].State.LeaderEpoch != 5 || fx.Writes[0].State.Leader != 1 {
		t.Fatalf("phase A wrote %+v, want the leader epoch bumped", fx.Writes)
	}
	new4 := laiTo(fx, 4, tp0)
	if len(new4) != 1 || !new4[0].IsNew || !slices.Equal(new4[0].AddingReplicas, []int32{4}) || !slices.Equal(new4[0].RemovingReplicas, []int32{1}) ||
		!slices.Equal(new4[0].Replicas, []int32{4, 2, 3, 1}) || new4[0].LeaderEpoch != 5 {
		t.Fatalf("LeaderAndIsr to the new replica %+v", new4)
	}
	if old := laiTo(fx, 1, tp0); len(old) != 1 || old[0].IsNew {
		t.Fatalf("LeaderAndIsr to the leader %+v", old)
	}
	c.Written(fx, []int32{8})

	list := c.ListPartitionReassignments(kmsg.NewPtrListPartitionReassignmentsRequest())
	if len(list.Topics) != 1 || !slices.Equal(list.Topics[0].Partitions[0].AddingReplicas, []int32{4}) {
		t.Fatalf("list %+v", list.Topics)
	}

	// The leader adds 4 to the ISR: the reassignment completes.
	fx = c.AlterPartition(isrGrows(c, 1, 1, 2, 3, 4))
	a = lastAssignment(t, fx)
	if !slices.Equal(a.Partitions[0], []int32{4, 2, 3}) || len(a.Adding) != 0 || len(a.Removing) != 0 {
		t.Fatalf("phase B wrote %+v", a)
	}
	final := c.parts[tp0].state
	if final.Leader != 4 || !slices.Equal(final.ISR, []int32{2, 3, 4}) {
		t.Fatalf("final state %+v, want leader 4 and ISR without 1", final)
	}
	if stop, del := stopsTo(fx, 1); !stop || !del {
		t.Fatalf("removed replica: stop %v delete %v", stop, del)
	}
	if _, del := stopsTo(fx, 4); del {
		t.Fatal("the new replica was told to delete")
	}
	if lai := laiTo(fx, 4, tp0); len(lai) == 0 || lai[len(lai)-1].Leader != 4 || !slices.Equal(lai[len(lai)-1].Replicas, []int32{4, 2, 3}) {
		t.Fatalf("new leader's LeaderAndIsr %+v", lai)
	}
	if resp := fx.Reply.(*kmsg.AlterPartitionResponse); resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("AlterPartition answer %+v", resp)
	}
	if list := c.ListPartitionReassignments(kmsg.NewPtrListPartitionReassignmentsRequest()); len(list.Topics) != 0 {
		t.Fatalf("still listed %+v", list.Topics)
	}
}

// Shrinking the replica set completes at once: the target is in the ISR.
func TestReassignToSubsetCompletesAtOnce(t *testing.T) {
	c := started(t, Config{}, brokerSet(1, 2, 3), state(1, 4, 7, 1, 2, 3), 1, 2, 3)
	fx := c.AlterPartitionReassignments(reassignReq(map[TopicPartition][]int32{tp0: {2, 3}}))
	if a := lastAssignment(t, fx); !slices.Equal(a.Partitions[0], []int32{2, 3}) {
		t.Fatalf("wrote %+v", a)
	}
	if s := c.parts[tp0].state; s.Leader != 2 || !slices.Equal(s.ISR, []int32{2, 3}) {
		t.Fatalf("state %+v", s)
	}
	if _, del := stopsTo(fx, 1); !del {
		t.Fatal("1 not deleted")
	}
}

// Cancelling goes back to the original replicas and deletes the adding
// one. As in Kafka, the original order is lost where the target overlapped
// it: [1,2,3] → [4,2,3] in progress is [4,2,3,1], cancelled [2,3,1].
func TestCancelReassignmentRevertsAndDeletesAdded(t *testing.T) {
	c := started(t, Config{}, brokerSet(1, 2, 3, 4), state(1, 4, 7, 1, 2, 3), 1, 2, 3)
	fx := c.AlterPartitionReassignments(reassignReq(map[TopicPartition][]int32{tp0: {4, 2, 3}}))
	c.Written(fx, []int32{8})
	fx = c.AlterPartitionReassignments(reassignReq(map[TopicPartition][]int32{tp0: nil}))
	if code := reassignCodes(fx)[tp0]; code != kerr.None {
		t.Fatalf("cancel answered %v", code)
	}
	a := fx.Assignments[len(fx.Assignments)-1]
	if !slices.Equal(a.Partitions[0], []int32{2, 3, 1}) || len(a.Adding) != 0 || len(a.Removing) != 0 {
		t.Fatalf("cancel wrote %+v", a)
	}
	if _, del := stopsTo(fx, 4); !del {
		t.Fatal("the added replica was not deleted")
	}
	if s := c.parts[tp0].state; s.Leader != 1 {
		t.Fatalf("state %+v", s)
	}
	fx = c.AlterPartitionReassignments(reassignReq(map[TopicPartition][]int32{tp0: nil}))
	if code := reassignCodes(fx)[tp0]; code != kerr.NoReassignmentInProgress {
		t.Fatalf("cancelling nothing answered %v", code)
	}
}

func TestReassignRefusesBadTargets(t *testing.T) {
	c := started(t, Config{}, brokerSet(1, 2, 3), state(1, 4, 7, 1, 2, 3), 1, 2, 3)
	for name, tc := range map[string]struct {
		tp     TopicPartition
		target []int32
		want   kerr.Code
	}{
		"empty":     {tp0, []int32{}, kerr.InvalidReplicaAssignment},
		"duplicate": {tp0, []int32{1, 1}, kerr.InvalidReplicaAssignment},
		"negative":  {tp0, []int32{-1, 2}, kerr.InvalidReplicaAssignment},
		"dead":      {tp0, []int32{1, 9}, kerr.InvalidReplicaAssignment},
		"unknown":   {TopicPartition{"t", 5}, []int32{1, 2}, kerr.UnknownTopicOrPartition},
		"no topic":  {TopicPartition{"x", 0}, []int32{1}, kerr.UnknownTopicOrPartition},
	} {
		fx := c.AlterPartitionReassignments(reassignReq(map[TopicPartition][]int32{tc.tp: tc.target}))
		if got := reassignCodes(fx)[tc.tp]; got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
		if len(fx.Writes)+len(fx.Assignments) != 0 {
			t.Errorf("%s: wrote %+v %+v", name, fx.Writes, fx.Assignments)
		}
	}
}

// A new controller finds the reassignment in the topic znode and resumes
// it: the adding replica is told again.
func TestReassignmentResumesAfterFailover(t *testing.T) {
	c := New(Config{BrokerID: 1, Epoch: 3})
	topics := []TopicAssignment{{Name: "t", ID: TopicID{9}, Partitions: map[int32][]int32{0: {4, 2, 3, 1}},
		Adding: map[int32][]int32{0: {4}}, Removing: map[int32][]int32{0: {1}}}}
	fx := c.Start(brokerSet(1, 2, 3, 4), topics, map[TopicPartition]PartitionState{tp0: state(1, 5, 8, 1, 2, 3)}, nil)
	if lai := laiTo(fx, 4, tp0); len(lai) == 0 || !lai[len(lai)-1].IsNew || !slices.Equal(lai[len(lai)-1].AddingReplicas, []int32{4}) {
		t.Fatalf("resumed LeaderAndIsr to 4: %+v", lai)
	}
	if len(fx.Assignments) != 0 {
		t.Fatalf("resuming rewrote the assignment %+v", fx.Assignments)
	}
	if !c.ra.inProgress[tp0] {
		t.Fatal("not in progress")
	}
}

// The legacy znode starts reassignments, drops the invalid ones at once
// and is deleted when the last one completes.
func TestLegacyZnodeStartsAndIsDeletedWhenDone(t *testing.T) {
	c := started(t, Config{}, brokerSet(1, 2, 3, 4), state(1, 4, 7, 1, 2, 3), 1, 2, 3)
	fx := c.ZkReassignment(map[TopicPartition][]int32{tp0: {4, 2, 3}, {"t", 7}: {1}})
	if fx.ReassignZnode == nil || len(fx.ReassignZnode.Partitions) != 1 || fx.ReassignZnode.Partitions[tp0] == nil {
		t.Fatalf("znode rewrite %+v, want the unknown partition dropped", fx.ReassignZnode)
	}
	c.Written(fx, []int32{8})
	fx = c.AlterPartition(isrGrows(c, 1, 1, 2, 3, 4))
	if fx.ReassignZnode == nil || len(fx.ReassignZnode.Partitions) != 0 {
		t.Fatalf("znode at completion %+v, want deleted", fx.ReassignZnode)
	}
	if c.ra.zkExists {
		t.Fatal("znode still known")
	}
}

// A broker of the target starting again resumes the reassignment.
func TestTargetBrokerStartupResumesReassignment(t *testing.T) {
	c := started(t, Config{}, brokerSet(1, 2, 3, 4), state(1, 4, 7, 1, 2, 3), 1, 2, 3)
	fx := c.AlterPartitionReassignments(reassignReq(map[TopicPartition][]int32{tp0: {4, 2, 3}}))
	c.Written(fx, []int32{8})
	c.BrokersChanged(brokerSet(1, 2, 3))
	fx = c.BrokersChanged(brokerSet(1, 2, 3, 4))
	if lai := laiTo(fx, 4, tp0); len(lai) == 0 || !lai[len(lai)-1].IsNew {
		t.Fatalf("LeaderAndIsr to the restarted target %+v", lai)
	}
}

// A new controller processes the legacy znode read before Start, and its
// entries supplant the reassignment the topic znode holds.
func TestLegacyZnodeReadAtFailoverSupplantsTopicZnode(t *testing.T) {
	c := New(Config{BrokerID: 1, Epoch: 3})
	topics := []TopicAssignment{{Name: "t", ID: TopicID{9}, Partitions: map[int32][]int32{0: {4, 2, 3, 1}},
		Adding: map[int32][]int32{0: {4}}, Removing: map[int32][]int32{0: {1}}}}
	c.QueueZkReassignment(map[TopicPartition][]int32{tp0: {1, 2}})
	fx := c.Start(brokerSet(1, 2, 3, 4), topics, map[TopicPartition]PartitionState{tp0: state(1, 5, 8, 1, 2, 3)}, nil)
	// [1,2] is within the ISR: the move completes at once, 3 and the
	// half-added 4 are deleted, and the znode goes.
	if a := lastAssignment(t, fx); !slices.Equal(a.Partitions[0], []int32{1, 2}) || len(a.Adding)+len(a.Removing) != 0 {
		t.Fatalf("wrote %+v", a)
	}
	for _, b := range []int32{3, 4} {
		if _, del := stopsTo(fx, b); !del {
			t.Errorf("replica on %d not deleted", b)
		}
	}
	if fx.ReassignZnode == nil || len(fx.ReassignZnode.Partitions) != 0 {
		t.Fatalf("znode write %+v, want it deleted", fx.ReassignZnode)
	}
	if s := c.parts[tp0].state; s.Leader != 1 || !slices.Equal(s.ISR, []int32{1, 2}) {
		t.Fatalf("state %+v", s)
	}
}

// A partition named twice in one request takes its last target, as
// Kafka's map of the request does.
func TestReassignPartitionNamedTwiceTakesLast(t *testing.T) {
	c := started(t, Config{}, brokerSet(1, 2, 3, 4), state(1, 4, 7, 1, 2, 3), 1, 2, 3)
	req := reassignReq(map[TopicPartition][]int32{tp0: {4, 2, 3}})
	again := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	again.Partition, again.Replicas = 0, []int32{2, 3}
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, again)
	fx := c.AlterPartitionReassignments(req)
	resp := fx.Reply.(*kmsg.AlterPartitionAssignmentsResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("answered %+v", resp.Topics)
	}
	if a := lastAssignment(t, fx); !slices.Equal(a.Partitions[0], []int32{2, 3}) {
		t.Fatalf("wrote %+v, want the last target", a)
	}
}
