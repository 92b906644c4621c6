package sharegroup

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestAssignSharesRandomized grows and shrinks share groups over random
// topics in a seeded order (members join, leave, change subscriptions,
// topics gain partitions) and checks the simple assignor after every
// step: members get only partitions of topics they subscribe to, every
// subscribed partition has a member, sharing and member counts stay in
// Kafka's bounds, the result is a fixed point, and a member keeps its
// partitions as far as balance allows.
func TestAssignSharesRandomized(t *testing.T) {
	forSeeds(t, 300, runAssignSim)
}

func runAssignSim(t *testing.T, rng *rand.Rand) {
	topics := map[string]TopicInfo{}
	var names []string
	for i := range 1 + rng.IntN(4) {
		name := fmt.Sprintf("t%d", i)
		names = append(names, name)
		topics[name] = TopicInfo{ID: [16]byte{byte(i + 1)}, Partitions: int32(1 + rng.IntN(10))}
	}
	// Half the groups subscribe all members alike (homogeneous).
	homogeneous := rng.IntN(2) == 0
	pick := func() []string {
		if homogeneous {
			return slices.Clone(names)
		}
		var s []string
		for _, n := range names {
			if rng.IntN(2) == 0 {
				s = append(s, n)
			}
		}
		if len(s) == 0 || rng.IntN(8) == 0 {
			s = append(s, "missing") // a topic that does not exist
		}
		return s
	}
	subscribed := map[string][]string{}
	targets := map[string]Assignment{}
	nextID := 0
	for step := 0; step < 60; step++ {
		switch op := rng.IntN(10); {
		case op < 4 || len(subscribed) == 0:
			for range 1 + rng.IntN(3) {
				subscribed[fmt.Sprintf("m%03d", nextID)] = pick()
				nextID++
			}
		case op < 7:
			delete(subscribed, randomKey(rng, subscribed))
		case op < 8 && !homogeneous:
			subscribed[randomKey(rng, subscribed)] = pick()
		default:
			n := names[rng.IntN(len(names))]
			ti := topics[n]
			ti.Partitions += int32(1 + rng.IntN(3))
			topics[n] = ti
		}
		previous := map[string]Assignment{}
		for id := range subscribed {
			previous[id] = targets[id]
		}
		got := AssignShares(subscribed, previous, topics)
		checkAssignment(t, step, subscribed, topics, got)
		if again := AssignShares(subscribed, got, topics); !reflect.DeepEqual(again, got) {
			t.Fatalf("step %d: not a fixed point:\n%v\n%v", step, got, again)
		}
		checkSticky(t, step, previous, got)
		targets = got
	}
}

func randomKey(rng *rand.Rand, m map[string][]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys[rng.IntN(len(keys))]
}

// checkAssignment checks one assignment against the subscriptions: each
// scope (all partitions of a homogeneous group, or one topic over its
// subscribers) has every partition held by 1..sharing members and every
// member at most the larger count; with no sharing, counts are exact.
func checkAssignment(t *testing.T, step int, subscribed map[string][]string, topics map[string]TopicInfo, got map[string]Assignment) {
	t.Helper()
	if len(got) != len(subscribed) {
		t.Fatalf("step %d: %d members assigned, %d in the group", step, len(got), len(subscribed))
	}
	byID := map[[16]byte]string{}
	for n, ti := range topics {
		byID[ti.ID] = n
	}
	holders := map[topicPartition]int{}
	for id, a := range got {
		for topic, ps := range a {
			name, ok := byID[topic]
			if !ok || !slices.Contains(subscribed[id], name) {
				t.Fatalf("step %d: %s got topic %q it does not subscribe to (%v)", step, id, name, subscribed[id])
			}
			for i, p := range ps {
				if p < 0 || p >= topics[name].Partitions || (i > 0 && ps[i-1] >= p) {
					t.Fatalf("step %d: %s got partitions %v of %s (%d partitions)", step, id, ps, name, topics[name].Partitions)
				}
				holders[topicPartition{topic, p}]++
			}
		}
	}
	// Homogeneous as the assignor sees it: the same topics that exist.
	existing := func(s []string) []string {
		return slices.DeleteFunc(sorted(s), func(n string) bool { _, ok := topics[n]; return !ok })
	}
	homogeneous := true
	var first []string
	for _, s := range subscribed {
		if first == nil {
			first = existing(s)
		}
		homogeneous = homogeneous && slices.Equal(existing(s), first)
	}
	type scope struct {
		members []string
		topics  []string
	}
	var scopes []scope
	if homogeneous {
		var ids, ts []string
		for id := range subscribed {
			ids = append(ids, id)
		}
		for _, n := range first {
			if topics[n].Partitions > 0 {
				ts = append(ts, n)
			}
		}
		scopes = append(scopes, scope{ids, ts})
	} else {
		for n := range topics {
			var ids []string
			for id, s := range subscribed {
				if slices.Contains(s, n) {
					ids = append(ids, id)
				}
			}
			if len(ids) > 0 {
				scopes = append(scopes, scope{ids, []string{n}})
			}
		}
	}
	for _, s := range scopes {
		partitions := 0
		for _, n := range s.topics {
			partitions += int(topics[n].Partitions)
			for p := range topics[n].Partitions {
				if h := holders[topicPartition{topics[n].ID, p}]; h < 1 {
					t.Fatalf("step %d: %s-%d is subscribed but has no member", step, n, p)
				}
			}
		}
		if partitions == 0 {
			continue
		}
		sharing, counts := shareCounts(len(s.members), partitions)
		most, least := slices.Max(counts), slices.Min(counts)
		for _, n := range s.topics {
			for p := range topics[n].Partitions {
				if h := holders[topicPartition{topics[n].ID, p}]; h > sharing {
					t.Fatalf("step %d: %s-%d shared by %d members, at most %d wanted", step, n, p, h, sharing)
				}
			}
		}
		for _, id := range s.members {
			count := 0
			for _, n := range s.topics {
				count += len(got[id][topics[n].ID])
			}
			if count > most || (sharing == 1 && count < least) {
				t.Fatalf("step %d: %s has %d partitions of %v, want %d..%d (sharing %d, %d members)", step, id, count, s.topics, least, most, sharing, len(s.members))
			}
		}
	}
}

