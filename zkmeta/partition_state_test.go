package zkmeta_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/samsa-io/samsa/zkmeta"
)

// controllerOf makes c the controller of a fresh tree with topic t of n
// partitions and returns the epoch and its zkVersion.
func controllerOf(t *testing.T, c *zkmeta.Client, topic string, n int32) (epoch, ver int32) {
	t.Helper()
	if err := c.EnsurePersistentPaths(); err != nil {
		t.Fatal(err)
	}
	parts := map[int32][]int32{}
	for p := range n {
		parts[p] = []int32{1, 2, 3}
	}
	if err := c.CreateTopic(zkmeta.TopicAssignment{Name: topic, Partitions: parts}, nil); err != nil {
		t.Fatal(err)
	}
	won, epoch, ver, err := c.ElectController(1, time.Now())
	if err != nil || !won {
		t.Fatal(won, err)
	}
	return epoch, ver
}

func TestPartitionStateCAS(t *testing.T) {
	c := newClient(t)
	epoch, ver := controllerOf(t, c, "t", 3)
	tp := func(p int32) zkmeta.TopicPartition { return zkmeta.TopicPartition{Topic: "t", Partition: p} }
	var create []zkmeta.StateWrite
	for p := range int32(3) {
		create = append(create, zkmeta.StateWrite{TP: tp(p), Create: true,
			State: zkmeta.PartitionState{Leader: p + 1, LeaderEpoch: 0, ControllerEpoch: epoch, ISR: []int32{1, 2, 3}}})
	}
	vs, err := c.WritePartitionStates(ver, create)
	if err != nil || !slices.Equal(vs, []int32{0, 0, 0}) {
		t.Fatalf("create: %v, %v", vs, err)
	}
	data, _ := raw(t, c, zkmeta.PartitionStatePath(tp(1)))
	if want := `{"controller_epoch":1,"leader":2,"version":1,"leader_epoch":0,"isr":[1,2,3]}`; string(data) != want {
		t.Errorf("state znode %s, want %s", data, want)
	}
	// Creating again: the partition is named, nothing is written.
	_, err = c.WritePartitionStates(ver, create[1:2])
	var pwe *zkmeta.PartitionWriteError
	if !errors.As(err, &pwe) || pwe.TP != tp(1) || !errors.Is(err, zkmeta.ErrNodeExists) {
		t.Fatalf("creating an existing state: %v", err)
	}

	states, err := c.PartitionStates("t")
	if err != nil || len(states) != 3 || states[2].Leader != 3 || states[2].Version != 0 {
		t.Fatalf("PartitionStates = %+v, %v", states, err)
	}

	// A leader change at the version read.
	s0 := states[0]
	s0.Leader, s0.LeaderEpoch, s0.ISR = 2, 1, []int32{2, 3}
	s0.LeaderRecoveryState = zkmeta.LeaderRecovering
	vs, err = c.WritePartitionStates(ver, []zkmeta.StateWrite{{TP: tp(0), State: s0}})
	if err != nil || vs[0] != 1 {
		t.Fatalf("set: %v, %v", vs, err)
	}
	data, _ = raw(t, c, zkmeta.PartitionStatePath(tp(0)))
	if want := `{"controller_epoch":1,"leader":2,"version":1,"leader_recovery_state":1,"leader_epoch":1,"isr":[2,3]}`; string(data) != want {
		t.Errorf("state znode %s, want %s", data, want)
	}
	if got, err := c.PartitionState(tp(0)); err != nil || got.LeaderRecoveryState != zkmeta.LeaderRecovering || got.Version != 1 {
		t.Errorf("read back %+v, %v", got, err)
	}

	// All or nothing: partition 1 at the right version, partition 0 at a
	// stale one. Neither is written and the error names partition 0.
	s1 := states[1]
	s1.ISR = []int32{2}
	_, err = c.WritePartitionStates(ver, []zkmeta.StateWrite{{TP: tp(1), State: s1}, {TP: tp(0), State: s0}})
	if !errors.As(err, &pwe) || pwe.TP != tp(0) || !errors.Is(err, zkmeta.ErrBadVersion) {
		t.Fatalf("stale write: %v, want a PartitionWriteError for t-0 with ErrBadVersion", err)
	}
	if got, _ := c.PartitionState(tp(1)); got.Version != 0 || len(got.ISR) != 3 {
		t.Fatalf("partition 1 was written by a failed multi: %+v", got)
	}

	// The AlterPartition path: each partition on its own.
	written, retry, err := c.UpdateLeaderAndISR(ver, map[zkmeta.TopicPartition]zkmeta.PartitionState{tp(1): s1, tp(0): s0})
	if err != nil || len(written) != 1 || written[tp(1)] != 1 || !slices.Equal(retry, []zkmeta.TopicPartition{tp(0)}) {
		t.Fatalf("UpdateLeaderAndISR = %v %v %v", written, retry, err)
	}
	s0.Version = 1
	written, retry, err = c.UpdateLeaderAndISR(ver, map[zkmeta.TopicPartition]zkmeta.PartitionState{tp(0): s0})
	if err != nil || written[tp(0)] != 2 || len(retry) != 0 {
		t.Fatalf("UpdateLeaderAndISR = %v %v %v", written, retry, err)
	}

	// Creating states for a new topic creates the parents too (Kafka's
	// layout has /partitions and /partitions/<p> as empty znodes).
	if err := c.CreateTopic(zkmeta.TopicAssignment{Name: "u", Partitions: map[int32][]int32{0: {1}}}, nil); err != nil {
		t.Fatal(err)
	}
	u0 := zkmeta.TopicPartition{Topic: "u", Partition: 0}
	if _, err := c.WritePartitionStates(ver, []zkmeta.StateWrite{{TP: u0, Create: true, State: zkmeta.PartitionState{Leader: 1, ControllerEpoch: epoch, ISR: []int32{1}}}}); err != nil {
		t.Fatal(err)
	}
	if data, _ := raw(t, c, zkmeta.PartitionPath(u0)); len(data) != 0 {
		t.Errorf("partition znode holds %q", data)
	}
	if states, err := c.PartitionStates("nope"); err != nil || len(states) != 0 {
		t.Errorf("states of a missing topic: %v, %v", states, err)
	}
}
