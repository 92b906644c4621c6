package cluster

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

func liveBroker(id int32, port int32, rack string) kmsg.UpdateMetadataRequestLiveBroker {
	b := kmsg.NewUpdateMetadataRequestLiveBroker()
	b.ID = id
	if rack != "" {
		b.Rack = &rack
	}
	b.Endpoints = []kmsg.UpdateMetadataRequestLiveBrokerEndpoint{{Port: port, Host: "127.0.0.1", ListenerName: "PLAINTEXT"}}
	return b
}

func topicState(name string, id byte, parts ...kmsg.UpdateMetadataRequestTopicPartition) kmsg.UpdateMetadataRequestTopicState {
	ts := kmsg.NewUpdateMetadataRequestTopicState()
	ts.Topic, ts.TopicID, ts.PartitionStates = name, [16]byte{id}, parts
	return ts
}

func partState(p, leader, epoch int32, replicas ...int32) kmsg.UpdateMetadataRequestTopicPartition {
	s := kmsg.NewUpdateMetadataRequestTopicPartition()
	s.Partition, s.Leader, s.LeaderEpoch, s.Replicas, s.ISR = p, leader, epoch, replicas, replicas
	return s
}

func update(ctrlEpoch int32, brokers []kmsg.UpdateMetadataRequestLiveBroker, topics ...kmsg.UpdateMetadataRequestTopicState) *kmsg.UpdateMetadataRequest {
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version, req.ControllerID, req.ControllerEpoch, req.LiveBrokers, req.TopicStates = 8, 1, ctrlEpoch, brokers, topics
	return req
}

// Updates are laid over one another: changed partitions replace theirs,
// the others stay; a partition whose leader is -2 goes, and the topic with
// it when it was the last.
func TestApplyLaysUpdatesOverTheCache(t *testing.T) {
	brokers := []kmsg.UpdateMetadataRequestLiveBroker{liveBroker(1, 9001, ""), liveBroker(2, 9002, "")}
	v, code := Empty("c").Apply(update(1, brokers, topicState("a", 1, partState(0, 1, 0, 1, 2), partState(1, 2, 0, 2, 1))))
	if code != kerr.None || len(v.Topics["a"].Partitions) != 2 || v.ControllerID != 1 {
		t.Fatalf("first update: %v %+v", code, v)
	}
	v2, _ := v.Apply(update(1, brokers[:1], topicState("a", 1, partState(1, 1, 1, 2, 1))))
	if p := v2.Partition("a", 1); p.Leader != 1 || p.LeaderEpoch != 1 {
		t.Fatalf("partition 1 after the change: %+v", p)
	}
	if p := v2.Partition("a", 0); p == nil || p.Leader != 1 {
		t.Fatalf("partition 0 lost: %+v", p)
	}
	if len(v2.Brokers) != 1 || v.Partition("a", 1).Leader != 2 {
		t.Fatalf("live brokers %v, or the old view changed", v2.Brokers)
	}
	if got, ok := v2.TopicByID([16]byte{1}); !ok || got.Name != "a" {
		t.Fatalf("by id: %v %v", got, ok)
	}
	v3, _ := v2.Apply(update(1, brokers, topicState("a", 1, partState(0, LeaderDuringDelete, 2), partState(1, LeaderDuringDelete, 2))))
	if _, ok := v3.Topics["a"]; ok {
		t.Fatalf("deleted topic still cached: %+v", v3.Topics["a"])
	}
	if _, ok := v3.TopicByID([16]byte{1}); ok {
		t.Fatal("deleted topic still found by id")
	}
	if stale, code := v3.Apply(update(0, nil)); code != kerr.StaleControllerEpoch || stale != v3 {
		t.Fatalf("older controller: %v", code)
	}
}

// A partition whose leader is not alive is LEADER_NOT_AVAILABLE with
// leader -1; brokers come sorted with the request's listener's endpoint.
func TestMetadataFromTheView(t *testing.T) {
	v, _ := Empty("c").Apply(update(3, []kmsg.UpdateMetadataRequestLiveBroker{liveBroker(2, 9002, "r2"), liveBroker(1, 9001, "")},
		topicState("a", 1, partState(0, 1, 4, 1, 2), partState(1, 3, 0, 3, 1))))
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	resp, missing := v.Metadata(req, "PLAINTEXT")
	if len(missing) != 0 || len(resp.Brokers) != 2 || resp.Brokers[0].NodeID != 1 || *resp.Brokers[1].Rack != "r2" || resp.ControllerID != 1 {
		t.Fatalf("brokers %+v, controller %d", resp.Brokers, resp.ControllerID)
	}
	parts := resp.Topics[0].Partitions
	if parts[0].Leader != 1 || parts[0].LeaderEpoch != 4 || parts[0].ErrorCode != 0 ||
		parts[1].Leader != -1 || parts[1].ErrorCode != kerr.LeaderNotAvailable.Int16() {
		t.Fatalf("partitions %+v", parts)
	}
	name, bad := "nope", "bad/name"
	req.Topics = []kmsg.MetadataRequestTopic{{Topic: &name}, {Topic: &bad}}
	resp, missing = v.Metadata(req, "PLAINTEXT")
	if !slices.Equal(missing, []string{"nope"}) || resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Int16() || resp.Topics[1].ErrorCode != kerr.InvalidTopicException.Int16() {
		t.Fatalf("missing %v, topics %+v", missing, resp.Topics)
	}
	if resp, _ := v.Metadata(req, "INTERNAL"); len(resp.Brokers) != 0 {
		t.Fatalf("brokers without the listener listed: %+v", resp.Brokers)
	}
}

