package sharegroup

import (
	"context"
	"encoding/base64"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/actors/coordinator"
	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/wire/kerr"
)

// ClusterLink is what the share coordinator of a cluster-mode broker
// needs of the cluster: its own id, the state topic's settings and a way
// to send a request to another broker over the inter-broker listener.
type ClusterLink struct {
	Me int32
	// Send sends req at exactly version to broker and waits for the
	// answer (or ctx).
	Send func(ctx context.Context, broker int32, req kmsg.Request, version int16) (kmsg.Response, error)
	// StatePartitions, StateReplication and StateMinISR make the state
	// topic (share.coordinator.state.topic.*): the replication factor is
	// lowered to the brokers up when it is made.
	StatePartitions  int32
	StateReplication int16
	StateMinISR      int16
	// Timeout bounds one request to another broker.
	Timeout time.Duration
}

// clusterState is the share coordinator's cluster-mode bookkeeping.
type clusterState struct {
	link *ClusterLink
	// epochs is the data partition leader epoch each share partition's
	// state was loaded at: a share partition is served only while this
	// broker leads its data partition at that epoch.
	epochs map[partKey]int32
	// waiting are the calls parked on a share partition's load, by key.
	waiting map[partKey][]*Call
	// failed marks a load that failed: the next use answers
	// NOT_LEADER_OR_FOLLOWER once (the client retries) and loads again.
	failed map[partKey]bool
	// seen is when each share session was last used: a session idle for
	// longer than the session timeout is closed and its locks released
	// (membership lives on another broker, which cannot tell this one).
	seen map[[2]string]time.Time
	// subscribed are the topics each group's members subscribed to here,
	// kept after they leave: DescribeShareGroupOffsets of an empty group
	// names no topics and means these.
	subscribed map[string]map[string]bool
	// loaders are the state partitions' reads, one at a time each.
	loaders map[int32]*stateLoader
	// writers are the state partitions' appends, one at a time each.
	writers map[int32]*stateWriter
	// The state topic, made on first use.
	topicReady    bool
	topicCreating bool
	topicWaiters  []func(error)
}

func newClusterState(l *ClusterLink) *clusterState {
	return &clusterState{link: l, epochs: map[partKey]int32{}, waiting: map[partKey][]*Call{},
		failed: map[partKey]bool{}, seen: map[[2]string]time.Time{}, writers: map[int32]*stateWriter{}, loaders: map[int32]*stateLoader{}, subscribed: map[string]map[string]bool{}}
}

// StatePartitionFor is the partition of the state topic (n partitions)
// that keeps a share partition's snapshots: Kafka's share coordinator
// hashes the key "group:topicId:partition" the same way, with Java's
// String.hashCode and Utils.abs (group.PartitionFor). The topic id is
// written as Kafka's Uuid.toString does (URL-safe base64, no padding).
func StatePartitionFor(groupID string, tp TopicPartition, n int32) int32 {
	return group.PartitionFor(groupID+":"+base64.RawURLEncoding.EncodeToString(tp.Topic[:])+":"+strconv.Itoa(int(tp.Partition)), n)
}

// view is the controller's latest picture of the cluster, or nil.
func (a *coordinatorActor) view() *cluster.View {
	if a.env.Cluster == nil {
		return nil
	}
	return a.env.Cluster.Load()
}

// coordinates reports whether this broker is group's coordinator: the
// leader of its __consumer_offsets partition, where FindCoordinator sends
// the group's members. Alone it always is.
func (a *coordinatorActor) coordinates(groupID string) kerr.Code {
	if a.cl == nil {
		return kerr.None
	}
	v := a.view()
	if v == nil {
		return kerr.CoordinatorNotAvailable
	}
	t := v.Topics[coordinator.OffsetsTopic]
	if t == nil || len(t.Partitions) == 0 {
		return kerr.CoordinatorNotAvailable
	}
	p := t.Partition(group.PartitionFor(groupID, int32(len(t.Partitions))))
	if p == nil || p.Leader != a.cl.link.Me {
		return kerr.NotCoordinator
	}
	return kerr.None
}

