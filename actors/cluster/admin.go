package cluster

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/wire/kerr"
)

// In cluster mode any broker serves the admin APIs the way Kafka's
// ZK-mode AdminManager does: it checks the request against its view,
// computes replica assignments, and writes ZooKeeper; the controller
// does the rest. The plans below are the pure half; the metadata actor
// writes them and waits for its view to show the result.

// Defaults are what a request may leave to the broker.
type Defaults struct {
	Partitions        int32
	ReplicationFactor int16
	Layers            config.Layers // for the effective configs of an answer
}

// TopicPlan is one topic to write to ZooKeeper.
type TopicPlan struct {
	At         int // index in the response's topics
	Name       string
	ID         [16]byte
	Assignment map[int32][]int32
	Configs    map[string]string
}

// PlanCreateTopics checks a CreateTopics request (v0-7) against the view
// and plans the topics to write (none when validate_only). Exists says
// whether a name is taken in ZooKeeper beyond the view (a topic being
// created or deleted).
func (v *View) PlanCreateTopics(req *kmsg.CreateTopicsRequest, d Defaults, exists func(string) bool, rnd *rand.Rand) ([]TopicPlan, *kmsg.CreateTopicsResponse) {
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	counts := make(map[string]int)
	for _, rt := range req.Topics {
		counts[rt.Topic]++
	}
	var plans []TopicPlan
	for _, rt := range req.Topics {
		out := kmsg.NewCreateTopicsResponseTopic()
		out.Topic = rt.Topic
		out.NumPartitions, out.ReplicationFactor = -1, -1
		plan, code, msg := v.planTopic(rt, d, exists, rnd)
		if counts[rt.Topic] > 1 {
			code, msg = kerr.InvalidRequest, fmt.Sprintf("Create topics request from client contains multiple entries for the following topics: %s", rt.Topic)
		}
		if code != kerr.None {
			out.ErrorCode, out.ErrorMessage = code.Int16(), &msg
			resp.Topics = append(resp.Topics, out)
			continue
		}
		out.NumPartitions, out.ReplicationFactor = int32(len(plan.Assignment)), int16(len(plan.Assignment[0]))
		out.TopicID = plan.ID
		for _, def := range config.TopicDefs() {
			e, _ := config.ResolveTopic(def.Name, plan.Configs, d.Layers)
			c := kmsg.NewCreateTopicsResponseTopicConfig()
			c.Name, c.ReadOnly, c.Source, c.IsSensitive = e.Name, e.ReadOnly, int8(e.Source), e.Sensitive
			if !e.Null && !e.Sensitive {
				c.Value = str(e.Value)
			}
			out.Configs = append(out.Configs, c)
		}
		if !req.ValidateOnly {
			plan.At = len(resp.Topics)
			plans = append(plans, plan)
		}
		resp.Topics = append(resp.Topics, out)
	}
	return plans, resp
}

