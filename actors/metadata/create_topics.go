package metadata

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/wire/kerr"
)

// MaxPartitionsPerTopic bounds one topic's partition count, so that a
// mistaken request cannot make the broker open millions of logs.
const MaxPartitionsPerTopic = 100000

func str(s string) *string { return &s }

// topicError is a Kafka code with a message for one topic of a request.
type topicError struct {
	code kerr.Code
	msg  string
}

func fail(code kerr.Code, format string, args ...any) *topicError {
	return &topicError{code: code, msg: fmt.Sprintf(format, args...)}
}

// topicRequest is a topic to create, from CreateTopics or auto-creation.
type topicRequest struct {
	name       string
	partitions int32
	rf         int16
	assignment [][]int32 // optional explicit replica lists, one per partition
	configs    map[string]string
}

// checkNewTopic validates a topic to create against the live state and
// the other topics planned in the same request.
func (s *State) checkNewTopic(r *topicRequest, planned map[string]bool) *topicError {
	if err := ValidateTopicName(r.name); err != nil {
		return fail(kerr.InvalidTopicException, "%v", err)
	}
	if _, ok := s.byName[r.name]; ok || planned[r.name] {
		return fail(kerr.TopicAlreadyExists, "Topic '%s' already exists.", r.name)
	}
	if _, ok := s.deleting[r.name]; ok {
		return fail(kerr.TopicAlreadyExists, "Topic '%s' is marked for deletion.", r.name)
	}
	if other, ok := s.collision(r.name); ok {
		return fail(kerr.InvalidTopicException, "Topic '%s' collides with existing topic '%s': names that differ only in '.' and '_' are not allowed together.", r.name, other)
	}
	for p := range planned {
		if p != r.name && collisionKey(p) == collisionKey(r.name) {
			return fail(kerr.InvalidTopicException, "Topic '%s' collides with topic '%s' in the same request.", r.name, p)
		}
	}
	brokers := int16(1)
	if r.assignment != nil {
		if r.partitions != -1 || r.rf != -1 {
			return fail(kerr.InvalidRequest, "Both numPartitions or replicationFactor and replicasAssignment were set; use one or the other.")
		}
		for i, replicas := range r.assignment {
			if len(replicas) == 0 {
				return fail(kerr.InvalidReplicaAssignment, "Partition %d has no replicas.", i)
			}
			for _, b := range replicas {
				if b != s.snap.BrokerID {
					return fail(kerr.InvalidReplicaAssignment, "Replica assignment names broker %d; the only broker is %d.", b, s.snap.BrokerID)
				}
			}
			if len(replicas) > 1 {
				return fail(kerr.InvalidReplicaAssignment, "Partition %d lists broker %d more than once.", i, replicas[0])
			}
		}
		r.partitions, r.rf = int32(len(r.assignment)), 1
	}
	if r.partitions == -1 {
		r.partitions = int32(s.brokerInt(config.KeyNumPartitions))
	}
	if r.rf == -1 {
		r.rf = int16(s.brokerInt(config.KeyReplicationFactor))
	}
	switch {
	case r.partitions < 1:
		return fail(kerr.InvalidPartitions, "Number of partitions must be larger than 0, got %d.", r.partitions)
	case r.partitions > MaxPartitionsPerTopic:
		return fail(kerr.InvalidPartitions, "Number of partitions %d is above the limit of %d per topic.", r.partitions, MaxPartitionsPerTopic)
	case r.rf < 1:
		return fail(kerr.InvalidReplicationFactor, "Replication factor must be larger than 0, got %d.", r.rf)
	case r.rf > brokers:
		return fail(kerr.InvalidReplicationFactor, "Replication factor: %d larger than available brokers: %d (samsa runs a single broker until cluster mode).", r.rf, brokers)
	}
	for _, k := range sortedKeys(r.configs) {
		if err := config.ValidateTopic(k, r.configs[k]); err != nil {
			return fail(kerr.InvalidConfig, "%s", config.ClientMessage(err))
		}
	}
	return nil
}

// newTopic builds the durable topic for a validated request.
func (s *State) newTopic(r *topicRequest, now time.Time, dirs map[string]int) (Topic, error) {
	id, err := s.newTopicID()
	if err != nil {
		return Topic{}, err
	}
	t := Topic{Name: r.name, ID: id, Created: now.UTC(), Partitions: make([]Partition, r.partitions)}
	if len(r.configs) > 0 {
		t.Configs = r.configs
	}
	for i := range t.Partitions {
		t.Partitions[i] = Partition{Index: int32(i), Dir: s.pickDir(dirs)}
	}
	return t, nil
}

