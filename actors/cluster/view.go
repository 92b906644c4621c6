package cluster

import (
	"maps"
	"net"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// LeaderDuringDelete is the leader an UpdateMetadata gives a partition of
// a topic being deleted: the broker forgets the partition.
const LeaderDuringDelete = -2

// NoLeader is a partition without a leader (offline).
const NoLeader = -1

// Endpoint is one listener of a broker.
type Endpoint struct {
	Listener string
	Host     string
	Port     int32
	Protocol int16 // Kafka's security protocol id (0 PLAINTEXT)
}

// Broker is one live broker.
type Broker struct {
	ID        int32
	Endpoints []Endpoint
	Rack      string // "" = none
}

// Endpoint returns the broker's endpoint on listener, or its first.
func (b *Broker) Endpoint(listener string) (Endpoint, bool) {
	for _, e := range b.Endpoints {
		if e.Listener == listener {
			return e, true
		}
	}
	return Endpoint{}, false
}

// Partition is one partition's state as the controller last told it.
type Partition struct {
	Leader          int32
	LeaderEpoch     int32
	Replicas        []int32
	ISR             []int32
	Offline         []int32
	ControllerEpoch int32
	ZkVersion       int32 // the state znode's version: AlterPartition's partition epoch
}

// Topic is one topic: its id and partitions by index (a nil entry is a
// partition the cache has not been told of).
type Topic struct {
	Name       string
	ID         [16]byte
	Partitions []*Partition
}

// Partition returns the state of partition p, or nil.
func (t *Topic) Partition(p int32) *Partition {
	if t == nil || p < 0 || int(p) >= len(t.Partitions) {
		return nil
	}
	return t.Partitions[p]
}

// View is one immutable picture of the cluster.
type View struct {
	ClusterID       string
	ControllerID    int32 // -1: none known
	ControllerEpoch int32
	Brokers         map[int32]*Broker
	Topics          map[string]*Topic
	byID            map[[16]byte]*Topic
}

// Empty is the view of a broker that has heard nothing from a controller.
func Empty(clusterID string) *View {
	return &View{ClusterID: clusterID, ControllerID: -1, Brokers: map[int32]*Broker{}, Topics: map[string]*Topic{}, byID: map[[16]byte]*Topic{}}
}

// TopicByID finds a topic by its id.
func (v *View) TopicByID(id [16]byte) (*Topic, bool) {
	t, ok := v.byID[id]
	return t, ok
}

// Partition returns topic/partition's state, or nil.
func (v *View) Partition(topic string, p int32) *Partition {
	return v.Topics[topic].Partition(p)
}

// SortedBrokers returns the live brokers by id.
func (v *View) SortedBrokers() []*Broker {
	out := make([]*Broker, 0, len(v.Brokers))
	for _, id := range slices.Sorted(maps.Keys(v.Brokers)) {
		out = append(out, v.Brokers[id])
	}
	return out
}

// Apply lays an UpdateMetadata over v and returns the new view. A request
// from an older controller epoch than v's is STALE_CONTROLLER_EPOCH and
// changes nothing.
func (v *View) Apply(req *kmsg.UpdateMetadataRequest) (*View, kerr.Code) {
	if req.ControllerEpoch < v.ControllerEpoch {
		return v, kerr.StaleControllerEpoch
	}
	next := &View{ClusterID: v.ClusterID, ControllerID: req.ControllerID, ControllerEpoch: req.ControllerEpoch,
		Brokers: make(map[int32]*Broker, len(req.LiveBrokers)), Topics: maps.Clone(v.Topics)}
	for _, lb := range req.LiveBrokers {
		b := &Broker{ID: lb.ID}
		if lb.Rack != nil {
			b.Rack = *lb.Rack
		}
		for _, e := range lb.Endpoints {
			b.Endpoints = append(b.Endpoints, Endpoint{Listener: e.ListenerName, Host: e.Host, Port: e.Port, Protocol: e.SecurityProtocol})
		}
		if req.Version == 0 {
			b.Endpoints = []Endpoint{{Listener: "PLAINTEXT", Host: lb.Host, Port: lb.Port}}
		}
		next.Brokers[b.ID] = b
	}
	touched := make(map[string]*Topic)
	put := func(name string, id [16]byte, s kmsg.UpdateMetadataRequestTopicPartition) {
		t := touched[name]
		if t == nil {
			old := next.Topics[name]
			t = &Topic{Name: name, ID: id}
			if old != nil && (id == [16]byte{} || old.ID == id) {
				t.Partitions = slices.Clone(old.Partitions)
				if id == [16]byte{} {
					t.ID = old.ID
				}
			}
			touched[name] = t
			next.Topics[name] = t
		}
		if s.Leader == LeaderDuringDelete {
			if int(s.Partition) < len(t.Partitions) {
				t.Partitions[s.Partition] = nil
			}
			return
		}
		for int(s.Partition) >= len(t.Partitions) {
			t.Partitions = append(t.Partitions, nil)
		}
		t.Partitions[s.Partition] = &Partition{Leader: s.Leader, LeaderEpoch: s.LeaderEpoch, Replicas: s.Replicas, ISR: s.ISR,
			Offline: s.OfflineReplicas, ControllerEpoch: s.ControllerEpoch, ZkVersion: s.ZKVersion}
	}
	for _, s := range req.PartitionStates { // v0-4
		put(s.Topic, [16]byte{}, s)
	}
	for _, ts := range req.TopicStates { // v5+
		for _, s := range ts.PartitionStates {
			put(ts.Topic, ts.TopicID, s)
		}
	}
	for name, t := range touched {
		for len(t.Partitions) > 0 && t.Partitions[len(t.Partitions)-1] == nil {
			t.Partitions = t.Partitions[:len(t.Partitions)-1]
		}
		if len(t.Partitions) == 0 {
			delete(next.Topics, name)
		}
	}
	next.byID = make(map[[16]byte]*Topic, len(next.Topics))
	for _, t := range next.Topics {
		if t.ID != [16]byte{} {
			next.byID[t.ID] = t
		}
	}
	return next, kerr.None
}

func sortedTopicNames(m map[string]*Topic) []string { return slices.Sorted(maps.Keys(m)) }

// Addr is broker id's address on listener (its first endpoint when it
// has none by that name), for the inter-broker client; false when the
// view has no such live broker.
func (v *View) Addr(id int32, listener string) (string, bool) {
	if v == nil {
		return "", false
	}
	b, ok := v.Brokers[id]
	if !ok || len(b.Endpoints) == 0 {
		return "", false
	}
	e, ok := b.Endpoint(listener)
	if !ok {
		e = b.Endpoints[0]
	}
	return net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port))), true
}

// ControllerAddr is the controller's address on listener (Addr).
func (v *View) ControllerAddr(listener string) (string, bool) {
	if v == nil || v.ControllerID < 0 {
		return "", false
	}
	return v.Addr(v.ControllerID, listener)
}
