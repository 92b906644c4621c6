package group

import (
	"slices"
)

// The broker-side assignors of KIP-848 (group.consumer.assignors).
const (
	// AssignorUniform spreads every subscribed partition evenly over the
	// members subscribed to it, keeping partitions where they are when
	// that stays balanced.
	AssignorUniform = "uniform"
	// AssignorRange gives each member subscribed to a topic a contiguous
	// range of its partitions, members in id order (co-partitioned
	// topics land together).
	AssignorRange = "range"
)

// assignInput is what an assignor sees: the members (ids sorted), the
// topics each subscribes to (resolved names), the topics' metadata and
// the previous target (for stickiness).
type assignInput struct {
	members    []string
	subscribed map[string]map[string]bool
	topics     map[string]TopicMeta
	previous   map[string]partitions
}

// assign computes a target assignment with the named assignor (uniform
// when the name is unknown; the caller has validated it).
func assign(name string, in assignInput) map[string]partitions {
	out := make(map[string]partitions, len(in.members))
	for _, id := range in.members {
		out[id] = partitions{}
	}
	if len(in.members) == 0 {
		return out
	}
	if name == AssignorRange {
		assignRange(in, out)
	} else {
		assignUniform(in, out)
	}
	return out
}

// subscribers lists the members subscribed to topic, in id order.
func (in assignInput) subscribers(topic string) []string {
	var ids []string
	for _, id := range in.members {
		if in.subscribed[id][topic] {
			ids = append(ids, id)
		}
	}
	return ids
}