// CreateTopics handles a CreateTopics request (v2-7). Topics are created
// and persisted unless ValidateOnly; the effects open their partitions.
func (s *State) CreateTopics(req *kmsg.CreateTopicsRequest, now time.Time) (*kmsg.CreateTopicsResponse, Effects) {
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	counts := make(map[string]int, len(req.Topics))
	for _, t := range req.Topics {
		counts[t.Topic]++
	}
	next := s.snap.clone()
	planned := make(map[string]bool)
	dirs := make(map[string]int)
	var created []int // indexes into resp.Topics of topics added to next
	for _, rt := range req.Topics {
		out := kmsg.NewCreateTopicsResponseTopic()
		out.Topic = rt.Topic
		out.NumPartitions, out.ReplicationFactor = -1, -1
		r := topicRequest{name: rt.Topic, partitions: rt.NumPartitions, rf: rt.ReplicationFactor}
		if len(rt.ReplicaAssignment) > 0 {
			r.assignment = make([][]int32, len(rt.ReplicaAssignment))
			for _, a := range rt.ReplicaAssignment {
				if a.Partition < 0 || int(a.Partition) >= len(rt.ReplicaAssignment) || r.assignment[a.Partition] != nil {
					r.assignment = nil
					setErr(&out, fail(kerr.InvalidReplicaAssignment, "Partitions of the replica assignment must be 0 to %d, each once.", len(rt.ReplicaAssignment)-1))
					break
				}
				r.assignment[a.Partition] = slices.Clone(a.Replicas)
			}
		}
		var terr *topicError
		if out.ErrorCode == 0 && counts[rt.Topic] > 1 {
			terr = fail(kerr.InvalidRequest, "Topic '%s' appears more than once in the request.", rt.Topic)
		}
		if out.ErrorCode == 0 && terr == nil {
			r.configs = make(map[string]string, len(rt.Configs))
			for _, c := range rt.Configs {
				if c.Value == nil {
					terr = fail(kerr.InvalidConfig, "Null value not supported for topic config %s.", c.Name)
					break
				}
				r.configs[c.Name] = *c.Value
			}
		}
		if out.ErrorCode == 0 && terr == nil {
			terr = s.checkNewTopic(&r, planned)
		}
		if terr != nil {
			setErr(&out, terr)
			resp.Topics = append(resp.Topics, out)
			continue
		}
		out.NumPartitions, out.ReplicationFactor = r.partitions, r.rf
		out.Configs = s.createdConfigs(r.configs, next)
		if out.ErrorCode == 0 && !req.ValidateOnly {
			t, err := s.newTopic(&r, now, dirs)
			if err != nil {
				setErr(&out, fail(kerr.UnknownServerError, "%v", err))
			} else {
				out.TopicID = t.ID
				next.Topics = append(next.Topics, t)
				created = append(created, len(resp.Topics))
			}
		}
		planned[r.name] = true
		resp.Topics = append(resp.Topics, out)
	}
	if len(created) == 0 {
		return resp, Effects{}
	}
	if err := s.commit(next); err != nil {
		for _, i := range created {
			resp.Topics[i].TopicID = TopicID{}
			setErr(&resp.Topics[i], fail(kerr.KafkaStorageError, "Could not persist the topic: %v", err))
		}
		return resp, Effects{}
	}
	var eff Effects
	for _, i := range created {
		t := s.byName[resp.Topics[i].Topic]
		eff.Start = append(eff.Start, s.specs(t, t.Partitions)...)
	}
	return resp, eff
}

func setErr(out *kmsg.CreateTopicsResponseTopic, e *topicError) {
	out.ErrorCode = e.code.Int16()
	out.ErrorMessage = str(e.msg)
}

// createdConfigs lists a new topic's effective configs (CreateTopics v5+).
func (s *State) createdConfigs(topic map[string]string, next *Snapshot) []kmsg.CreateTopicsResponseTopicConfig {
	l := config.Layers{DynamicBroker: next.DynamicBroker, DynamicDefault: next.DynamicDefault, Static: s.broker.Static}
	var out []kmsg.CreateTopicsResponseTopicConfig
	for _, d := range config.TopicDefs() {
		e, _ := config.ResolveTopic(d.Name, topic, l)
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name, c.ReadOnly, c.Source, c.IsSensitive = e.Name, e.ReadOnly, int8(e.Source), e.Sensitive
		if !e.Null && !e.Sensitive {
			c.Value = str(e.Value)
		}
		out = append(out, c)
	}
	return out
}

// autoCreate creates one topic for Metadata with the broker defaults. It
// returns the topic, or a code for the Metadata response.
func (s *State) autoCreate(name string, now time.Time) (*Topic, Effects, *topicError) {
	r := topicRequest{name: name, partitions: -1, rf: -1}
	if terr := s.checkNewTopic(&r, nil); terr != nil {
		if terr.code == kerr.TopicAlreadyExists {
			// Marked for deletion: the name is not available yet.
			return nil, Effects{}, fail(kerr.UnknownTopicOrPartition, "%s", terr.msg)
		}
		return nil, Effects{}, terr
	}
	next := s.snap.clone()
	t, err := s.newTopic(&r, now, map[string]int{})
	if err != nil {
		return nil, Effects{}, fail(kerr.UnknownServerError, "%v", err)
	}
	next.Topics = append(next.Topics, t)
	if err := s.commit(next); err != nil {
		return nil, Effects{}, fail(kerr.KafkaStorageError, "Could not persist the topic: %v", err)
	}
	live := s.byName[name]
	return live, Effects{Start: s.specs(live, live.Partitions)}, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
