package controller

import "slices"

// TopicsChanged is /brokers/topics or a topic's assignment changing
// (Kafka's processTopicChange and processPartitionModifications): topics
// is every topic's assignment. New topics and new partitions of known
// topics get their first states; topics gone from the list are forgotten.
//
// Kafka restores the assignment of a topic queued for deletion that grew
// partitions; this core ignores the new partitions (the topic is going).
// A topic without an id keeps none: the admin path writes ids.
func (c *Core) TopicsChanged(topics []TopicAssignment) Effects {
	c.begin()
	seen := map[string]bool{}
	var added []*partition
	for _, a := range topics {
		seen[a.Name] = true
		t := c.topics[a.Name]
		if t == nil {
			c.addTopic(a)
			added = append(added, c.topics[a.Name].parts...)
			continue
		}
		if c.del.queued[a.Name] {
			continue
		}
		for _, n := range sortedKeys(a.Partitions) {
			if c.parts[TopicPartition{a.Name, n}] == nil {
				added = append(added, c.addPartition(t, n, a.Partitions[n]))
			}
		}
	}
	for _, name := range sortedKeys(c.topics) {
		if !seen[name] {
			c.removeTopic(name)
		}
	}
	if len(added) > 0 {
		c.onNewPartitionCreation(added)
	}
	return c.end()
}

// onNewPartitionCreation: NewPartition, then straight to OnlinePartition
// (a state znode, LeaderAndIsr with isNew to the ISR).
func (c *Core) onNewPartitionCreation(ps []*partition) {
	ps = slices.Clone(ps)
	slices.SortFunc(ps, func(a, b *partition) int {
		if a.tp.Topic != b.tp.Topic {
			if a.tp.Topic < b.tp.Topic {
				return -1
			}
			return 1
		}
		return int(a.tp.Partition - b.tp.Partition)
	})
	for _, p := range ps {
		p.phase = phaseNew
	}
	c.toOnline(ps, c.offlineElection)
}
