package actors

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/catalog"
	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/wire/batchtest"
	"github.com/samsa-io/samsa/wire/kerr"
)

// memStore is an in-memory ZooKeeper for the broker side of cluster
// mode: what CreateTopics and friends write, kept for the test's
// controller to read.
type memStore struct {
	mu      sync.Mutex
	topics  map[string]map[int32][]int32
	ids     map[string][16]byte
	configs map[string]map[string]string
	marked  map[string]bool
	created chan string // each topic CreateTopic wrote
}

func newMemStore() *memStore {
	return &memStore{topics: map[string]map[int32][]int32{}, ids: map[string][16]byte{}, configs: map[string]map[string]string{}, marked: map[string]bool{}, created: make(chan string, 16)}
}

func (m *memStore) CreateTopic(name string, id [16]byte, a map[int32][]int32, c map[string]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.topics[name]; ok {
		return catalog.ErrTopicExists
	}
	m.topics[name], m.ids[name], m.configs[name] = a, id, c
	m.created <- name
	return nil
}

func (m *memStore) TopicExists(name string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.topics[name]
	return ok, nil
}

func (m *memStore) MarkedForDeletion(name string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.marked[name], nil
}

func (m *memStore) MarkForDeletion(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.marked[name] = true
	return nil
}

func (m *memStore) SetAssignment(name string, _ [16]byte, a map[int32][]int32) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.topics[name]; !ok {
		return errors.New("no such topic")
	}
	m.topics[name] = a
	return nil
}

func (m *memStore) TopicConfig(name string) (map[string]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.configs[name]), nil
}

func (m *memStore) SetTopicConfig(name string, c map[string]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.configs[name] = c
	return nil
}

// The config watch's calls: memStore has no notifications, so the
// watch reads every config once and then waits.
func (m *memStore) EntityConfig(typ, name string) (map[string]string, error) {
	if typ == "topics" {
		return m.TopicConfig(name)
	}
	return map[string]string{}, nil
}

func (m *memStore) SetEntityConfig(typ, name string, c map[string]string) error {
	if typ == "topics" {
		return m.SetTopicConfig(name, c)
	}
	return nil
}

func (m *memStore) EntitiesWithConfig(typ string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if typ != "topics" {
		return nil, nil
	}
	return slices.Sorted(maps.Keys(m.configs)), nil
}

func (m *memStore) ConfigChanges() ([]string, <-chan struct{}, error) {
	return nil, make(chan struct{}), nil
}

func (m *memStore) ConfigChange(string) (string, string, time.Time, error) {
	return "", "", time.Time{}, nil
}

func (m *memStore) DeleteConfigChange(string) error { return nil }

func (m *memStore) assignment(name string) (map[int32][]int32, [16]byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.topics[name], m.ids[name]
}

