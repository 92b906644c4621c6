package cluster

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
)

// ErrNotAllRacks is Assign's error when some brokers have a rack and some
// do not: Kafka refuses to guess, and so does samsa.
var ErrNotAllRacks = errors.New("not all brokers have rack information for replica rack aware assignment")

// AssignInput is what Assign spreads replicas over.
type AssignInput struct {
	Brokers           map[int32]string // live broker id → rack ("" = none)
	Partitions        int32            // how many to assign
	ReplicationFactor int16
	// FixedStart, when >= 0, is the index (in the broker list) of the
	// first partition's leader and the replica shift; -1 draws both from
	// Rand. StartPartition is the first partition id assigned (growing a
	// topic starts after its last one).
	FixedStart     int
	StartPartition int32
	Rand           *rand.Rand
}

// Assign is Kafka's replica assignment (AdminUtils.assignReplicasToBrokers):
// leaders round-robin over the brokers from a random start, followers
// shifted so that the replicas of consecutive partitions land on
// different brokers; with racks, over a rack-alternating broker list and
// never two replicas of a partition in one rack while a rack has none.
func Assign(in AssignInput) (map[int32][]int32, error) {
	n := len(in.Brokers)
	switch {
	case in.ReplicationFactor <= 0:
		return nil, fmt.Errorf("replication factor must be larger than 0")
	case int(in.ReplicationFactor) > n:
		return nil, fmt.Errorf("replication factor: %d larger than available brokers: %d", in.ReplicationFactor, n)
	case in.Partitions <= 0:
		return nil, fmt.Errorf("number of partitions must be larger than 0")
	}
	withRack := 0
	for _, r := range in.Brokers {
		if r != "" {
			withRack++
		}
	}
	if withRack > 0 && withRack < n {
		return nil, ErrNotAllRacks
	}
	draw := func() int {
		if in.FixedStart >= 0 {
			return in.FixedStart
		}
		return in.Rand.IntN(n)
	}
	if withRack == 0 {
		return assignUnaware(slices.Sorted(maps.Keys(in.Brokers)), in, draw(), draw()), nil
	}
	return assignRackAware(in, draw(), draw()), nil
}

func assignUnaware(brokers []int32, in AssignInput, start, shift int) map[int32][]int32 {
	n := len(brokers)
	out := make(map[int32][]int32, in.Partitions)
	p := max(0, in.StartPartition)
	for range in.Partitions {
		if p > 0 && int(p)%n == 0 {
			shift++
		}
		first := (int(p) + start) % n
		replicas := []int32{brokers[first]}
		for j := range int(in.ReplicationFactor) - 1 {
			replicas = append(replicas, brokers[replicaIndex(first, shift, j, n)])
		}
		out[p] = replicas
		p++
	}
	return out
}

func assignRackAware(in AssignInput, start, shift int) map[int32][]int32 {
	arranged := rackAlternated(in.Brokers)
	n := len(arranged)
	numRacks := len(racksOf(in.Brokers))
	out := make(map[int32][]int32, in.Partitions)
	p := max(0, in.StartPartition)
	for range in.Partitions {
		if p > 0 && int(p)%n == 0 {
			shift++
		}
		first := (int(p) + start) % n
		leader := arranged[first]
		replicas := []int32{leader}
		racks := map[string]bool{in.Brokers[leader]: true}
		used := map[int32]bool{leader: true}
		k := 0
		for range int(in.ReplicationFactor) - 1 {
			for {
				b := arranged[replicaIndex(first, shift*numRacks, k, n)]
				k++
				r := in.Brokers[b]
				if (!racks[r] || len(racks) == numRacks) && (!used[b] || len(used) == n) {
					replicas = append(replicas, b)
					racks[r], used[b] = true, true
					break
				}
			}
		}
		out[p] = replicas
		p++
	}
	return out
}

func replicaIndex(first, shift, j, n int) int {
	s := 1 + (shift+j)%(n-1)
	return (first + s) % n
}

func racksOf(brokers map[int32]string) []string {
	set := make(map[string]bool)
	for _, r := range brokers {
		set[r] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// rackAlternated lists the brokers taking one from each rack in turn
// (racks and the brokers of each in sorted order), so that consecutive
// entries sit in different racks.
func rackAlternated(brokers map[int32]string) []int32 {
	byRack := make(map[string][]int32)
	for _, id := range slices.Sorted(maps.Keys(brokers)) {
		byRack[brokers[id]] = append(byRack[brokers[id]], id)
	}
	racks := racksOf(brokers)
	out := make([]int32, 0, len(brokers))
	for i := 0; len(out) < len(brokers); i = (i + 1) % len(racks) {
		if q := byRack[racks[i]]; len(q) > 0 {
			out = append(out, q[0])
			byRack[racks[i]] = q[1:]
		}
	}
	return out
}
