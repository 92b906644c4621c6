package zkmeta_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/samsa-io/samsa/zkmeta"
)

func TestReassignPartitionsZnodeEncoding(t *testing.T) {
	parts := map[zkmeta.TopicPartition][]int32{{Topic: "b", Partition: 1}: {3, 1}, {Topic: "a", Partition: 0}: {1, 2}}
	got := string(zkmeta.EncodeReassignPartitions(parts))
	want := `{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1,2]},{"topic":"b","partition":1,"replicas":[3,1]}]}`
	if got != want {
		t.Fatalf("encoded %s\nwant    %s", got, want)
	}
	back, err := zkmeta.DecodeReassignPartitions([]byte(want))
	if err != nil || len(back) != 2 || !slices.Equal(back[zkmeta.TopicPartition{Topic: "b", Partition: 1}], []int32{3, 1}) {
		t.Fatalf("decoded %v, %v", back, err)
	}
}

// The legacy znode's life: an admin creates it (once), the controller
// watches it, rewrites what is left and deletes it, fenced; topic znodes
// are rewritten with partition states in one multi.
func TestReassignPartitionsZnodeLifecycle(t *testing.T) {
	c := newClient(t)
	if err := c.EnsurePersistentPaths(); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _, err := c.WatchReassignPartitions(); err != nil || ok {
		t.Fatalf("before creation: exists %v, %v", ok, err)
	}
	tp := zkmeta.TopicPartition{Topic: "t", Partition: 0}
	if err := c.CreateReassignPartitions(map[zkmeta.TopicPartition][]int32{tp: {2, 3}}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateReassignPartitions(map[zkmeta.TopicPartition][]int32{tp: {2}}); !errors.Is(err, zkmeta.ErrNodeExists) {
		t.Fatalf("second create: %v", err)
	}
	parts, czxid, ok, ch, err := c.WatchReassignPartitions()
	if err != nil || !ok || czxid == 0 || !slices.Equal(parts[tp], []int32{2, 3}) {
		t.Fatalf("read %v %d %v %v", parts, czxid, ok, err)
	}
	_, _, ver, err := c.ElectController(1, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetReassignPartitions(ver+1, nil); !errors.Is(err, zkmeta.ErrControllerMoved) {
		t.Fatalf("stale controller's delete: %v", err)
	}
	if err := c.SetReassignPartitions(ver, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not fire on deletion")
	}
	if _, _, ok, _, _ := c.WatchReassignPartitions(); ok {
		t.Fatal("still there after the delete")
	}

	if err := c.CreateTopic(zkmeta.TopicAssignment{Name: "t", Partitions: map[int32][]int32{0: {1}}}, nil); err != nil {
		t.Fatal(err)
	}
	a, err := c.Assignment("t")
	if err != nil {
		t.Fatal(err)
	}
	a.Partitions[0], a.Adding, a.Removing = []int32{2, 1}, map[int32][]int32{0: {2}}, map[int32][]int32{0: {1}}
	st := zkmeta.StateWrite{TP: tp, Create: true, State: zkmeta.PartitionState{Leader: 1, ISR: []int32{1}}}
	if _, err := c.WriteStatesAndAssignments(ver, []zkmeta.StateWrite{st}, []zkmeta.TopicAssignment{a}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Assignment("t")
	if err != nil || !slices.Equal(got.Partitions[0], []int32{2, 1}) || !slices.Equal(got.Adding[0], []int32{2}) || got.ID != a.ID {
		t.Fatalf("assignment after the multi %+v, %v", got, err)
	}
	if s, err := c.PartitionState(tp); err != nil || s.Leader != 1 {
		t.Fatalf("state after the multi %+v, %v", s, err)
	}
}