func startClusterBroker(t *testing.T, id string, store *memStore) *Broker {
	t.Helper()
	cfg, err := config.Load(config.Input{Origin: "test", Values: map[string]string{
		"log.dirs": t.TempDir(), "broker.id": id, "zookeeper.connect": "127.0.0.1:1", "default.replication.factor": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBroker(cfg, nil, Options{Cluster: &ClusterOptions{ClusterID: "test-cluster", Store: store, Seed: 7}})
	if err != nil {
		t.Fatal(err)
	}
	b.SetBrokerEpoch(10)
	t.Cleanup(func() { b.Close(context.Background()) })
	return b
}

// controllerFor plays the controller for one topic: the UpdateMetadata
// and LeaderAndIsr it would send every broker.
func controllerFor(epoch int32, brokers []int32, topic string, id [16]byte, assignment map[int32][]int32, leaderEpoch int32) (*kmsg.UpdateMetadataRequest, *kmsg.LeaderAndISRRequest) {
	um := kmsg.NewPtrUpdateMetadataRequest()
	um.Version, um.ControllerID, um.ControllerEpoch, um.BrokerEpoch = 8, brokers[0], epoch, -1
	for _, b := range brokers {
		lb := kmsg.NewUpdateMetadataRequestLiveBroker()
		lb.ID = b
		lb.Endpoints = []kmsg.UpdateMetadataRequestLiveBrokerEndpoint{{Host: "127.0.0.1", Port: 9000 + b, ListenerName: "PLAINTEXT"}}
		um.LiveBrokers = append(um.LiveBrokers, lb)
	}
	lisr := kmsg.NewPtrLeaderAndISRRequest()
	lisr.Version, lisr.ControllerID, lisr.ControllerEpoch, lisr.BrokerEpoch = 7, brokers[0], epoch, -1
	uts := kmsg.NewUpdateMetadataRequestTopicState()
	uts.Topic, uts.TopicID = topic, id
	lts := kmsg.NewLeaderAndISRRequestTopicState()
	lts.Topic, lts.TopicID = topic, id
	for p := int32(0); p < int32(len(assignment)); p++ {
		r := assignment[p]
		us := kmsg.NewUpdateMetadataRequestTopicPartition()
		us.Partition, us.Leader, us.LeaderEpoch, us.Replicas, us.ISR, us.ControllerEpoch = p, r[0], leaderEpoch, r, r, epoch
		uts.PartitionStates = append(uts.PartitionStates, us)
		ls := kmsg.NewLeaderAndISRRequestTopicPartition()
		ls.Partition, ls.Leader, ls.LeaderEpoch, ls.Replicas, ls.ISR, ls.ControllerEpoch, ls.IsNew = p, r[0], leaderEpoch, r, r, epoch, leaderEpoch == 0
		lts.PartitionStates = append(lts.PartitionStates, ls)
	}
	um.TopicStates = []kmsg.UpdateMetadataRequestTopicState{uts}
	lisr.TopicStates = []kmsg.LeaderAndISRRequestTopicState{lts}
	return um, lisr
}

// Two brokers, a topic created on one of them through the admin path and
// carried out by a (test) controller: each broker leads the partitions
// the controller gave it, refuses writes to the others with
// NOT_LEADER_OR_FOLLOWER, and both answer Metadata for the whole cluster.
func TestClusterModeBrokerSide(t *testing.T) {
	store := newMemStore()
	b1, b2 := startClusterBroker(t, "1", store), startClusterBroker(t, "2", store)
	brokers := []int32{1, 2}
	um, _ := controllerFor(1, brokers, "none", [16]byte{}, nil, 0)
	um.TopicStates = nil
	for _, b := range []*Broker{b1, b2} {
		if r := call(t, b, um).(*kmsg.UpdateMetadataResponse); r.ErrorCode != 0 {
			t.Fatalf("UpdateMetadata: %v", kerr.Code(r.ErrorCode))
		}
	}

	// CreateTopics writes ZooKeeper and waits for the controller.
	create := kmsg.NewPtrCreateTopicsRequest()
	create.Version, create.TimeoutMillis = 7, 30000
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "t", 4, 2
	create.Topics = []kmsg.CreateTopicsRequestTopic{ct}
	answered := make(chan *kmsg.CreateTopicsResponse, 1)
	go func() { answered <- call(t, b1, create).(*kmsg.CreateTopicsResponse) }()
	if name := <-store.created; name != "t" {
		t.Fatalf("created %q", name)
	}
	assignment, id := store.assignment("t")
	if len(assignment) != 4 || len(assignment[0]) != 2 {
		t.Fatalf("assignment written: %v", assignment)
	}
	um, lisr := controllerFor(1, brokers, "t", id, assignment, 0)
	for _, b := range []*Broker{b1, b2} {
		r := call(t, b, lisr).(*kmsg.LeaderAndISRResponse)
		if r.ErrorCode != 0 || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 4 {
			t.Fatalf("LeaderAndIsr: %+v", r)
		}
		for _, p := range r.Topics[0].Partitions {
			if p.ErrorCode != 0 {
				t.Fatalf("LeaderAndIsr partition %d: %v", p.Partition, kerr.Code(p.ErrorCode))
			}
		}
		call(t, b, um)
	}
	resp := <-answered
	if resp.Topics[0].ErrorCode != 0 || resp.Topics[0].TopicID != id {
		t.Fatalf("CreateTopics: %+v", resp.Topics[0])
	}

	now := time.Now().UnixMilli()
	for p := int32(0); p < 4; p++ {
		leader, other := b1, b2
		if assignment[p][0] == 2 {
			leader, other = b2, b1
		}
		// acks=1: the test's controller points the followers at brokers
		// that do not exist, so nothing replicates and acks=all would wait.
		if got := produce(t, leader, 1, "t", p, batchtest.Plain(2, now)); got.ErrorCode != 0 || got.BaseOffset != 0 {
			t.Fatalf("produce to the leader of %d: %v at %d", p, kerr.Code(got.ErrorCode), got.BaseOffset)
		}
		if got := produce(t, other, -1, "t", p, batchtest.Plain(1, now)); got.ErrorCode != kerr.NotLeaderOrFollower.Int16() {
			t.Fatalf("produce to the follower of %d: %v", p, kerr.Code(got.ErrorCode))
		}
	}
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	for _, b := range []*Broker{b1, b2} {
		r := call(t, b, md).(*kmsg.MetadataResponse)
		if len(r.Brokers) != 2 || r.ControllerID != 1 || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 4 {
			t.Fatalf("Metadata: brokers %d, controller %d, topics %+v", len(r.Brokers), r.ControllerID, r.Topics)
		}
	}

	// A new leader epoch moves leadership of partition 0 to the other
	// broker; an older one is refused.
	moved := map[int32][]int32{0: {assignment[0][1], assignment[0][0]}}
	_, lisr = controllerFor(1, brokers, "t", id, moved, 1)
	for _, b := range []*Broker{b1, b2} {
		if r := call(t, b, lisr).(*kmsg.LeaderAndISRResponse); r.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("moving leadership: %+v", r)
		}
		if r := call(t, b, lisr).(*kmsg.LeaderAndISRResponse); r.Topics[0].Partitions[0].ErrorCode != kerr.StaleControllerEpoch.Int16() {
			t.Fatalf("the same epoch again: %+v", r)
		}
	}
	newLeader := b1
	if moved[0][0] == 2 {
		newLeader = b2
	}
	if got := produce(t, newLeader, 1, "t", 0, batchtest.Plain(1, now)); got.ErrorCode != 0 {
		t.Fatalf("produce to the new leader: %v", kerr.Code(got.ErrorCode))
	}

	// StopReplica with delete removes the replicas here.
	stop := kmsg.NewPtrStopReplicaRequest()
	stop.Version, stop.ControllerID, stop.ControllerEpoch, stop.BrokerEpoch = 4, 1, 1, -1
	st := kmsg.NewStopReplicaRequestTopic()
	st.Topic = "t"
	for p := int32(0); p < 4; p++ {
		st.PartitionStates = append(st.PartitionStates, kmsg.StopReplicaRequestTopicPartitionState{Partition: p, LeaderEpoch: -2, Delete: true})
	}
	stop.Topics = []kmsg.StopReplicaRequestTopic{st}
	if r := call(t, b1, stop).(*kmsg.StopReplicaResponse); r.ErrorCode != 0 || len(r.Partitions) != 4 {
		t.Fatalf("StopReplica: %+v", r)
	}
	if sizes := logSizes(t, b1); len(sizes) != 0 {
		t.Fatalf("replicas left after StopReplica: %v", sizes)
	}
}

// A controller request from an older controller epoch, or for an earlier
// registration of this broker, is refused whole.
func TestClusterModeRefusesStaleControllers(t *testing.T) {
	b := startClusterBroker(t, "1", newMemStore())
	um, lisr := controllerFor(5, []int32{1}, "t", [16]byte{1}, map[int32][]int32{0: {1}}, 0)
	call(t, b, um)
	if r := call(t, b, lisr).(*kmsg.LeaderAndISRResponse); r.ErrorCode != 0 {
		t.Fatalf("current controller: %v", kerr.Code(r.ErrorCode))
	}
	old, oldLisr := controllerFor(4, []int32{1}, "t", [16]byte{1}, map[int32][]int32{0: {1}}, 1)
	if r := call(t, b, old).(*kmsg.UpdateMetadataResponse); r.ErrorCode != kerr.StaleControllerEpoch.Int16() {
		t.Fatalf("old controller's UpdateMetadata: %v", kerr.Code(r.ErrorCode))
	}
	if r := call(t, b, oldLisr).(*kmsg.LeaderAndISRResponse); r.ErrorCode != kerr.StaleControllerEpoch.Int16() {
		t.Fatalf("old controller's LeaderAndIsr: %v", kerr.Code(r.ErrorCode))
	}
	_, early := controllerFor(5, []int32{1}, "t", [16]byte{1}, map[int32][]int32{0: {1}}, 2)
	early.BrokerEpoch = 9
	if r := call(t, b, early).(*kmsg.LeaderAndISRResponse); r.ErrorCode != kerr.StaleBrokerEpoch.Int16() {
		t.Fatalf("LeaderAndIsr for an earlier registration: %v", kerr.Code(r.ErrorCode))
	}
}

func (m *memStore) PartitionCount(name string) (int32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return int32(len(m.topics[name])), nil
}
