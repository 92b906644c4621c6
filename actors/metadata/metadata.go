package metadata

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Metadata handles a Metadata request (v0-12). A null topic list (v1+) or
// an empty one at v0 means every topic. An unknown topic is created when
// auto.create.topics.enable is true and the request allows it (always
// before v4); the effects open the new partitions. Authorized operations
// are filled when the request asks for them (v8+; the cluster's only v8-10).
func (s *State) Metadata(req *kmsg.MetadataRequest, now time.Time) (*kmsg.MetadataResponse, Effects) {
	resp, eff := s.metadata(req, now)
	if req.Version >= 8 && req.Version <= 10 && req.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = authorizedOperations(resourceCluster)
	}
	if req.Version >= 8 && req.IncludeTopicAuthorizedOperations {
		// Every entry that names a topic, errors included, as Kafka; the
		// entries are copies of the shared cache, so this changes nothing
		// shared.
		for i := range resp.Topics {
			if resp.Topics[i].Topic != nil {
				resp.Topics[i].AuthorizedOperations = authorizedOperations(resourceTopic)
			}
		}
	}
	return resp, eff
}

func (s *State) metadata(req *kmsg.MetadataRequest, now time.Time) (*kmsg.MetadataResponse, Effects) {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	resp.Brokers = []kmsg.MetadataResponseBroker{s.brokerEntry()}
	resp.ClusterID = str(s.snap.ClusterID)
	resp.ControllerID = s.snap.BrokerID
	resp.AuthorizedOperations = authorizedOperationsUnset

	all := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	if all {
		resp.Topics = make([]kmsg.MetadataResponseTopic, len(s.sortedNames))
		for i, n := range s.sortedNames {
			resp.Topics[i] = s.metaEntries[n]
		}
		return resp, Effects{}
	}

	autoCreate := config.ParseBool(s.brokerValue(config.KeyAutoCreateTopics)) && (req.Version < 4 || req.AllowAutoTopicCreation)
	var eff Effects
	seen := make(map[string]bool, len(req.Topics))
	for _, rt := range req.Topics {
		// A topic id asks by id, whatever the name: Java's consumer
		// (a broker-side regex subscription, KIP-848) sends "" with it.
		byID := rt.Topic == nil || (*rt.Topic == "" && rt.TopicID != [16]byte{})
		// The request's topics are a set: a topic named twice is
		// described once, as Kafka does.
		key := "id:" + string(rt.TopicID[:])
		if !byID {
			key = "name:" + *rt.Topic
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		if byID {
			// v10+: by topic id.
			if t, ok := s.byID[TopicID(rt.TopicID)]; ok {
				resp.Topics = append(resp.Topics, s.topicEntry(t))
				continue
			}
			e := kmsg.NewMetadataResponseTopic()
			e.TopicID = rt.TopicID
			e.ErrorCode = kerr.UnknownTopicID.Int16()
			e.AuthorizedOperations = authorizedOperationsUnset
			resp.Topics = append(resp.Topics, e)
			continue
		}
		name := *rt.Topic
		if t, ok := s.byName[name]; ok {
			resp.Topics = append(resp.Topics, s.topicEntry(t))
			continue
		}
		e := kmsg.NewMetadataResponseTopic()
		e.Topic = str(name)
		e.AuthorizedOperations = authorizedOperationsUnset
		if err := ValidateTopicName(name); err != nil {
			e.ErrorCode = kerr.InvalidTopicException.Int16()
			resp.Topics = append(resp.Topics, e)
			continue
		}
		if !autoCreate {
			e.ErrorCode = kerr.UnknownTopicOrPartition.Int16()
			resp.Topics = append(resp.Topics, e)
			continue
		}
		t, created, terr := s.autoCreate(name, now)
		if terr != nil {
			e.ErrorCode = terr.code.Int16()
			resp.Topics = append(resp.Topics, e)
			continue
		}
		eff.Start = append(eff.Start, created.Start...)
		resp.Topics = append(resp.Topics, s.topicEntry(t))
	}
	return resp, eff
}

func (s *State) brokerValue(name string) string {
	e, _ := config.ResolveBroker(name, s.Layers())
	return e.Value
}

func (s *State) rack() *string {
	if s.broker.Rack == "" {
		return nil
	}
	return str(s.broker.Rack)
}

func (s *State) brokerEntry() kmsg.MetadataResponseBroker {
	b := kmsg.NewMetadataResponseBroker()
	b.NodeID, b.Host, b.Port, b.Rack = s.snap.BrokerID, s.endpoint.Host, s.endpoint.Port, s.rack()
	return b
}

// topicEntry is a topic's cached Metadata entry (shared: read-only).
func (s *State) topicEntry(t *Topic) kmsg.MetadataResponseTopic { return s.metaEntries[t.Name] }

func (s *State) buildTopicEntry(t *Topic) kmsg.MetadataResponseTopic {
	e := kmsg.NewMetadataResponseTopic()
	e.Topic = str(t.Name)
	e.TopicID = t.ID
	e.IsInternal = IsInternalTopic(t.Name)
	e.AuthorizedOperations = authorizedOperationsUnset
	id := s.snap.BrokerID
	replicas := []int32{id} // one broker: every partition shares it
	e.Partitions = make([]kmsg.MetadataResponseTopicPartition, len(t.Partitions))
	for i, p := range t.Partitions {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition, mp.Leader, mp.LeaderEpoch = p.Index, id, p.LeaderEpoch
		mp.Replicas, mp.ISR = replicas, replicas
		if s.offline[t.ID][p.Index] {
			// The only replica cannot serve: no leader until it can.
			mp.ErrorCode = kerr.LeaderNotAvailable.Int16()
			mp.Leader, mp.ISR, mp.OfflineReplicas = -1, []int32{}, replicas
		}
		e.Partitions[i] = mp
	}
	return e
}