func (v *View) planTopic(rt kmsg.CreateTopicsRequestTopic, d Defaults, exists func(string) bool, rnd *rand.Rand) (TopicPlan, kerr.Code, string) {
	p := TopicPlan{Name: rt.Topic, Configs: map[string]string{}}
	if err := metadata.ValidateTopicName(rt.Topic); err != nil {
		return p, kerr.InvalidTopicException, err.Error()
	}
	if _, ok := v.Topics[rt.Topic]; ok || exists(rt.Topic) {
		return p, kerr.TopicAlreadyExists, fmt.Sprintf("Topic '%s' already exists.", rt.Topic)
	}
	for name := range v.Topics {
		if name != rt.Topic && collides(name, rt.Topic) {
			return p, kerr.InvalidTopicException, fmt.Sprintf("Topic '%s' collides with existing topic: %s", rt.Topic, name)
		}
	}
	for _, c := range rt.Configs {
		if c.Value == nil {
			return p, kerr.InvalidConfig, fmt.Sprintf("Null value not supported for topic configs: %s", c.Name)
		}
		if err := config.ValidateTopic(c.Name, *c.Value); err != nil {
			return p, kerr.InvalidConfig, config.ClientMessage(err)
		}
		p.Configs[c.Name] = *c.Value
	}
	live := len(v.Brokers)
	if len(rt.ReplicaAssignment) > 0 {
		if rt.NumPartitions != -1 || rt.ReplicationFactor != -1 {
			return p, kerr.InvalidRequest, "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time."
		}
		p.Assignment = make(map[int32][]int32, len(rt.ReplicaAssignment))
		for _, a := range rt.ReplicaAssignment {
			if code, msg := v.checkReplicas(a.Partition, a.Replicas); code != kerr.None {
				return p, code, msg
			}
			p.Assignment[a.Partition] = a.Replicas
		}
		for i := range int32(len(p.Assignment)) {
			if _, ok := p.Assignment[i]; !ok {
				return p, kerr.InvalidReplicaAssignment, "Unexpected existing replica assignment for topic '" + rt.Topic + "', partition ids must be consecutive and start at 0."
			}
		}
		rf := len(p.Assignment[0])
		for _, r := range p.Assignment {
			if len(r) != rf {
				return p, kerr.InvalidReplicaAssignment, "All partitions should have the same number of replicas"
			}
		}
	} else {
		parts, rf := rt.NumPartitions, rt.ReplicationFactor
		if parts == -1 {
			parts = d.Partitions
		}
		if rf == -1 {
			rf = d.ReplicationFactor
		}
		switch {
		case parts < 1:
			return p, kerr.InvalidPartitions, "Number of partitions must be larger than 0."
		case parts > metadata.MaxPartitionsPerTopic:
			return p, kerr.InvalidPartitions, fmt.Sprintf("Number of partitions %d is above the limit of %d per topic.", parts, metadata.MaxPartitionsPerTopic)
		case rf < 1:
			return p, kerr.InvalidReplicationFactor, "Replication factor must be larger than 0."
		case int(rf) > live:
			return p, kerr.InvalidReplicationFactor, fmt.Sprintf("Replication factor: %d larger than available brokers: %d.", rf, live)
		}
		a, err := Assign(AssignInput{Brokers: v.racks(), Partitions: parts, ReplicationFactor: rf, FixedStart: -1, Rand: rnd})
		if err != nil {
			return p, kerr.InvalidReplicaAssignment, err.Error()
		}
		p.Assignment = a
	}
	for {
		var id [16]byte
		for i := range id {
			id[i] = byte(rnd.UintN(256))
		}
		if _, taken := v.byID[id]; !taken && id != [16]byte{} {
			p.ID = id
			break
		}
	}
	return p, kerr.None, ""
}

// checkReplicas checks one partition's explicit replica list.
func (v *View) checkReplicas(partition int32, replicas []int32) (kerr.Code, string) {
	if len(replicas) == 0 {
		return kerr.InvalidReplicaAssignment, fmt.Sprintf("Replica assignment for partition %d is empty.", partition)
	}
	seen := map[int32]bool{}
	for _, b := range replicas {
		if seen[b] {
			return kerr.InvalidReplicaAssignment, fmt.Sprintf("Duplicate brokers not allowed in replica assignment: %v for partition id %d.", replicas, partition)
		}
		seen[b] = true
		if _, ok := v.Brokers[b]; !ok {
			return kerr.InvalidReplicaAssignment, fmt.Sprintf("Unknown broker %d in replica assignment %v for partition id %d.", b, replicas, partition)
		}
	}
	return kerr.None, ""
}

func (v *View) racks() map[int32]string {
	m := make(map[int32]string, len(v.Brokers))
	for id, b := range v.Brokers {
		m[id] = b.Rack
	}
	return m
}

// collides reports whether two names are equal once '.' and '_' are
// taken as one (Kafka's Topic.hasCollision).
func collides(a, b string) bool {
	norm := func(s string) string {
		out := []byte(s)
		for i, c := range out {
			if c == '.' {
				out[i] = '_'
			}
		}
		return string(out)
	}
	return norm(a) == norm(b)
}

// GrowthPlan is one topic's new full assignment.
type GrowthPlan struct {
	At         int
	Name       string
	Assignment map[int32][]int32 // existing partitions and the new ones
}

