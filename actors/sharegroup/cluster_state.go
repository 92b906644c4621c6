package sharegroup

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/catalog"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Versions of the requests a share coordinator sends to the leader of a
// state partition on another broker: both still name topics (v13 of
// each names them by id).
const (
	stateProduceVersion = 9
	stateFetchVersion   = 12
)

type (
	// shareLoaded brings back one share partition's snapshot, read from
	// its state partition for the leader epoch epoch.
	shareLoaded struct {
		key   partKey
		epoch int32
		snap  Snapshot
		found bool
		err   error
	}
	topicMade struct{ err error }
)

// prepare parks a ShareFetch or ShareAcknowledge until the share
// partitions it touches are loaded at the data partitions' current leader
// epochs; it reports whether it parked c (the load sends it back to call).
func (a *coordinatorActor) prepare(c *Call) bool {
	var groupID, member string
	var tps []TopicPartition
	switch r := c.Req.Body.(type) {
	case *kmsg.ShareFetchRequest:
		groupID, member = deref(r.GroupID), deref(r.MemberID)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, TopicPartition{t.TopicID, p.Partition})
			}
		}
		if s := a.sessions[[2]string{groupID, member}]; s != nil {
			tps = append(tps, s.Partitions...)
		}
		if r.ShareSessionEpoch == 0 && !c.reread && !a.hasSession(groupID) {
			c.reread = true
			// The group's first session here since all closed: its share
			// partitions are read again, since an admin may have moved
			// or deleted them (Alter/DeleteShareGroupOffsets, on the
			// coordinator, need the group empty) in the meantime.
			for k := range a.cl.epochs {
				if k.group == groupID {
					delete(a.cl.epochs, k)
				}
			}
		}
	case *kmsg.ShareAcknowledgeRequest:
		groupID, member = deref(r.GroupID), deref(r.MemberID)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, TopicPartition{t.TopicID, p.Partition})
			}
		}
	default:
		return false
	}
	a.cl.seen[[2]string{groupID, member}] = a.now()
	parked := false
	for _, tp := range tps {
		epoch, code := a.leaderEpoch(tp)
		k := partKey{groupID, tp}
		if code != kerr.None || a.cl.failed[k] {
			continue // answered per partition
		}
		if a.loadedAt(k, epoch) {
			continue
		}
		_, busy := a.cl.waiting[k] // a load of k is on its way
		switch {
		case !parked:
			// c waits for one load; back in call, it finds the others.
			parked = true
			a.cl.waiting[k] = append(a.cl.waiting[k], c)
		case !busy:
			a.cl.waiting[k] = []*Call{}
		}
		if busy {
			continue
		}
		a.loadShare(k, epoch)
	}
	return parked
}

// hasSession reports whether any member of groupID has a share session
// here.
func (a *coordinatorActor) hasSession(groupID string) bool {
	for key := range a.sessions {
		if key[0] == groupID {
			return true
		}
	}
	return false
}

// onShareLoaded installs a loaded snapshot and serves the calls that
// waited for it.
func (a *coordinatorActor) onShareLoaded(m *shareLoaded) {
	calls := a.cl.waiting[m.key]
	delete(a.cl.waiting, m.key)
	if m.err != nil {
		a.env.Log.Warn("sharegroup: share partition state not loaded", "group", m.key.group, "partition", m.key.tp.Partition, "err", m.err)
		a.cl.failed[m.key] = true
	} else {
		delete(a.parts, m.key)
		delete(a.restored, m.key)
		if m.found {
			a.restored[m.key] = m.snap
		}
		a.cl.epochs[m.key] = m.epoch
	}
	for _, c := range calls {
		a.call(c)
	}
}

// ensureTopic runs fn once the state topic exists, making it on first use
// (share.coordinator.state.topic.* partitions, replication factor and
// min.insync.replicas, compacted); fn runs on the actor's goroutine.
func (a *coordinatorActor) ensureTopic(fn func(error)) {
	if a.cl.topicReady {
		fn(nil)
		return
	}
	if v := a.view(); v != nil && v.Topics[StateTopic] != nil {
		a.cl.topicReady = true
		fn(nil)
		return
	}
	a.cl.topicWaiters = append(a.cl.topicWaiters, fn)
	if a.cl.topicCreating {
		return
	}
	a.cl.topicCreating = true
	rf := a.cl.link.StateReplication
	if v := a.view(); v != nil {
		rf = min(rf, int16(max(1, len(v.Brokers))))
	}
	isr := min(a.cl.link.StateMinISR, rf)
	self, root := a.self, a.root
	a.env.Send(a.meta, &catalog.CreateInternalTopic{
		Name: StateTopic, Partitions: a.cl.link.StatePartitions,
		ReplicationFactor: rf, ReplicationFactorKey: "share.coordinator.state.topic.replication.factor",
		// 100 MiB segments, Kafka's share.coordinator.state.topic.segment.bytes:
		// compaction only cleans closed segments, and loads read what it
		// left.
		Configs: [][2]string{{"cleanup.policy", "compact"}, {"compression.type", "producer"},
			{"min.insync.replicas", strconv.Itoa(int(isr))}, {"segment.bytes", "104857600"}},
		Done: func(_ int32, _ bool, err error) { root.Send(self, &topicMade{err}) },
	})
}

func (a *coordinatorActor) onTopicMade(err error) {
	a.cl.topicCreating = false
	a.cl.topicReady = err == nil
	ws := a.cl.topicWaiters
	a.cl.topicWaiters = nil
	for _, fn := range ws {
		fn(err)
	}
}

// stateLeader is the state topic's partition count, the partition that
// keeps k and its leader.
func (a *coordinatorActor) stateLeader(k partKey) (sp, leader int32, err error) {
	v := a.view()
	if v == nil || v.Topics[StateTopic] == nil {
		return 0, 0, errors.New("the state topic is not in the cluster view")
	}
	t := v.Topics[StateTopic]
	sp = StatePartitionFor(k.group, k.tp, int32(len(t.Partitions)))
	p := t.Partition(sp)
	if p == nil || p.Leader < 0 {
		return sp, 0, fmt.Errorf("state partition %d has no leader", sp)
	}
	return sp, p.Leader, nil
}
