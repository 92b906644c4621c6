package routing

import (
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Routes is one published, immutable map from topic to the partition
// actors that own its partitions.
type Routes struct {
	ClusterID string
	Topics    map[string]*Topic
	// GroupConfigs are the groups' own configs (IncrementalAlterConfigs
	// on GROUP resources; single-node mode), by group, read-only: the
	// group coordinators apply consumer.session.timeout.ms and
	// consumer.heartbeat.interval.ms from here.
	GroupConfigs map[string]map[string]string
}

// Topic is one topic's partition actors and views, by partition index. A
// nil actor is a partition whose log is offline.
type Topic struct {
	Name       string
	ID         metadata.TopicID
	Partitions []*actor.PID
	Views      []*partition.View
}

// View returns the published view of a partition, or nil.
func (t *Topic) View(p int32) *partition.View {
	if p < 0 || int(p) >= len(t.Views) {
		return nil
	}
	return t.Views[p]
}

// Partition returns the actor owning topic/partition.
func (r *Routes) Partition(topic string, partition int32) (*actor.PID, bool) {
	pid, code := r.Lookup(topic, partition)
	return pid, code == kerr.None
}

// Lookup finds the actor of topic/partition: an unknown topic or
// partition is UNKNOWN_TOPIC_OR_PARTITION, a known one whose actor is gone
// (its log cannot open, or it gave up) NOT_LEADER_OR_FOLLOWER.
func (r *Routes) Lookup(topic string, partition int32) (*actor.PID, kerr.Code) {
	t := r.Topics[topic]
	switch {
	case t == nil || partition < 0 || int(partition) >= len(t.Partitions):
		return nil, kerr.UnknownTopicOrPartition
	case t.Partitions[partition] == nil:
		return nil, kerr.NotLeaderOrFollower
	}
	return t.Partitions[partition], kerr.None
}

// Table holds the current Routes.
type Table struct{ cur atomic.Pointer[Routes] }

// NewTable starts with no topics.
func NewTable() *Table {
	t := &Table{}
	t.cur.Store(&Routes{Topics: map[string]*Topic{}})
	return t
}

// Load returns the current routes.
func (t *Table) Load() *Routes { return t.cur.Load() }

// Publish replaces the current routes.
func (t *Table) Publish(r *Routes) { t.cur.Store(r) }