// checkSticky: where no partition was shared before or is now, a member
// keeps as many of its partitions of each topic as it still has of that
// topic (it trims or gains, never swaps).
func checkSticky(t *testing.T, step int, previous, got map[string]Assignment) {
	t.Helper()
	shared := func(as map[string]Assignment) bool {
		seen := map[topicPartition]bool{}
		for _, a := range as {
			for topic, ps := range a {
				for _, p := range ps {
					if seen[topicPartition{topic, p}] {
						return true
					}
					seen[topicPartition{topic, p}] = true
				}
			}
		}
		return false
	}
	if shared(previous) || shared(got) {
		return
	}
	for id, a := range got {
		// Per topic: a heterogeneous group balances topic by topic, so a
		// member may trade partitions of one topic for another's.
		for topic, ps := range previous[id] {
			kept := 0
			for _, p := range ps {
				if slices.Contains(a[topic], p) {
					kept++
				}
			}
			if kept < min(len(ps), len(a[topic])) {
				t.Fatalf("step %d: %s kept %d of its %d partitions of a topic, has %d now: %v -> %v", step, id, kept, len(ps), len(a[topic]), previous[id], a)
			}
		}
	}
}

// TestGroupSpreadsPartitions: through heartbeats, three members of a
// six-partition topic get two partitions each; a fourth member of a
// two-partition topic shares them.
func TestGroupSpreadsPartitions(t *testing.T) {
	now := time.Unix(1000, 0)
	topics := map[string]TopicInfo{"six": {ID: [16]byte{6}, Partitions: 6}, "two": {ID: [16]byte{2}, Partitions: 2}}
	g := NewGroup("g")
	for _, id := range []string{"a", "b", "c"} {
		if r := g.Heartbeat(Heartbeat{MemberID: id, Subscribed: []string{"six"}}, topics, now); r.Code != 0 {
			t.Fatal(r.Code)
		}
	}
	seen := map[int32]string{}
	for _, id := range []string{"a", "b", "c"} {
		r := g.Heartbeat(Heartbeat{MemberID: id, MemberEpoch: g.Members[id].Epoch}, topics, now)
		a := g.Members[id].Assigned
		if r.Code != 0 || len(a[[16]byte{6}]) != 2 {
			t.Fatalf("%s: %v %v", id, r, a)
		}
		for _, p := range a[[16]byte{6}] {
			if seen[p] != "" {
				t.Fatalf("partition %d given to %s and %s", p, seen[p], id)
			}
			seen[p] = id
		}
	}
	g2 := NewGroup("g2")
	for _, id := range []string{"a", "b", "c", "d"} {
		g2.Heartbeat(Heartbeat{MemberID: id, Subscribed: []string{"two"}}, topics, now)
	}
	holders := map[int32]int{}
	for _, id := range []string{"a", "b", "c", "d"} {
		g2.Heartbeat(Heartbeat{MemberID: id, MemberEpoch: g2.Members[id].Epoch}, topics, now)
		ps := g2.Members[id].Assigned[[16]byte{2}]
		if len(ps) != 1 {
			t.Fatalf("%s: %v", id, ps)
		}
		holders[ps[0]]++
	}
	if holders[0] != 2 || holders[1] != 2 {
		t.Fatalf("two partitions over four members: %v", holders)
	}
}