// leaderEpoch is the leader epoch of tp's data partition when this broker
// leads it, else the code a share request for it is answered with.
func (a *coordinatorActor) leaderEpoch(tp TopicPartition) (int32, kerr.Code) {
	v := a.view()
	if v == nil {
		return 0, kerr.NotLeaderOrFollower
	}
	t, ok := v.TopicByID(tp.Topic)
	if !ok {
		return 0, kerr.UnknownTopicID
	}
	if tp.Partition < 0 || int(tp.Partition) >= len(t.Partitions) {
		return 0, kerr.UnknownTopicOrPartition
	}
	p := t.Partition(tp.Partition)
	if p == nil || p.Leader != a.cl.link.Me {
		return 0, kerr.NotLeaderOrFollower
	}
	return p.LeaderEpoch, kerr.None
}

// servable is what a share request finds of a share partition in
// cluster mode: NONE when this broker leads the data partition (its log
// serving as leader) and the share partition's state is loaded at the
// current leader epoch.
func (a *coordinatorActor) servable(groupID string, tp TopicPartition) kerr.Code {
	if a.cl == nil {
		return kerr.None
	}
	epoch, code := a.leaderEpoch(tp)
	if code != kerr.None {
		return code
	}
	k := partKey{groupID, tp}
	if a.cl.failed[k] {
		delete(a.cl.failed, k)
		return kerr.NotLeaderOrFollower
	}
	if !a.loadedAt(k, epoch) {
		return kerr.NotLeaderOrFollower
	}
	if _, v, c := a.resolve(tp); c != kerr.None || v.Stats().Role != partition.RoleLeader {
		return kerr.NotLeaderOrFollower
	}
	return kerr.None
}

// loadedAt reports whether share partition k's state was loaded at the
// data partition's leader epoch epoch.
func (a *coordinatorActor) loadedAt(k partKey, epoch int32) bool {
	e, ok := a.cl.epochs[k]
	return ok && e == epoch
}

// topicShape is a topic's id and partition count (-1: no such topic),
// from the cluster view in cluster mode (this broker may have no replica
// of it), else from the routing table.
func (a *coordinatorActor) topicShape(name string) ([16]byte, int) {
	if v := a.view(); v != nil {
		if t := v.Topics[name]; t != nil {
			return t.ID, len(t.Partitions)
		}
		return [16]byte{}, -1
	}
	if t := a.env.Routes.Load().Topics[name]; t != nil {
		return t.ID, len(t.Partitions)
	}
	return [16]byte{}, -1
}

// clusterTopics is the routing table for assignment in cluster mode:
// every topic of the cluster, whether or not this broker has a replica.
func clusterTopics(v *cluster.View) map[string]TopicInfo {
	out := make(map[string]TopicInfo, len(v.Topics))
	for name, t := range v.Topics {
		out[name] = TopicInfo{ID: t.ID, Partitions: int32(len(t.Partitions))}
	}
	return out
}

// onClusterTick forgets what this broker no longer owns: groups it stopped
// coordinating (their members rejoin at the new coordinator), share
// partitions whose data partition it stopped leading (the new leader
// loads their state), and share sessions idle past the session timeout.
func (a *coordinatorActor) onClusterTick(now time.Time) {
	for id := range a.groups {
		if a.coordinates(id) == kerr.NotCoordinator {
			delete(a.groups, id)
			delete(a.settings, id)
		}
	}
	for k := range a.parts {
		if epoch, code := a.leaderEpoch(k.tp); code != kerr.None || !a.loadedAt(k, epoch) {
			delete(a.parts, k)
			delete(a.cl.epochs, k)
		}
	}
	for key, at := range a.cl.seen {
		if now.Sub(at) > a.cfg.SessionTimeout {
			delete(a.cl.seen, key)
			a.releaseMember(key[0], key[1])
		}
	}
}

// remember notes the topics a member of groupID subscribes to.
func (c *clusterState) remember(groupID string, topics []string) {
	if len(topics) == 0 {
		return
	}
	m := c.subscribed[groupID]
	if m == nil {
		m = map[string]bool{}
		c.subscribed[groupID] = m
	}
	for _, t := range topics {
		m[t] = true
	}
}
