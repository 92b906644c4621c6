package catalog

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/actors/routing"
	"github.com/samsa-io/samsa/interbroker"
)

// ClusterStore is what the metadata actor needs of ZooKeeper in cluster
// mode (internal/wiring gives it zkmeta's client). Every call may block
// for a ZooKeeper round trip: the actor calls them off its goroutine.
type ClusterStore interface {
	// CreateTopic writes a new topic's config and assignment;
	// ErrTopicExists when the name is taken.
	CreateTopic(name string, id [16]byte, assignment map[int32][]int32, configs map[string]string) error
	// TopicExists says whether /brokers/topics/<name> exists.
	TopicExists(name string) (bool, error)
	// MarkedForDeletion says whether the topic waits in /admin/delete_topics.
	MarkedForDeletion(name string) (bool, error)
	// MarkForDeletion writes /admin/delete_topics/<name> (no error when
	// already marked).
	MarkForDeletion(name string) error
	// SetAssignment replaces a topic's assignment (partitions only
	// grow); ErrReassignmentInProgress while one of its partitions moves.
	SetAssignment(name string, id [16]byte, assignment map[int32][]int32) error
	// PartitionCount is how many partitions /brokers/topics/<name> has.
	PartitionCount(name string) (int32, error)
	// TopicConfig reads /config/topics/<name> (empty when none).
	TopicConfig(name string) (map[string]string, error)
	// SetTopicConfig writes /config/topics/<name> and a change
	// notification.
	SetTopicConfig(name string, configs map[string]string) error
	// ConfigStore: dynamic configs and their change notifications
	// (cluster_configs.go).
	ConfigStore
}

// ErrTopicExists is ClusterStore.CreateTopic's error for a taken name.
var ErrTopicExists = errors.New("catalog: topic exists")

// ClusterMode is the metadata actor's part in a cluster; nil runs the
// broker alone.
type ClusterMode struct {
	Store ClusterStore
	// View is the published cluster view (the actor owns updates).
	View *cluster.Table
	// Listener is the listener whose endpoints clients are given.
	Listener string
	// BrokerEpoch is this broker's registration epoch (its
	// /brokers/ids znode's czxid), set once registered.
	BrokerEpoch atomic.Int64

	randMu sync.Mutex
	rand   *rand.Rand

	// synced is closed once the config watch has read every dynamic
	// config (SCRAM credentials and quotas included) the first time.
	synced     chan struct{}
	syncedOnce sync.Once

	// OnConfigs, if set, hears every dynamic config the config watch
	// reads (*TopicConfigsChanged, *BrokerConfigsChanged), after the
	// metadata actor is sent it: the controller re-runs elections when
	// unclean.leader.election.enable turns on, as Kafka's config handlers
	// tell its controller. Called from the watch's goroutine.
	OnConfigs func(msg any)
	// OnUserConfigs, if set, hears every user's dynamic configs as the
	// config watch reads them (/config/users/<user>, the name as in
	// ZooKeeper): at start every user's, then each changed one's. The
	// SCRAM credentials are there. Called from the watch's goroutine.
	OnUserConfigs func(user string, configs map[string]string)
	// OnQuotaConfigs, if set, hears every client quota entity's dynamic
	// configs as the config watch reads them: entityType is "users",
	// "clients" or "ips", name the path below it as in ZooKeeper
	// ("alice", "alice/clients/app", "<default>"). At start every
	// entity's, then each changed one's. Called from the watch's
	// goroutine.
	OnQuotaConfigs func(entityType, name string, configs map[string]string)
	// InterBroker secures this broker's connections to the controller
	// (AllocateProducerIds), as the inter-broker listener asks.
	InterBroker interbroker.Security

	links clusterLinks // cluster_links.go
}

// NewClusterMode makes the cluster part; seed seeds replica assignment.
func NewClusterMode(store ClusterStore, clusterID, listener string, seed uint64) *ClusterMode {
	return &ClusterMode{Store: store, View: cluster.NewTable(cluster.Empty(clusterID)), Listener: listener,
		rand: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), synced: make(chan struct{})}
}

// ConfigsSynced is closed once the config watch has read all of
// ZooKeeper's dynamic configs the first time: until then a client may
// not find its SCRAM credential (Kafka reads them before it serves).
func (c *ClusterMode) ConfigsSynced() <-chan struct{} { return c.synced }

func (c *ClusterMode) markSynced() { c.syncedOnce.Do(func() { close(c.synced) }) }

// withRand runs f with the assignment randomness (plans are made on
// request goroutines).
func (c *ClusterMode) withRand(f func(*rand.Rand)) {
	c.randMu.Lock()
	defer c.randMu.Unlock()
	f(c.rand)
}