func leaderAndIsr(ctrlEpoch int32, brokerEpoch int64, parts ...kmsg.LeaderAndISRRequestTopicPartition) *kmsg.LeaderAndISRRequest {
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version, req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 7, 1, ctrlEpoch, brokerEpoch
	ts := kmsg.NewLeaderAndISRRequestTopicState()
	ts.Topic, ts.TopicID, ts.PartitionStates = "a", [16]byte{1}, parts
	req.TopicStates = []kmsg.LeaderAndISRRequestTopicState{ts}
	return req
}

func lisrState(p, leader, epoch int32, replicas ...int32) kmsg.LeaderAndISRRequestTopicPartition {
	s := kmsg.NewLeaderAndISRRequestTopicPartition()
	s.Partition, s.Leader, s.LeaderEpoch, s.Replicas, s.ISR = p, leader, epoch, replicas, replicas
	return s
}

// The decision refuses what Kafka's ReplicaManager refuses and turns the
// rest into roles.
func TestLeaderAndIsrDecision(t *testing.T) {
	held := map[int32]Replica{1: {ID: [16]byte{1}, LeaderEpoch: 5}}
	b := BrokerState{ID: 2, Epoch: 100, ControllerEpoch: 3, Local: func(topic string, p int32) (Replica, bool) {
		r, ok := held[p]
		return r, ok && topic == "a"
	}}
	roles, resp := LeaderAndIsr(leaderAndIsr(3, 100,
		lisrState(0, 2, 0, 2, 1), // new here, leader
		lisrState(1, 1, 5, 1, 2), // same epoch as held: stale
		lisrState(2, 1, 0, 1, 3), // not a replica here
	), b)
	if len(roles) != 1 || !roles[0].Leads(2) || roles[0].Partition != 0 {
		t.Fatalf("roles %+v", roles)
	}
	codes := []int16{}
	for _, p := range resp.Topics[0].Partitions {
		codes = append(codes, p.ErrorCode)
	}
	if want := []int16{0, kerr.StaleControllerEpoch.Int16(), kerr.UnknownTopicOrPartition.Int16()}; !slices.Equal(codes, want) {
		t.Fatalf("codes %v, want %v", codes, want)
	}
	if roles, resp := LeaderAndIsr(leaderAndIsr(2, 100, lisrState(0, 2, 0, 2)), b); len(roles) != 0 || resp.ErrorCode != kerr.StaleControllerEpoch.Int16() {
		t.Fatalf("old controller: %+v %+v", roles, resp)
	}
	if roles, resp := LeaderAndIsr(leaderAndIsr(3, 99, lisrState(0, 2, 0, 2)), b); len(roles) != 0 || resp.ErrorCode != kerr.StaleBrokerEpoch.Int16() {
		t.Fatalf("earlier incarnation: %+v %+v", roles, resp)
	}
	held[0] = Replica{ID: [16]byte{9}}
	if roles, resp := LeaderAndIsr(leaderAndIsr(3, 100, lisrState(0, 2, 1, 2)), b); len(roles) != 0 || resp.Topics[0].Partitions[0].ErrorCode != kerr.InconsistentTopicID.Int16() {
		t.Fatalf("other topic id: %+v %+v", roles, resp)
	}
}

// A broker's address is its endpoint on the listener asked for, else its
// first; a broker the view lacks, or no controller, has none.
func TestAddr(t *testing.T) {
	b := liveBroker(2, 9002, "")
	b.Endpoints = append(b.Endpoints, kmsg.UpdateMetadataRequestLiveBrokerEndpoint{Host: "10.0.0.2", Port: 9192, ListenerName: "INTERNAL"})
	v, _ := Empty("c").Apply(update(1, []kmsg.UpdateMetadataRequestLiveBroker{b}))
	if a, ok := v.Addr(2, "INTERNAL"); !ok || a != "10.0.0.2:9192" {
		t.Fatalf("INTERNAL: %q %v", a, ok)
	}
	if a, ok := v.Addr(2, "OTHER"); !ok || a != "127.0.0.1:9002" {
		t.Fatalf("fallback: %q %v", a, ok)
	}
	if _, ok := v.Addr(3, "INTERNAL"); ok {
		t.Fatal("an unknown broker has an address")
	}
	if _, ok := v.ControllerAddr("INTERNAL"); ok {
		t.Fatal("controller 1 is not live, yet it has an address")
	}
	var none *View
	if _, ok := none.ControllerAddr("x"); ok {
		t.Fatal("a nil view names a controller")
	}
}
