package cluster

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// Role is what a LeaderAndIsr makes of one local replica.
type Role struct {
	Topic       string
	ID          [16]byte
	Partition   int32
	Leader      int32 // the leader's broker id; this broker's own when it leads
	LeaderEpoch int32
	Replicas    []int32
	ISR         []int32
	ZkVersion   int32 // the partition epoch AlterPartition must name
	// IsNew is the controller's word that the partition was just made:
	// its log may be created empty.
	IsNew bool
}

// Leads reports whether the role is leadership on broker me.
func (r Role) Leads(me int32) bool { return r.Leader == me }

// Replica is what this broker holds of a partition, for the decision.
type Replica struct {
	ID          [16]byte
	LeaderEpoch int32
}

// BrokerState is what the decision checks a request against.
type BrokerState struct {
	ID              int32
	Epoch           int64 // this broker's registration czxid
	ControllerEpoch int32 // the newest controller epoch seen
	// Local finds a partition this broker holds.
	Local func(topic string, partition int32) (Replica, bool)
}

// LeaderAndIsr decides a LeaderAndIsr request as Kafka's
// ReplicaManager.becomeLeaderOrFollower does: a request from an older
// controller, or one meant for an earlier incarnation of this broker, is
// refused whole (STALE_CONTROLLER_EPOCH, STALE_BROKER_EPOCH); a partition
// whose leader epoch is not newer than the one held is refused
// (STALE_CONTROLLER_EPOCH); one held under another topic id is
// INCONSISTENT_TOPIC_ID; one whose replicas do not include this broker is
// UNKNOWN_TOPIC_OR_PARTITION. The rest become roles, and the response
// says NONE for them: the caller applies them before it answers.
func LeaderAndIsr(req *kmsg.LeaderAndISRRequest, b BrokerState) ([]Role, *kmsg.LeaderAndISRResponse) {
	resp := req.ResponseKind().(*kmsg.LeaderAndISRResponse)
	top := kerr.None
	switch {
	case req.ControllerEpoch < b.ControllerEpoch:
		top = kerr.StaleControllerEpoch
	case req.Version >= 2 && req.BrokerEpoch != -1 && req.BrokerEpoch < b.Epoch:
		top = kerr.StaleBrokerEpoch
	}
	var roles []Role
	answer := func(topic string, id [16]byte, p int32, code kerr.Code) {
		if req.Version < 5 {
			resp.Partitions = append(resp.Partitions, kmsg.LeaderAndISRResponseTopicPartition{Topic: topic, Partition: p, ErrorCode: code.Int16()})
			return
		}
		if n := len(resp.Topics); n == 0 || resp.Topics[n-1].TopicID != id {
			resp.Topics = append(resp.Topics, kmsg.LeaderAndISRResponseTopic{TopicID: id})
		}
		t := &resp.Topics[len(resp.Topics)-1]
		t.Partitions = append(t.Partitions, kmsg.LeaderAndISRResponseTopicPartition{Partition: p, ErrorCode: code.Int16()})
	}
	decide := func(topic string, id [16]byte, s kmsg.LeaderAndISRRequestTopicPartition) {
		if top != kerr.None {
			answer(topic, id, s.Partition, top)
			return
		}
		if !slices.Contains(s.Replicas, b.ID) {
			answer(topic, id, s.Partition, kerr.UnknownTopicOrPartition)
			return
		}
		if held, ok := b.Local(topic, s.Partition); ok {
			switch {
			case id != [16]byte{} && held.ID != [16]byte{} && held.ID != id:
				answer(topic, id, s.Partition, kerr.InconsistentTopicID)
				return
			case s.LeaderEpoch <= held.LeaderEpoch && !s.IsNew:
				answer(topic, id, s.Partition, kerr.StaleControllerEpoch)
				return
			}
		}
		roles = append(roles, Role{Topic: topic, ID: id, Partition: s.Partition, Leader: s.Leader, LeaderEpoch: s.LeaderEpoch,
			Replicas: s.Replicas, ISR: s.ISR, ZkVersion: s.ZKVersion, IsNew: s.IsNew})
		answer(topic, id, s.Partition, kerr.None)
	}
	for _, s := range req.PartitionStates {
		decide(s.Topic, [16]byte{}, s)
	}
	for _, ts := range req.TopicStates {
		for _, s := range ts.PartitionStates {
			decide(ts.Topic, ts.TopicID, s)
		}
	}
	if top != kerr.None {
		resp.ErrorCode = top.Int16()
		resp.Partitions, resp.Topics = nil, nil
	}
	return roles, resp
}

// Stop is one partition a StopReplica names.
type Stop struct {
	Topic     string
	Partition int32
	Delete    bool // remove its files too
	// LeaderEpoch is the epoch the controller stops it at; -2
	// (EpochDuringDelete) or -1 (no epoch) stop it whatever epoch it has.
	LeaderEpoch int32
}

// EpochDuringDelete is the leader epoch of a StopReplica for a deleted
// topic: it stops the partition whatever its epoch.
const EpochDuringDelete = -2

// StopReplica decides a StopReplica: a stale controller or broker epoch
// refuses it whole; a partition whose held leader epoch is newer than the
// request's is refused (FENCED_LEADER_EPOCH); the rest are stopped.
func StopReplica(req *kmsg.StopReplicaRequest, b BrokerState) ([]Stop, *kmsg.StopReplicaResponse) {
	resp := req.ResponseKind().(*kmsg.StopReplicaResponse)
	switch {
	case req.ControllerEpoch < b.ControllerEpoch:
		resp.ErrorCode = kerr.StaleControllerEpoch.Int16()
		return nil, resp
	case req.Version >= 1 && req.BrokerEpoch != -1 && req.BrokerEpoch < b.Epoch:
		resp.ErrorCode = kerr.StaleBrokerEpoch.Int16()
		return nil, resp
	}
	var stops []Stop
	add := func(topic string, p int32, del bool, epoch int32) {
		code := kerr.None
		if held, ok := b.Local(topic, p); ok && epoch >= 0 && held.LeaderEpoch > epoch {
			code = kerr.FencedLeaderEpoch
		} else {
			stops = append(stops, Stop{Topic: topic, Partition: p, Delete: del, LeaderEpoch: epoch})
		}
		resp.Partitions = append(resp.Partitions, kmsg.StopReplicaResponsePartition{Topic: topic, Partition: p, ErrorCode: code.Int16()})
	}
	for _, t := range req.Topics {
		switch {
		case req.Version == 0:
			add(t.Topic, t.Partition, req.DeletePartitions, -1)
		case req.Version <= 2:
			for _, p := range t.Partitions {
				add(t.Topic, p, req.DeletePartitions, -1)
			}
		default:
			for _, s := range t.PartitionStates {
				add(t.Topic, s.Partition, s.Delete, s.LeaderEpoch)
			}
		}
	}
	return stops, resp
}