// awaitView asks the metadata actor to close Done once Cond holds for its
// view, or forget it once Ctx ends.
type awaitView struct {
	Ctx  context.Context
	Cond func(*cluster.View) bool
	Done chan struct{}
}

// clusterState is the metadata actor's cluster-mode state.
type clusterState struct {
	view      *cluster.View
	ctrlEpoch int32 // the newest controller epoch seen
	// roled are the replicas a LeaderAndIsr gave a role since this broker
	// started. Only their held leader epochs fence a LeaderAndIsr: one
	// held from before a restart does not, so a restarted broker takes its
	// partitions' current epoch even when the controller did not bump it
	// (it was out of the ISR when it died), as Kafka's broker, whose
	// partitions start at epoch -1 in memory, does.
	roled   map[partKey]bool
	waiters []*awaitView
}

// await registers w, or closes it at once.
func (a *metadataActor) await(w *awaitView) {
	if w.Cond(a.cl.view) {
		close(w.Done)
		return
	}
	a.cl.waiters = append(a.cl.waiters, w)
}

// wake closes the waiters whose condition now holds and drops those
// whose context ended.
func (a *metadataActor) wake() {
	a.cl.waiters = slices.DeleteFunc(a.cl.waiters, func(w *awaitView) bool {
		if w.Ctx.Err() != nil {
			return true
		}
		if w.Cond(a.cl.view) {
			close(w.Done)
			return true
		}
		return false
	})
}

// waitFor sends an awaitView and waits for it (off the actor's
// goroutine); false when ctx ended first.
func waitFor(ctx context.Context, root *actor.RootContext, self *actor.PID, cond func(*cluster.View) bool) bool {
	w := &awaitView{Ctx: ctx, Cond: cond, Done: make(chan struct{})}
	root.Send(self, w)
	select {
	case <-w.Done:
		return true
	case <-ctx.Done():
		return false
	}
}

// publishCluster replaces the routing table in cluster mode: every topic
// of the view (and every topic held here that the view does not know
// yet), with this broker's partition actors where it holds a replica; a
// partition held elsewhere has no actor, which routing answers
// NOT_LEADER_OR_FOLLOWER.
func (a *metadataActor) publishCluster() {
	r := &routing.Routes{ClusterID: a.state.ClusterID(), Topics: make(map[string]*routing.Topic)}
	size := func(name string) int {
		n := 0
		if t := a.cl.view.Topics[name]; t != nil {
			n = len(t.Partitions)
		}
		if t, ok := a.state.Topic(name); ok {
			for _, p := range t.Partitions {
				n = max(n, int(p.Index)+1)
			}
		}
		return n
	}
	add := func(name string, id [16]byte) {
		if _, done := r.Topics[name]; done {
			return
		}
		n := size(name)
		tr := &routing.Topic{Name: name, ID: id, Partitions: make([]*actor.PID, n), Views: make([]*partition.View, n)}
		if t, ok := a.state.Topic(name); ok {
			tr.ID = t.ID
			for _, p := range t.Partitions {
				tr.Partitions[p.Index] = a.parts[partKey{t.ID, p.Index}]
				tr.Views[p.Index] = a.views[partKey{t.ID, p.Index}]
			}
		}
		r.Topics[name] = tr
	}
	for name, t := range a.cl.view.Topics {
		add(name, t.ID)
	}
	for _, t := range a.state.Topics() {
		add(t.Name, t.ID)
	}
	a.env.Routes.Publish(r)
}

// ErrReassignmentInProgress is ClusterStore.SetAssignment's refusal to
// grow a topic one of whose partitions is being reassigned: Kafka refuses
// CreatePartitions then (REASSIGNMENT_IN_PROGRESS), as the controller
// rewrites the topic znode as the reassignment goes.
var ErrReassignmentInProgress = errors.New("a partition reassignment is in progress")

// Followers is the follower fetchers (actors/replica), as the metadata
// actor drives them from LeaderAndIsr and StopReplica.
type Followers interface {
	Follow(p FollowedPartition)
	Unfollow(topic string, partition int32)
}

// ConfigListener hears the dynamic configs as the config watch reads
// them: this broker's (or the cluster default's) and each topic's.
type ConfigListener interface {
	BrokerConfigs(clusterDefault bool, configs map[string]string)
	TopicConfigs(topic string, configs map[string]string)
}

// FollowedPartition is one partition to replicate from its leader.
type FollowedPartition struct {
	Topic       string
	ID          [16]byte
	Partition   int32
	Leader      int32
	LeaderEpoch int32
	PID         *actor.PID
	InSync      bool // this broker is in the ISR the controller gave
}