// PlanCreatePartitions checks a CreatePartitions request (v0-3): the
// count only grows; explicit assignments name live brokers and as many
// replicas as the topic has.
func (v *View) PlanCreatePartitions(req *kmsg.CreatePartitionsRequest, deleting func(string) bool, rnd *rand.Rand) ([]GrowthPlan, *kmsg.CreatePartitionsResponse) {
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	counts := make(map[string]int)
	for _, rt := range req.Topics {
		counts[rt.Topic]++
	}
	var plans []GrowthPlan
	for _, rt := range req.Topics {
		out := kmsg.NewCreatePartitionsResponseTopic()
		out.Topic = rt.Topic
		plan, code, msg := v.planGrowth(rt, deleting, rnd)
		if counts[rt.Topic] > 1 {
			code, msg = kerr.InvalidRequest, "Duplicate topic in request."
		}
		if code != kerr.None {
			out.ErrorCode, out.ErrorMessage = code.Int16(), &msg
		} else if !req.ValidateOnly {
			plan.At = len(resp.Topics)
			plans = append(plans, plan)
		}
		resp.Topics = append(resp.Topics, out)
	}
	return plans, resp
}

func (v *View) planGrowth(rt kmsg.CreatePartitionsRequestTopic, deleting func(string) bool, rnd *rand.Rand) (GrowthPlan, kerr.Code, string) {
	p := GrowthPlan{Name: rt.Topic}
	t, ok := v.Topics[rt.Topic]
	if !ok {
		return p, kerr.UnknownTopicOrPartition, fmt.Sprintf("The topic '%s' does not exist.", rt.Topic)
	}
	if deleting(rt.Topic) {
		return p, kerr.InvalidTopicException, fmt.Sprintf("The topic '%s' is queued for deletion.", rt.Topic)
	}
	have := int32(len(t.Partitions))
	switch {
	case rt.Count < have:
		return p, kerr.InvalidPartitions, fmt.Sprintf("Topic currently has %d partitions, which is higher than the requested %d.", have, rt.Count)
	case rt.Count == have:
		return p, kerr.InvalidPartitions, fmt.Sprintf("Topic already has %d partitions.", have)
	case rt.Count > metadata.MaxPartitionsPerTopic:
		return p, kerr.InvalidPartitions, fmt.Sprintf("Number of partitions %d is above the limit of %d per topic.", rt.Count, metadata.MaxPartitionsPerTopic)
	}
	p.Assignment = make(map[int32][]int32, rt.Count)
	for i, part := range t.Partitions {
		if part == nil {
			return p, kerr.InvalidPartitions, "The topic's partitions are not all known yet; try again."
		}
		p.Assignment[int32(i)] = part.Replicas
	}
	rf := len(p.Assignment[0])
	adding := rt.Count - have
	if rt.Assignment != nil {
		if int32(len(rt.Assignment)) != adding {
			return p, kerr.InvalidReplicaAssignment, fmt.Sprintf("Increasing the number of partitions by %d but %d assignments provided.", adding, len(rt.Assignment))
		}
		for i, a := range rt.Assignment {
			part := have + int32(i)
			if code, msg := v.checkReplicas(part, a.Replicas); code != kerr.None {
				return p, code, msg
			}
			if len(a.Replicas) != rf {
				return p, kerr.InvalidReplicaAssignment, fmt.Sprintf("Inconsistent replication factor between partitions, partition 0 has %d while partition %d has replication factor %d.", rf, part, len(a.Replicas))
			}
			p.Assignment[part] = a.Replicas
		}
		return p, kerr.None, ""
	}
	if rf > len(v.Brokers) {
		return p, kerr.InvalidReplicationFactor, fmt.Sprintf("Replication factor: %d larger than available brokers: %d.", rf, len(v.Brokers))
	}
	brokers := slices.Sorted(maps.Keys(v.Brokers))
	start := max(0, slices.IndexFunc(brokers, func(b int32) bool { return b >= p.Assignment[0][0] }))
	a, err := Assign(AssignInput{Brokers: v.racks(), Partitions: adding, ReplicationFactor: int16(rf), FixedStart: start, StartPartition: have, Rand: rnd})
	if err != nil {
		return p, kerr.InvalidReplicaAssignment, err.Error()
	}
	maps.Copy(p.Assignment, a)
	return p, kerr.None, ""
}
