package zkmeta_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/samsa-io/samsa/zkmeta"
)

func TestTopicLifecycle(t *testing.T) {
	c := newClient(t)
	if err := c.EnsurePersistentPaths(); err != nil {
		t.Fatal(err)
	}
	names, topicsChanged, err := c.WatchTopics()
	if err != nil || len(names) != 0 {
		t.Fatalf("WatchTopics = %v, %v", names, err)
	}
	id := zkmeta.NewTopicID()
	a := zkmeta.TopicAssignment{Name: "orders", ID: id, Partitions: map[int32][]int32{0: {1, 2}, 1: {2, 3}}}
	if err := c.CreateTopic(a, map[string]string{"retention.ms": "1000", "cleanup.policy": "compact"}); err != nil {
		t.Fatal(err)
	}
	fired(t, topicsChanged, "topic list after a create")
	if err := c.CreateTopic(a, nil); !errors.Is(err, zkmeta.ErrNodeExists) {
		t.Fatalf("creating it again: %v, want ErrNodeExists", err)
	}
	cfg, err := c.EntityConfig(zkmeta.ConfigTopics, "orders")
	if err != nil || len(cfg) != 2 || cfg["retention.ms"] != "1000" || cfg["cleanup.policy"] != "compact" {
		t.Fatalf("topic config = %v, %v", cfg, err)
	}
	if err := c.CreateTopic(zkmeta.TopicAssignment{Name: "noid", Partitions: map[int32][]int32{0: {1}}}, nil); err != nil {
		t.Fatal(err)
	}
	if data, _ := raw(t, c, zkmeta.ConfigPath(zkmeta.ConfigTopics, "noid")); string(data) != `{"version":1,"config":{}}` {
		t.Errorf("empty topic config written as %s", data)
	}

	got, changed, err := c.WatchAssignment("orders")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != id || got.Version != 0 || !slices.Equal(got.Partitions[1], []int32{2, 3}) || len(got.Partitions) != 2 {
		t.Fatalf("assignment = %+v", got)
	}
	if data, _ := raw(t, c, zkmeta.TopicPath("orders")); string(data) != string(zkmeta.EncodeTopicAssignment(a)) {
		t.Errorf("topic znode %s", data)
	}
	if noid, err := c.Assignment("noid"); err != nil || noid.ID.IsZero() {
		t.Errorf("a topic created without an id gets one: %+v, %v", noid, err)
	}

	// CreatePartitions: compare-and-set on the znode version.
	got.Partitions[2] = []int32{3, 1}
	if err := c.SetAssignment(got); err != nil {
		t.Fatal(err)
	}
	fired(t, changed, "assignment watch after partitions were added")
	if err := c.SetAssignment(got); !errors.Is(err, zkmeta.ErrBadVersion) {
		t.Fatalf("SetAssignment at a stale version: %v, want ErrBadVersion", err)
	}
	if now, err := c.Assignment("orders"); err != nil || now.Version != 1 || len(now.Partitions) != 3 {
		t.Fatalf("after growth: %+v, %v", now, err)
	}
	if _, err := c.Assignment("nope"); !errors.Is(err, zkmeta.ErrNoNode) {
		t.Errorf("Assignment of a missing topic: %v, want ErrNoNode", err)
	}

	// Deletion: the admin path marks, the controller deletes.
	marked, markChanged, err := c.WatchDeleteTopics()
	if err != nil || len(marked) != 0 {
		t.Fatalf("WatchDeleteTopics = %v, %v", marked, err)
	}
	if err := c.MarkTopicForDeletion("orders"); err != nil {
		t.Fatal(err)
	}
	fired(t, markChanged, "deletion marker")
	if err := c.MarkTopicForDeletion("orders"); !errors.Is(err, zkmeta.ErrNodeExists) {
		t.Errorf("marking twice: %v, want ErrNodeExists", err)
	}
	if err := c.MarkTopicForDeletion("nope"); !errors.Is(err, zkmeta.ErrNoNode) {
		t.Errorf("marking a missing topic: %v, want ErrNoNode", err)
	}
	if err := c.CreateTopic(a, nil); !errors.Is(err, zkmeta.ErrNodeExists) {
		t.Errorf("creating a topic marked for deletion: %v, want ErrNodeExists", err)
	}
	marked, _, err = c.WatchDeleteTopics()
	if err != nil || !slices.Equal(marked, []string{"orders"}) {
		t.Fatalf("WatchDeleteTopics = %v, %v", marked, err)
	}

	won, epoch, ver, err := c.ElectController(1, time.Now())
	if err != nil || !won {
		t.Fatal(won, err)
	}
	tp := zkmeta.TopicPartition{Topic: "orders", Partition: 0}
	if _, err := c.WritePartitionStates(ver, []zkmeta.StateWrite{{TP: tp, Create: true, State: zkmeta.PartitionState{Leader: 1, ControllerEpoch: epoch, ISR: []int32{1, 2}}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteTopic(ver, "orders"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{zkmeta.TopicPath("orders"), zkmeta.ConfigPath(zkmeta.ConfigTopics, "orders"), zkmeta.DeleteTopicPath("orders")} {
		if exists(t, c, p) {
			t.Errorf("%s left after DeleteTopic", p)
		}
	}
	if err := c.DeleteTopic(ver, "orders"); err != nil {
		t.Errorf("DeleteTopic again (a controller that failed over halfway): %v", err)
	}
	names, err = c.Topics()
	if err != nil || !slices.Equal(names, []string{"noid"}) {
		t.Errorf("Topics = %v, %v", names, err)
	}

}

func TestRemoveDeletionMarker(t *testing.T) {
	c := newClient(t)
	if err := c.EnsurePersistentPaths(); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic(zkmeta.TopicAssignment{Name: "t", Partitions: map[int32][]int32{0: {1}}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.MarkTopicForDeletion("t"); err != nil {
		t.Fatal(err)
	}
	_, _, ver, err := c.ElectController(1, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveDeletionMarker(ver, "t"); err != nil {
		t.Fatal(err)
	}
	if exists(t, c, zkmeta.DeleteTopicPath("t")) || !exists(t, c, zkmeta.TopicPath("t")) {
		t.Error("RemoveDeletionMarker removed the wrong thing")
	}
	if err := c.RemoveDeletionMarker(ver, "t"); err != nil {
		t.Errorf("removing a missing marker: %v", err)
	}
}

func TestTopicIDStrings(t *testing.T) {
	id, err := zkmeta.ParseTopicID("UaDBsRpES1GVlTNRDbYzDg")
	if err != nil || id.String() != "UaDBsRpES1GVlTNRDbYzDg" {
		t.Fatalf("%v %v", id, err)
	}
	if _, err := zkmeta.ParseTopicID("short"); err == nil {
		t.Error("a short id parsed")
	}
	if (zkmeta.TopicID{}).String() != "AAAAAAAAAAAAAAAAAAAAAA" {
		t.Error("zero id string")
	}
}
