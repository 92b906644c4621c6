package controller

import "github.com/twmb/franz-go/pkg/kmsg"

// Topic deletion, as Kafka's TopicDeletionManager: a topic marked in
// /admin/delete_topics is queued; its replicas are stopped and told to
// delete (StopReplica delete=true); when every replica has answered
// success the topic's znodes go. A replica on a dead broker, or one that
// answered an error, makes the topic ineligible: deletion waits until one
// of its brokers comes back (or a new controller starts).

type delState uint8

const (
	replicaDeletionStarted delState = iota + 1
	replicaDeletionSuccessful
	replicaDeletionIneligible
)

type replicaKey struct {
	tp     TopicPartition
	broker int32
}

type deletions struct {
	queued     map[string]bool // topicsToBeDeleted
	started    map[string]bool // topicsWithDeletionStarted
	ineligible map[string]bool // topicsIneligibleForDeletion
	replicas   map[replicaKey]delState
}

func newDeletions() deletions {
	return deletions{
		queued: map[string]bool{}, started: map[string]bool{},
		ineligible: map[string]bool{}, replicas: map[replicaKey]delState{},
	}
}

func (d *deletions) setReplica(tp TopicPartition, b int32, s delState) {
	d.replicas[replicaKey{tp, b}] = s
}

func (d *deletions) forget(name string) {
	delete(d.queued, name)
	delete(d.started, name)
	delete(d.ineligible, name)
	for k := range d.replicas {
		if k.tp.Topic == name {
			delete(d.replicas, k)
		}
	}
}

// DeletionRequested is /admin/delete_topics changing (processTopicDeletion):
// names is every marker present.
func (c *Core) DeletionRequested(names []string) Effects {
	c.begin()
	var queue []string
	for _, n := range names {
		if c.topics[n] == nil {
			c.fx.RemoveMarkers = append(c.fx.RemoveMarkers, n)
		} else {
			queue = append(queue, n)
		}
	}
	if !c.cfg.DeleteTopicEnable {
		c.fx.RemoveMarkers = append(c.fx.RemoveMarkers, queue...)
		return c.end()
	}
	for _, n := range queue {
		c.del.queued[n] = true
		c.haltDeletionIfReassigning(n, false)
	}
	c.resumeDeletions()
	return c.end()
}

// StopReplicaAnswered hands the core broker's answer to a StopReplica
// request the core asked for. Only answers about replicas the request
// told to delete matter (as Kafka's callback): the answer to the
// delete=false request sent just before says nothing about deletion.
func (c *Core) StopReplicaAnswered(broker int32, req *kmsg.StopReplicaRequest, resp *kmsg.StopReplicaResponse) Effects {
	c.begin()
	deleting := map[TopicPartition]bool{}
	for _, t := range req.Topics {
		for _, ps := range t.PartitionStates {
			if ps.Delete {
				deleting[TopicPartition{t.Topic, ps.Partition}] = true
			}
		}
	}
	var failed, done []replica
	for _, pe := range resp.Partitions {
		tp := TopicPartition{pe.Topic, pe.Partition}
		p := c.parts[tp]
		if p == nil || !deleting[tp] || !c.del.queued[tp.Topic] || c.del.replicas[replicaKey{tp, broker}] != replicaDeletionStarted {
			continue
		}
		if resp.ErrorCode != 0 || pe.ErrorCode != 0 {
			failed = append(failed, replica{p, broker})
		} else {
			done = append(done, replica{p, broker})
		}
	}
	if len(failed) > 0 {
		c.failReplicaDeletion(failed)
	}
	if len(done) > 0 {
		for _, r := range done {
			c.del.setReplica(r.p.tp, r.broker, replicaDeletionSuccessful)
		}
		c.resumeDeletions()
	}
	return c.end()
}

func (c *Core) initDeletions(deleting []string) {
	for _, n := range deleting {
		if c.topics[n] == nil || !c.cfg.DeleteTopicEnable {
			c.fx.RemoveMarkers = append(c.fx.RemoveMarkers, n)
			continue
		}
		c.del.queued[n] = true
		// A new controller does not know what the old one sent: the
		// whole deletion starts again, and waits if a replica is offline.
		for _, p := range c.topics[n].parts {
			for _, r := range p.replicas {
				if !c.online(r) {
					c.del.ineligible[n] = true
				}
			}
		}
	}
}