func (in assignInput) sortedTopics() []string {
	names := make([]string, 0, len(in.topics))
	for n := range in.topics {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func assignRange(in assignInput, out map[string]partitions) {
	for _, name := range in.sortedTopics() {
		t := in.topics[name]
		subs := in.subscribers(name)
		if len(subs) == 0 {
			continue
		}
		per, extra := int(t.Partitions)/len(subs), int(t.Partitions)%len(subs)
		next := int32(0)
		for i, id := range subs {
			n := per
			if i < extra {
				n++
			}
			for range n {
				out[id].add(t.ID, next)
				next++
			}
		}
	}
}

// uniformPart is one partition the uniform assignor places.
type uniformPart struct {
	name string
	id   [16]byte
	n    int32
}

// assignUniform balances partition counts over the members that may take
// each partition, moving as few as it can (Kafka's uniform assignor):
// partitions only go from members above their share to members below
// it, so no member gives partitions up and takes others in the same
// epoch (which would make it wait for a second member's revocation).
func assignUniform(in assignInput, out map[string]partitions) {
	var all []uniformPart
	for _, name := range in.sortedTopics() {
		t := in.topics[name]
		for n := range t.Partitions {
			all = append(all, uniformPart{name, t.ID, n})
		}
	}
	if in.homogeneous() {
		assignUniformQuota(in, out, all)
		return
	}
	assignUniformGeneral(in, out, all)
}

// homogeneous reports whether every member subscribes to the same
// existing topics.
func (in assignInput) homogeneous() bool {
	var first map[string]bool
	for i, id := range in.members {
		set := map[string]bool{}
		for name := range in.subscribed[id] {
			if _, ok := in.topics[name]; ok {
				set[name] = true
			}
		}
		if i == 0 {
			first = set
			continue
		}
		if len(set) != len(first) {
			return false
		}
		for name := range set {
			if !first[name] {
				return false
			}
		}
	}
	return true
}

// kept is the partitions of id's previous target it may keep: topics it
// still subscribes to, partitions that still exist, in topic and
// partition order.
func (in assignInput) kept(id string, all []uniformPart) []uniformPart {
	prev := in.previous[id]
	var out []uniformPart
	for _, p := range all {
		if in.subscribed[id][p.name] && prev.has(p.id, p.n) {
			out = append(out, p)
		}
	}
	return out
}

// assignUniformQuota is the homogeneous case: with P partitions and M
// members each gets P/M, and P%M of them one more. The extra ones go to
// the members that held the most before, so that a member never drops
// below what it held while another rises above it. Every member keeps
// its previous partitions up to its quota; what is left goes to the
// members under theirs.
func assignUniformQuota(in assignInput, out map[string]partitions, all []uniformPart) {
	total, members := len(all), len(in.members)
	keep := make(map[string][]uniformPart, members)
	for _, id := range in.members {
		keep[id] = in.kept(id, all)
	}
	order := slices.Clone(in.members)
	slices.SortStableFunc(order, func(a, b string) int { return len(keep[b]) - len(keep[a]) })
	quota := make(map[string]int, members)
	for i, id := range order {
		quota[id] = total / members
		if i < total%members {
			quota[id]++
		}
	}
	taken := map[tpID]bool{}
	for _, id := range in.members {
		for _, p := range keep[id][:min(len(keep[id]), quota[id])] {
			out[id].add(p.id, p.n)
			taken[tpID{p.id, p.n}] = true
		}
	}
	next := 0
	for _, id := range in.members {
		for out[id].count() < quota[id] {
			for taken[tpID{all[next].id, all[next].n}] {
				next++
			}
			out[id].add(all[next].id, all[next].n)
			taken[tpID{all[next].id, all[next].n}] = true
		}
	}
}

// assignUniformGeneral is the heterogeneous case. Partitions stay with
// their previous owner while the owner is under its share; the rest go
// to the least loaded subscriber; then, while some member holds two more
// than a member that could take one of its partitions, the widest such
// gap is narrowed by one move (most loaded to least loaded, so partitions
// flow one way).
func assignUniformGeneral(in assignInput, out map[string]partitions, all []uniformPart) {
	load := map[string]int{}
	subscribers := map[string][]string{}
	for _, name := range in.sortedTopics() {
		subscribers[name] = in.subscribers(name)
	}
	// A member's share: its subscribed partitions spread over everyone
	// who could take them, rounded up.
	share := map[string]int{}
	for _, id := range in.members {
		var s float64
		for name := range in.subscribed[id] {
			if t, ok := in.topics[name]; ok {
				s += float64(t.Partitions) / float64(len(subscribers[name]))
			}
		}
		share[id] = int(s + 0.999999)
	}
	owner := map[tpID]string{}
	for _, id := range in.members {
		for _, p := range in.kept(id, all) {
			if load[id] < share[id] {
				out[id].add(p.id, p.n)
				owner[tpID{p.id, p.n}] = id
				load[id]++
			}
		}
	}
	least := func(name string) string {
		best := ""
		for _, id := range subscribers[name] {
			if best == "" || load[id] < load[best] {
				best = id
			}
		}
		return best
	}
	for _, p := range all {
		if _, ok := owner[tpID{p.id, p.n}]; ok {
			continue
		}
		if id := least(p.name); id != "" {
			out[id].add(p.id, p.n)
			owner[tpID{p.id, p.n}] = id
			load[id]++
		}
	}
	for {
		leastOf := make(map[string]string, len(subscribers))
		for name := range subscribers {
			leastOf[name] = least(name)
		}
		var best uniformPart
		gap := 1
		for _, p := range all {
			from, to := owner[tpID{p.id, p.n}], leastOf[p.name]
			if from != "" && to != "" && load[from]-load[to] > gap {
				best, gap = p, load[from]-load[to]
			}
		}
		if gap < 2 {
			return
		}
		from, to := owner[tpID{best.id, best.n}], leastOf[best.name]
		out[from][best.id] = slices.DeleteFunc(out[from][best.id], func(n int32) bool { return n == best.n })
		if len(out[from][best.id]) == 0 {
			delete(out[from], best.id)
		}
		out[to].add(best.id, best.n)
		owner[tpID{best.id, best.n}] = to
		load[from]--
		load[to]++
	}
}
