package cluster

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Kafka's own expectation for 5 brokers, 10 partitions, RF 3, start 0
// (AdminRackAwareTest/ReplicationUtils style): leaders round-robin and
// the follower shift moves each time the leaders wrap.
func TestAssignMatchesKafkaWithoutRacks(t *testing.T) {
	brokers := map[int32]string{0: "", 1: "", 2: "", 3: "", 4: ""}
	got, err := Assign(AssignInput{Brokers: brokers, Partitions: 10, ReplicationFactor: 3, FixedStart: 0})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32][]int32{
		0: {0, 1, 2}, 1: {1, 2, 3}, 2: {2, 3, 4}, 3: {3, 4, 0}, 4: {4, 0, 1},
		5: {0, 2, 3}, 6: {1, 3, 4}, 7: {2, 4, 0}, 8: {3, 0, 1}, 9: {4, 1, 2},
	}
	for p, w := range want {
		if !slices.Equal(got[p], w) {
			t.Errorf("partition %d: %v, want %v", p, got[p], w)
		}
	}
}

// With racks, no partition has two replicas in one rack while another
// rack has none, and every broker leads about as many partitions.
func TestAssignSpreadsOverRacks(t *testing.T) {
	brokers := map[int32]string{0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "c"}
	got, err := Assign(AssignInput{Brokers: brokers, Partitions: 12, ReplicationFactor: 3, FixedStart: -1, Rand: rand.New(rand.NewPCG(1, 2))})
	if err != nil {
		t.Fatal(err)
	}
	leaders := make(map[int32]int)
	for p, rs := range got {
		racks := map[string]bool{}
		for _, b := range rs {
			racks[brokers[b]] = true
		}
		if len(racks) != 3 || len(rs) != 3 {
			t.Errorf("partition %d: replicas %v span racks %v", p, rs, racks)
		}
		leaders[rs[0]]++
	}
	for b, n := range leaders {
		if n != 2 {
			t.Errorf("broker %d leads %d partitions, want 2 (%v)", b, n, got)
		}
	}
}

func TestAssignRefusesWhatKafkaRefuses(t *testing.T) {
	for _, in := range []AssignInput{
		{Brokers: map[int32]string{0: "", 1: ""}, Partitions: 1, ReplicationFactor: 3, FixedStart: 0},
		{Brokers: map[int32]string{0: "a", 1: ""}, Partitions: 1, ReplicationFactor: 1, FixedStart: 0},
		{Brokers: map[int32]string{0: ""}, Partitions: 0, ReplicationFactor: 1, FixedStart: 0},
	} {
		if got, err := Assign(in); err == nil {
			t.Errorf("%+v assigned %v", in, got)
		}
	}
}

// Growing a topic continues the pattern from its existing partitions.
func TestAssignContinuesAGrownTopic(t *testing.T) {
	brokers := map[int32]string{1: "", 2: "", 3: ""}
	got, err := Assign(AssignInput{Brokers: brokers, Partitions: 2, ReplicationFactor: 2, FixedStart: 0, StartPartition: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[3] == nil || got[4] == nil || got[3][0] != 1 || got[4][0] != 2 {
		t.Fatalf("grown assignment %v", got)
	}
}
