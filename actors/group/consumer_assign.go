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

// assignUniform balances partition counts over the members that may take
// each partition. Partitions stay with their previous owner while the
// owner is under its share; the rest go to the least loaded subscriber;
// then partitions move from the most to the least loaded eligible member
// until no move narrows the gap.
func assignUniform(in assignInput, out map[string]partitions) {
	load := map[string]int{}
	type part struct {
		name string
		id   [16]byte
		n    int32
	}
	var all []part
	for _, name := range in.sortedTopics() {
		t := in.topics[name]
		for n := range t.Partitions {
			all = append(all, part{name, t.ID, n})
		}
	}
	// A member's share: its subscribed partitions spread over everyone
	// who could take them, rounded up.
	share := map[string]int{}
	for _, id := range in.members {
		var s float64
		for name := range in.subscribed[id] {
			if t, ok := in.topics[name]; ok {
				s += float64(t.Partitions) / float64(len(in.subscribers(name)))
			}
		}
		share[id] = int(s + 0.999999)
	}
	prevOwner := map[tpID]string{}
	for _, id := range in.members {
		for t, ps := range in.previous[id] {
			for _, n := range ps {
				prevOwner[tpID{t, n}] = id
			}
		}
	}
	var rest []part
	for _, p := range all {
		if id, ok := prevOwner[tpID{p.id, p.n}]; ok && in.subscribed[id][p.name] && load[id] < share[id] {
			out[id].add(p.id, p.n)
			load[id]++
			continue
		}
		rest = append(rest, p)
	}
	least := func(name string) string {
		best := ""
		for _, id := range in.subscribers(name) {
			if best == "" || load[id] < load[best] {
				best = id
			}
		}
		return best
	}
	owner := map[tpID]string{}
	for id, ps := range out {
		for t, ns := range ps {
			for _, n := range ns {
				owner[tpID{t, n}] = id
			}
		}
	}
	for _, p := range rest {
		if id := least(p.name); id != "" {
			out[id].add(p.id, p.n)
			owner[tpID{p.id, p.n}] = id
			load[id]++
		}
	}
	// Balance: move a partition from a member to an eligible one with at
	// least two fewer.
	for moved := true; moved; {
		moved = false
		for _, p := range all {
			from := owner[tpID{p.id, p.n}]
			to := least(p.name)
			if from == "" || to == "" || load[from]-load[to] < 2 {
				continue
			}
			out[from][p.id] = slices.DeleteFunc(out[from][p.id], func(n int32) bool { return n == p.n })
			if len(out[from][p.id]) == 0 {
				delete(out[from], p.id)
			}
			out[to].add(p.id, p.n)
			owner[tpID{p.id, p.n}] = to
			load[from]--
			load[to]++
			moved = true
		}
	}
}
