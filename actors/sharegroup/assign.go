package sharegroup

import (
	"slices"
)

// This file is Kafka's SimpleAssignor for share groups (KIP-932, as
// Kafka 4.1 has it): partitions are spread over the members, and when
// members outnumber partitions a partition is shared by several members
// (the share partitions keep one record from two members at once).
//
//   - Sharing: each partition is given to ceil(members/partitions)
//     members, at least one.
//   - Balance: the sharing times the partitions is dealt over the members
//     in order, so two members' counts differ by at most one.
//   - Stickiness: a member keeps what it had as far as balance allows;
//     only partitions above a member's count or shared by too many move.
//
// A homogeneous group (every member subscribes to the same topics)
// balances all its partitions together; a heterogeneous one balances
// each topic over the members subscribing to it. Members are taken in
// member-id order and partitions in (topic id, partition) order (Kafka
// walks hash maps), so an assignment is a function of its input.

// topicPartition is one partition as the assignor counts it.
type topicPartition struct {
	topic     [16]byte
	partition int32
}

func compareTopicPartition(a, b topicPartition) int {
	if c := slices.Compare(a.topic[:], b.topic[:]); c != 0 {
		return c
	}
	return int(a.partition) - int(b.partition)
}

// AssignShares computes the target assignment of a share group:
// subscribed is each member's topics, previous each member's last target
// (nil for a new member), topics the topics that exist.
func AssignShares(subscribed map[string][]string, previous map[string]Assignment, topics map[string]TopicInfo) map[string]Assignment {
	ids := make([]string, 0, len(subscribed))
	for id := range subscribed {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make(map[string]Assignment, len(ids))
	for _, id := range ids {
		out[id] = Assignment{}
	}
	if len(ids) == 0 {
		return out
	}
	// Each member's topics as ids, only those that exist with partitions.
	subs := make([][][16]byte, len(ids))
	for i, id := range ids {
		for _, name := range sorted(subscribed[id]) {
			if t, ok := topics[name]; ok && t.Partitions > 0 {
				subs[i] = append(subs[i], t.ID)
			}
		}
		slices.SortFunc(subs[i], func(a, b [16]byte) int { return slices.Compare(a[:], b[:]) })
	}
	partitions := map[[16]byte]int32{}
	for _, t := range topics {
		partitions[t.ID] = t.Partitions
	}
	old := make([][]topicPartition, len(ids))
	for i, id := range ids {
		for topic, ps := range previous[id] {
			for _, p := range ps {
				old[i] = append(old[i], topicPartition{topic, p})
			}
		}
		slices.SortFunc(old[i], compareTopicPartition)
	}
	give := func(members []int, topicIDs [][16]byte, homogeneous bool) {
		var parts []topicPartition
		for _, t := range topicIDs {
			for p := range partitions[t] {
				parts = append(parts, topicPartition{t, p})
			}
		}
		kept := make([][]topicPartition, len(members))
		for k, i := range members {
			for _, tp := range old[i] {
				if slices.Contains(topicIDs, tp.topic) && tp.partition < partitions[tp.topic] {
					kept[k] = append(kept[k], tp)
				}
			}
		}
		for k, got := range balanceShares(parts, kept, homogeneous) {
			for _, tp := range got {
				out[ids[members[k]]][tp.topic] = append(out[ids[members[k]]][tp.topic], tp.partition)
			}
		}
	}
	homogeneous := true
	for i := range subs {
		homogeneous = homogeneous && slices.Equal(subs[i], subs[0])
	}
	all := make([]int, len(ids))
	for i := range all {
		all[i] = i
	}
	if homogeneous {
		give(all, subs[0], true)
	} else {
		var topicIDs [][16]byte
		for _, s := range subs {
			topicIDs = append(topicIDs, s...)
		}
		slices.SortFunc(topicIDs, func(a, b [16]byte) int { return slices.Compare(a[:], b[:]) })
		for _, t := range slices.Compact(topicIDs) {
			var members []int
			for i, s := range subs {
				if slices.Contains(s, t) {
					members = append(members, i)
				}
			}
			give(members, [][16]byte{t}, false)
		}
	}
	for _, a := range out {
		for t := range a {
			slices.Sort(a[t])
		}
	}
	return out
}

// shareCounts is how widely each partition is shared and how many
// partitions each of n members is given, for p partitions: the sharing
// times p dealt over the members in order, each member's count the
// difference of two ceilings, so counts differ by at most one.
func shareCounts(n, p int) (sharing int, counts []int) {
	counts = make([]int, n)
	if p == 0 || n == 0 {
		return 0, counts
	}
	sharing = (n + p - 1) / p
	total := sharing * p
	ceilDiv := func(a, b int) int { return (a + b - 1) / b }
	for i := range counts {
		counts[i] = ceilDiv(total*(i+1), n) - ceilDiv(total*i, n)
	}
	return sharing, counts
}

// balanceShares assigns parts over the members whose previous holdings
// (within parts) are kept: it revokes what is shared too widely and what
// a member holds above its count (a homogeneous group revokes sharing
// first, preferring overfilled members, as Kafka does; a heterogeneous
// topic trims members first), then gives each partition short of its
// sharing to members short of their count, round robin.
func balanceShares(parts []topicPartition, kept [][]topicPartition, homogeneous bool) [][]topicPartition {
	n := len(kept)
	sharing, counts := shareCounts(n, len(parts))
	holders := make(map[topicPartition][]int, len(parts))
	held := make([][]topicPartition, n)
	for k := range kept {
		for _, tp := range kept[k] {
			if !slices.Contains(held[k], tp) {
				held[k] = append(held[k], tp)
				holders[tp] = append(holders[tp], k)
			}
		}
	}
	overfilled := make([]bool, n)
	for k := range held {
		overfilled[k] = len(held[k]) > counts[k]
	}
	drop := func(k int, tp topicPartition) {
		held[k] = slices.DeleteFunc(held[k], func(x topicPartition) bool { return x == tp })
		holders[tp] = slices.DeleteFunc(holders[tp], func(x int) bool { return x == k })
	}
	revokeOvershared := func(preferOverfilled bool) {
		for _, tp := range parts {
			for _, pass := range []bool{true, false} {
				for _, k := range slices.Clone(holders[tp]) {
					if len(holders[tp]) <= sharing {
						break
					}
					if !preferOverfilled || overfilled[k] == pass {
						drop(k, tp)
					}
				}
				if !preferOverfilled {
					break
				}
			}
		}
	}
	revokeOverfilled := func() {
		for k := range held {
			for len(held[k]) > counts[k] {
				drop(k, held[k][len(held[k])-1])
			}
		}
	}
	if homogeneous {
		revokeOvershared(true)
		revokeOverfilled()
	} else {
		revokeOverfilled()
		revokeOvershared(false)
	}
	var unfilled []int
	for k := range held {
		if len(held[k]) < counts[k] {
			unfilled = append(unfilled, k)
		}
	}
	next := 0
	for _, tp := range parts {
		// Each member short of its count is tried once for this
		// partition; one that holds it already is passed over (Kafka
		// tolerates the slight imbalance that may leave).
		for tries := len(unfilled); tries > 0 && len(holders[tp]) < sharing && len(unfilled) > 0; tries-- {
			next %= len(unfilled)
			k := unfilled[next]
			if slices.Contains(holders[tp], k) {
				next++
				continue
			}
			held[k] = append(held[k], tp)
			holders[tp] = append(holders[tp], k)
			if len(held[k]) >= counts[k] {
				unfilled = slices.Delete(unfilled, next, next+1)
				continue
			}
			next++
		}
	}
	return held
}
