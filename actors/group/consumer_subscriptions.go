package group

import "regexp"

// subscriptions is every member's resolved subscription and the metadata
// of all the topics subscribed.
type subscriptions struct {
	members map[string]map[string]bool
	topics  map[string]TopicMeta
}

// internalTopics are left out of regex subscriptions, as in Kafka.
var internalTopics = map[string]bool{"__consumer_offsets": true, "__transaction_state": true, "__share_group_state": true}

// resolveSubscriptions resolves every member's topic names and regex
// against topics (nil: against the topics last resolved, for changes that
// come from timers and replays). Topics that do not exist are left out;
// they join the assignment when they appear (the next heartbeat sees it).
func (g *Group) resolveSubscriptions(topics Topics) subscriptions {
	cg := g.cg
	matches := cg.regexMatches(topics)
	if topics == nil {
		topics = TopicMap(cg.topics)
	}
	out := subscriptions{members: map[string]map[string]bool{}, topics: map[string]TopicMeta{}}
	for _, id := range cg.sortedMembers() {
		m := cg.members[id]
		set := map[string]bool{}
		for _, n := range m.topicNames {
			if t, ok := topics.Topic(n); ok && t.Partitions > 0 {
				set[n] = true
				out.topics[n] = t
			}
		}
		if m.regex != nil {
			for _, n := range matches(m) {
				if t, ok := topics.Topic(n); ok && t.Partitions > 0 {
					set[n] = true
					out.topics[n] = t
				}
			}
		}
		out.members[id] = set
	}
	cg.regexes.prune(cg.members)
	return out
}

// TopicsSnapshot is a Topics that names the snapshot it reads: two
// Topics whose Snapshot is the same comparable value list the same
// topics. Regex subscriptions are resolved again only when it changes
// (the shell's topics are republished when a topic is created or
// deleted), as Kafka resolves them again on a new metadata image; a
// Topics without it is resolved at every heartbeat.
type TopicsSnapshot interface {
	Topics
	Snapshot() any
}

// regexCache is what each regex of a group's members matched in one
// topics snapshot.
type regexCache struct {
	snapshot any
	matched  map[string][]string // regex -> matching topic names
}

// regexMatches returns a function giving a member's regex's matching
// topic names in topics: from the cache while topics is the snapshot it
// was filled from, else by matching every topic name (once per regex).
// With nil topics (timers, replays) it matches the topics last resolved,
// and leaves the cache alone.
func (cg *consumerGroup) regexMatches(topics Topics) func(m *cmember) []string {
	var snapshot any
	if ts, ok := topics.(TopicsSnapshot); ok {
		snapshot = ts.Snapshot()
	}
	cached := snapshot != nil
	if cached && cg.regexes.snapshot != snapshot {
		cg.regexes = regexCache{snapshot: snapshot, matched: map[string][]string{}}
	}
	if topics == nil {
		topics = TopicMap(cg.topics)
	}
	var names []string
	return func(m *cmember) []string {
		if got, ok := cg.regexes.matched[*m.regex]; ok && cached {
			return got
		}
		re, err := m.compiledRegex()
		if err != nil {
			return nil
		}
		if names == nil {
			names = topics.Names()
		}
		var out []string
		for _, n := range names {
			if !internalTopics[n] && re.MatchString(n) {
				out = append(out, n)
			}
		}
		if cached {
			cg.regexes.matched[*m.regex] = out
		}
		return out
	}
}

// prune forgets regexes no member uses any more.
func (c *regexCache) prune(members map[string]*cmember) {
	if len(c.matched) == 0 {
		return
	}
	used := map[string]bool{}
	for _, m := range members {
		if m.regex != nil {
			used[*m.regex] = true
		}
	}
	for re := range c.matched {
		if !used[re] {
			delete(c.matched, re)
		}
	}
}

// compiledRegex is the member's regex, anchored to the whole topic name
// as Kafka matches it, compiled once per regex.
func (m *cmember) compiledRegex() (*regexp.Regexp, error) {
	if m.re == nil || m.re.String() != "^(?:"+*m.regex+")$" {
		re, err := regexp.Compile("^(?:" + *m.regex + ")$")
		if err != nil {
			return nil, err
		}
		m.re = re
	}
	return m.re, nil
}

func sameTopics(a, b map[string]TopicMeta) bool {
	if len(a) != len(b) {
		return false
	}
	for n, t := range a {
		if o, ok := b[n]; !ok || o != t {
			return false
		}
	}
	return true
}

// bumpGroupEpoch moves the group to a new epoch and computes its target
// assignment at that epoch; it returns the records of both.
func (g *Group) bumpGroupEpoch(subs subscriptions) []Record {
	cg := g.cg
	cg.epoch++
	cg.topics = subs.topics
	recs := []Record{
		consumerPartitionMetadataRecord(g.id, cg.topics),
		consumerMetadataRecord(g.id, cg.epoch),
	}
	ids := cg.sortedMembers()
	target := assign(g.consumerAssignor(), assignInput{members: ids, subscribed: subs.members, topics: cg.topics, previous: cg.target})
	for _, id := range ids {
		if prev, ok := cg.target[id]; !ok || !prev.equal(target[id]) {
			recs = append(recs, consumerTargetMemberRecord(g.id, id, target[id]))
		}
	}
	cg.target = target
	cg.assignmentEpoch = cg.epoch
	return append(recs, consumerTargetMetadataRecord(g.id, cg.epoch))
}

// consumerAssignor is the assignor the group uses: the one most members
// ask for, else the first of group.consumer.assignors.
func (g *Group) consumerAssignor() string {
	votes := map[string]int{}
	best := ""
	for _, id := range g.cg.sortedMembers() {
		if a := g.cg.members[id].assignor; a != nil {
			votes[*a]++
			if best == "" || votes[*a] > votes[best] {
				best = *a
			}
		}
	}
	if best != "" {
		return best
	}
	return g.cfg.ConsumerAssignors[0]
}
