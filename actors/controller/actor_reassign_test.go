package controller

import (
	"log/slog"
	"maps"
	"slices"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// reassignStore is fakeStore with the legacy znode and topic znode
// writes (ReassignStore).
type reassignStore struct {
	*fakeStore
	znode   map[TopicPartition][]int32
	czxid   int64 // 0: no znode
	rewrote int
}

func (f *reassignStore) WriteStatesAndAssignments(v int32, ws []StateWrite, as []TopicAssignment) ([]int32, error) {
	vs, err := f.WritePartitionStates(v, ws)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range as {
		a.Version = f.topics[a.Name].Version + 1
		f.topics[a.Name] = a
		f.fire("topic/" + a.Name)
	}
	return vs, nil
}

func (f *reassignStore) WatchReassignPartitions() (map[TopicPartition][]int32, int64, bool, <-chan struct{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.znode), f.czxid, f.czxid != 0, f.arm("reassign"), nil
}

func (f *reassignStore) SetReassignPartitions(v int32, parts map[TopicPartition][]int32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v != f.ver {
		return ErrControllerMoved
	}
	f.rewrote++
	if len(parts) == 0 {
		f.znode, f.czxid = nil, 0
	} else {
		f.znode = maps.Clone(parts)
	}
	f.fire("reassign")
	return nil
}

// The shell starts what the legacy znode asks once per creation, writes
// topic znodes with the states, completes on AlterPartition and deletes
// the znode; the API messages are answered by the core.
func TestShellReassigns(t *testing.T) {
	st := &reassignStore{fakeStore: newFakeStore()}
	for id := int32(1); id <= 3; id++ {
		st.brokers[id] = BrokerInfo{ID: id, Epoch: int64(10 + id), Endpoints: []Endpoint{{"PLAINTEXT", "127.0.0.1", 9000 + id, "PLAINTEXT"}}}
	}
	st.topics["a"] = TopicAssignment{Name: "a", ID: TopicID{1}, Partitions: map[int32][]int32{0: {1, 2}, 1: {2, 1}}}
	snd := &fakeSender{st: st.fakeStore}
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) }))
	pid := sys.Root.Spawn(Props(ShellConfig{Core: Config{BrokerID: 1, DeleteTopicEnable: true}, Store: st, Sender: snd}))
	t.Cleanup(func() { _ = sys.Root.StopFuture(pid).Wait() })
	waitFor(t, st.fakeStore, "the first states", func() bool { return st.ctl == 1 && len(st.states) == 2 })

	a0 := TopicPartition{"a", 0}
	st.do(func() {
		st.znode, st.czxid = map[TopicPartition][]int32{a0: {2, 3}}, 77
		st.fire("reassign")
	})
	waitFor(t, st.fakeStore, "a-0 moving", func() bool {
		a := st.topics["a"]
		return slices.Equal(a.Partitions[0], []int32{2, 3, 1}) && slices.Equal(a.Adding[0], []int32{3}) && slices.Equal(a.Removing[0], []int32{1})
	})
	waitFor(t, st.fakeStore, "LeaderAndIsr to the new replica", func() bool { return snd.count(4, 3) > 0 })

	lr, lgot := reply[*kmsg.ListPartitionReassignmentsResponse](t)
	sys.Root.Send(pid, &ListPartitionReassignments{Req: kmsg.NewPtrListPartitionReassignmentsRequest(), Reply: lr})
	if resp := lgot(); len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("listed %+v", resp.Topics)
	}
	ar, agot := reply[*kmsg.AlterPartitionAssignmentsResponse](t)
	sys.Root.Send(pid, &AlterPartitionReassignments{Req: reassignReq(map[TopicPartition][]int32{{"a", 1}: nil}), Reply: ar})
	if resp := agot(); resp.Topics[0].Partitions[0].ErrorCode != int16(kerr.NoReassignmentInProgress) {
		t.Fatalf("cancelling nothing answered %+v", resp.Topics[0].Partitions[0])
	}

	// The leader takes 3 into the ISR: done, and the znode goes.
	st.mu.Lock()
	cur := st.states[a0]
	st.mu.Unlock()
	req := alterV3(TopicID{1}, 0, cur, cur.Leader, []int32{1, 2, 3}, func(b int32) int64 { return int64(10 + b) })
	r, got := reply[*kmsg.AlterPartitionResponse](t)
	sys.Root.Send(pid, &AlterPartition{Req: req, Reply: r})
	if resp := got(); resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("AlterPartition answered %+v", resp.Topics[0].Partitions[0])
	}
	waitFor(t, st.fakeStore, "a-0 moved and the znode gone", func() bool {
		a := st.topics["a"]
		s := st.states[a0]
		return slices.Equal(a.Partitions[0], []int32{2, 3}) && len(a.Adding[0]) == 0 && st.czxid == 0 &&
			s.Leader == 2 && slices.Equal(s.ISR, []int32{2, 3})
	})
	if snd.count(5, 1) == 0 {
		t.Error("no StopReplica to the removed replica")
	}
	st.mu.Lock()
	rewrote := st.rewrote
	st.mu.Unlock()
	if rewrote != 1 {
		t.Errorf("the znode was written %d times, want once (its deletion)", rewrote)
	}
}
