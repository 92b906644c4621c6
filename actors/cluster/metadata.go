package cluster

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/wire/kerr"
)

func str(s string) *string { return &s }

// Metadata answers a Metadata request (v0-12) from the view, with every
// broker's endpoint on listener (the one the request came in on). Topics
// the request names that the view lacks come back UNKNOWN_TOPIC_OR_PARTITION
// and are listed in missing, valid names only, so the caller can create
// them (auto.create.topics.enable) and mark their entries
// LEADER_NOT_AVAILABLE, as Kafka answers a topic it has just created.
func (v *View) Metadata(req *kmsg.MetadataRequest, listener string) (resp *kmsg.MetadataResponse, missing []string) {
	resp = req.ResponseKind().(*kmsg.MetadataResponse)
	resp.ClusterID = str(v.ClusterID)
	resp.ControllerID = v.ControllerID
	resp.AuthorizedOperations = metadata.AuthorizedOperationsUnset
	if req.Version >= 8 && req.Version <= 10 && req.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = metadata.ClusterOperations()
	}
	for _, b := range v.SortedBrokers() {
		e, ok := b.Endpoint(listener)
		if !ok {
			continue // Kafka leaves out brokers without the listener
		}
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID, mb.Host, mb.Port = b.ID, e.Host, e.Port
		if b.Rack != "" {
			mb.Rack = str(b.Rack)
		}
		resp.Brokers = append(resp.Brokers, mb)
	}
	all := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	if all {
		for _, name := range sortedTopicNames(v.Topics) {
			resp.Topics = append(resp.Topics, v.topicEntry(v.Topics[name], req, listener))
		}
		return resp, nil
	}
	seen := make(map[string]bool, len(req.Topics))
	for _, rt := range req.Topics {
		key := "id:" + string(rt.TopicID[:])
		if rt.Topic != nil {
			key = "name:" + *rt.Topic
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		if rt.Topic == nil {
			if t, ok := v.byID[rt.TopicID]; ok {
				resp.Topics = append(resp.Topics, v.topicEntry(t, req, listener))
				continue
			}
			e := kmsg.NewMetadataResponseTopic()
			e.TopicID = rt.TopicID
			e.ErrorCode = kerr.UnknownTopicID.Int16()
			e.AuthorizedOperations = metadata.AuthorizedOperationsUnset
			resp.Topics = append(resp.Topics, e)
			continue
		}
		name := *rt.Topic
		if t, ok := v.Topics[name]; ok {
			resp.Topics = append(resp.Topics, v.topicEntry(t, req, listener))
			continue
		}
		e := kmsg.NewMetadataResponseTopic()
		e.Topic = str(name)
		e.AuthorizedOperations = metadata.AuthorizedOperationsUnset
		e.ErrorCode = kerr.UnknownTopicOrPartition.Int16()
		if err := metadata.ValidateTopicName(name); err != nil {
			e.ErrorCode = kerr.InvalidTopicException.Int16()
		} else {
			missing = append(missing, name)
		}
		resp.Topics = append(resp.Topics, e)
	}
	return resp, missing
}

// topicEntry is one topic's Metadata entry. Partitions are as Kafka's
// ZK-mode MetadataCache gives them: a leader that is not alive (or lacks
// the listener) is LEADER_NOT_AVAILABLE (LISTENER_NOT_FOUND) with leader
// -1; at v0, replicas and ISR are cut to live brokers and the partition
// says REPLICA_NOT_AVAILABLE when that removed any.
func (v *View) topicEntry(t *Topic, req *kmsg.MetadataRequest, listener string) kmsg.MetadataResponseTopic {
	e := kmsg.NewMetadataResponseTopic()
	e.Topic = str(t.Name)
	e.TopicID = t.ID
	e.IsInternal = metadata.IsInternalTopic(t.Name)
	e.AuthorizedOperations = metadata.AuthorizedOperationsUnset
	if req.Version >= 8 && req.IncludeTopicAuthorizedOperations {
		e.AuthorizedOperations = metadata.TopicOperations()
	}
	for i, p := range t.Partitions {
		if p == nil {
			continue
		}
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition, mp.Leader, mp.LeaderEpoch = int32(i), p.Leader, p.LeaderEpoch
		mp.Replicas, mp.ISR, mp.OfflineReplicas = p.Replicas, p.ISR, p.Offline
		if mp.OfflineReplicas == nil {
			mp.OfflineReplicas = []int32{}
		}
		if req.Version == 0 {
			replicas, isr := v.alive(p.Replicas), v.alive(p.ISR)
			if len(replicas) < len(p.Replicas) || len(isr) < len(p.ISR) {
				mp.ErrorCode = kerr.ReplicaNotAvailable.Int16()
			}
			mp.Replicas, mp.ISR = replicas, isr
		}
		leader, alive := v.Brokers[p.Leader]
		switch {
		case !alive:
			mp.ErrorCode, mp.Leader = kerr.LeaderNotAvailable.Int16(), NoLeader
		case !hasListener(leader, listener):
			mp.ErrorCode, mp.Leader = kerr.ListenerNotFound.Int16(), NoLeader
		}
		e.Partitions = append(e.Partitions, mp)
	}
	return e
}

func hasListener(b *Broker, listener string) bool {
	_, ok := b.Endpoint(listener)
	return ok
}

func (v *View) alive(ids []int32) []int32 {
	out := make([]int32, 0, len(ids))
	for _, id := range ids {
		if _, ok := v.Brokers[id]; ok {
			out = append(out, id)
		}
	}
	return out
}

// DescribeCluster answers DescribeCluster (v0-1) from the view.
func (v *View) DescribeCluster(req *kmsg.DescribeClusterRequest, listener string) *kmsg.DescribeClusterResponse {
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.ClusterAuthorizedOperations = metadata.AuthorizedOperationsUnset
	resp.EndpointType = req.EndpointType
	if req.Version >= 1 && req.EndpointType != 1 {
		resp.ErrorCode = kerr.MismatchedEndpointType.Int16()
		resp.ErrorMessage = str("This endpoint serves brokers (endpoint type 1).")
		return resp
	}
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = metadata.ClusterOperations()
	}
	resp.ClusterID = v.ClusterID
	resp.ControllerID = v.ControllerID
	for _, b := range v.SortedBrokers() {
		e, ok := b.Endpoint(listener)
		if !ok {
			continue
		}
		db := kmsg.NewDescribeClusterResponseBroker()
		db.NodeID, db.Host, db.Port = b.ID, e.Host, e.Port
		if b.Rack != "" {
			db.Rack = str(b.Rack)
		}
		resp.Brokers = append(resp.Brokers, db)
	}
	return resp
}