func (c *Core) failReplicaDeletion(rs []replica) {
	if !c.cfg.DeleteTopicEnable {
		return
	}
	for _, r := range rs {
		if c.del.queued[r.p.tp.Topic] {
			c.del.setReplica(r.p.tp, r.broker, replicaDeletionIneligible)
			c.del.ineligible[r.p.tp.Topic] = true
		}
	}
	c.resumeDeletions()
}

func (c *Core) resumeDeletionFor(topics []string) {
	resume := false
	for _, t := range topics {
		if c.del.queued[t] {
			delete(c.del.ineligible, t)
			resume = true
		}
	}
	if resume {
		c.resumeDeletions()
	}
}

func (c *Core) replicaStates(t *topic) (allIn, anyIn func(delState) bool) {
	allIn = func(s delState) bool {
		for _, p := range t.parts {
			for _, r := range p.replicas {
				if c.del.replicas[replicaKey{p.tp, r}] != s {
					return false
				}
			}
		}
		return true
	}
	anyIn = func(s delState) bool {
		for _, p := range t.parts {
			for _, r := range p.replicas {
				if c.del.replicas[replicaKey{p.tp, r}] == s {
					return true
				}
			}
		}
		return false
	}
	return allIn, anyIn
}

// resumeDeletions is Kafka's resumeDeletions: finish topics whose
// replicas are all deleted, retry replicas that failed once nothing is
// in flight, and start the topics that are eligible.
func (c *Core) resumeDeletions() {
	var retry, start []string
	for _, name := range sortedKeys(c.del.queued) {
		t := c.topics[name]
		allIn, anyIn := c.replicaStates(t)
		if allIn(replicaDeletionSuccessful) {
			c.completeDeleteTopic(name)
			continue
		}
		inProgress := anyIn(replicaDeletionStarted)
		if !inProgress && anyIn(replicaDeletionIneligible) {
			retry = append(retry, name)
		}
		if !inProgress && !c.del.ineligible[name] {
			start = append(start, name)
		}
	}
	if len(retry) > 0 {
		// Ineligible replicas go back to OfflineReplica: stopped again.
		for _, name := range retry {
			for _, p := range c.topics[name].parts {
				for _, r := range p.replicas {
					if c.del.replicas[replicaKey{p.tp, r}] == replicaDeletionIneligible {
						delete(c.del.replicas, replicaKey{p.tp, r})
						c.addStopReplica(r, p, false)
					}
				}
			}
		}
		c.flush()
	}
	if len(start) > 0 {
		c.onTopicDeletion(start)
	}
}

func (c *Core) onTopicDeletion(names []string) {
	var parts []*partition
	for _, name := range names {
		t := c.topics[name]
		if !c.del.started[name] {
			for _, p := range t.parts {
				p.phase = phaseNonExistent
			}
			c.del.started[name] = true
		}
		parts = append(parts, t.parts...)
	}
	// Brokers stop serving the topics (leader -2 in their metadata).
	c.sendUpdateMetadata(c.liveIDs(), parts)

	// onPartitionDeletion: dead replicas fail at once; live ones not yet
	// deleted are stopped, then told to delete.
	var ineligible []string
	var retry []replica
	for _, name := range names {
		dead := false
		for _, p := range c.topics[name].parts {
			for _, r := range p.replicas {
				k := replicaKey{p.tp, r}
				switch {
				case !c.online(r):
					c.del.replicas[k] = replicaDeletionIneligible
					dead = true
				case c.del.replicas[k] != replicaDeletionSuccessful:
					retry = append(retry, replica{p, r})
				}
			}
		}
		if dead {
			ineligible = append(ineligible, name)
		}
	}
	for _, r := range retry {
		c.addStopReplica(r.broker, r.p, false)
	}
	c.flush()
	for _, r := range retry {
		c.del.setReplica(r.p.tp, r.broker, replicaDeletionStarted)
		c.addStopReplica(r.broker, r.p, true)
	}
	c.flush()
	for _, name := range ineligible {
		c.del.ineligible[name] = true
	}
}

func (c *Core) completeDeleteTopic(name string) {
	c.fx.DeleteTopics = append(c.fx.DeleteTopics, name)
	c.removeTopic(name)
}
