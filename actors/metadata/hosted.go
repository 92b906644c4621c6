package metadata

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
)

// In cluster mode the controller, not this State, owns topics: the State
// holds only the replicas the controller gave this broker (LeaderAndIsr),
// under the topic ids the controller named, with the leader epoch of each
// and the topic's configs as ZooKeeper has them. A topic here may
// therefore hold any subset of its partitions. Holding them in the same
// snapshot as single-node topics means a restart reopens exactly the logs
// this broker held, and the deletion bookkeeping (Deleting) works as it
// does alone.

// ErrClusterIDMismatch is returned by NewInCluster when the data
// directory belongs to another cluster.
var ErrClusterIDMismatch = errors.New("metadata: the data directory belongs to another cluster")

// NewInCluster is New for a broker of the cluster clusterID (read from
// ZooKeeper): a fresh data directory takes that id; one that holds
// another is refused, as Kafka refuses a meta.properties of another
// cluster.
func NewInCluster(broker *config.Broker, snap *Snapshot, store Store, rand io.Reader, clusterID string) (*State, error) {
	if snap == nil {
		snap = &Snapshot{Version: SnapshotVersion, ClusterID: clusterID, BrokerID: broker.BrokerID}
		if err := store.Save(snap); err != nil {
			return nil, err
		}
	}
	if snap.ClusterID != clusterID {
		return nil, fmt.Errorf("%w: ZooKeeper's cluster id is %s, the data directory's %s; point zookeeper.connect at the cluster this broker belongs to, or give it an empty data directory",
			ErrClusterIDMismatch, clusterID, snap.ClusterID)
	}
	return New(broker, snap, store, rand)
}

// Replica is one partition replica the controller gave this broker.
type Replica struct {
	Topic       string
	ID          TopicID
	Partition   int32
	LeaderEpoch int32
}

// Held finds a replica this broker holds: its topic id and leader epoch.
func (s *State) Held(topic string, partition int32) (TopicID, int32, bool) {
	t, ok := s.byName[topic]
	if !ok {
		return TopicID{}, 0, false
	}
	for _, p := range t.Partitions {
		if p.Index == partition {
			return t.ID, p.LeaderEpoch, true
		}
	}
	return TopicID{}, 0, false
}

// Host records replicas the controller gave this broker (new ones, or new
// leader epochs of held ones), persisted in one save; the effects open
// the new ones' logs. configs are the topic configs of new topics, as
// ZooKeeper has them.
func (s *State) Host(replicas []Replica, configs map[string]map[string]string, now time.Time) (Effects, error) {
	next := s.snap.clone()
	index := make(map[string]int, len(next.Topics))
	for i, t := range next.Topics {
		index[t.Name] = i
	}
	planned := map[string]int{}
	type added struct {
		topic string
		part  Partition
	}
	var fresh []added
	for _, r := range replicas {
		i, ok := index[r.Topic]
		if !ok {
			next.Topics = append(next.Topics, Topic{Name: r.Topic, ID: r.ID, Configs: maps.Clone(configs[r.Topic]), Created: now})
			i = len(next.Topics) - 1
			index[r.Topic] = i
		}
		t := &next.Topics[i]
		if t.ID != r.ID && !r.ID.IsZero() {
			return Effects{}, fmt.Errorf("metadata: topic %s is held as %s, the controller names %s", r.Topic, t.ID, r.ID)
		}
		j := slices.IndexFunc(t.Partitions, func(p Partition) bool { return p.Index == r.Partition })
		if j >= 0 {
			t.Partitions[j].LeaderEpoch = r.LeaderEpoch
			continue
		}
		p := Partition{Index: r.Partition, Dir: s.pickDir(planned), LeaderEpoch: r.LeaderEpoch}
		t.Partitions = append(t.Partitions, p)
		fresh = append(fresh, added{r.Topic, p})
	}
	if err := s.commit(next); err != nil {
		return Effects{}, err
	}
	var eff Effects
	for _, f := range fresh {
		t := s.byName[f.topic]
		eff.Start = append(eff.Start, s.specs(t, []Partition{f.part})...)
	}
	return eff, nil
}

// Unhost gives up replicas (StopReplica with delete): they leave their
// topics (a topic left with none goes) and wait in Deleting until the
// shell reports their files gone (FinishDeletion), so a restart resumes
// the removal. The effects remove them.
func (s *State) Unhost(topic string, partitions []int32) (Effects, error) {
	t, ok := s.byName[topic]
	if !ok {
		return Effects{}, nil
	}
	next := s.snap.clone()
	i := slices.IndexFunc(next.Topics, func(x Topic) bool { return x.Name == topic })
	nt := &next.Topics[i]
	var gone []Partition
	nt.Partitions = slices.DeleteFunc(nt.Partitions, func(p Partition) bool {
		if slices.Contains(partitions, p.Index) {
			gone = append(gone, p)
			return true
		}
		return false
	})
	if len(gone) == 0 {
		return Effects{}, nil
	}
	d := slices.IndexFunc(next.Deleting, func(x Topic) bool { return x.ID == t.ID })
	if d < 0 {
		next.Deleting = append(next.Deleting, Topic{Name: t.Name, ID: t.ID, Created: t.Created})
		d = len(next.Deleting) - 1
	}
	next.Deleting[d].Partitions = append(next.Deleting[d].Partitions, gone...)
	if len(nt.Partitions) == 0 {
		next.Topics = slices.Delete(next.Topics, i, i+1)
	}
	if err := s.commit(next); err != nil {
		return Effects{}, err
	}
	eff := Effects{}
	for _, p := range gone {
		eff.Delete = append(eff.Delete, PartitionRef{Topic: topic, ID: t.ID, Partition: p.Index, Dir: p.Dir})
	}
	return eff, nil
}

// SetTopicConfigs replaces a held topic's dynamic configs with
// ZooKeeper's (a config change notification); the effects reconfigure
// its partitions live.
func (s *State) SetTopicConfigs(topic string, configs map[string]string) (Effects, error) {
	t, ok := s.byName[topic]
	if !ok || maps.Equal(t.Configs, configs) {
		return Effects{}, nil
	}
	next := s.snap.clone()
	i := slices.IndexFunc(next.Topics, func(x Topic) bool { return x.Name == topic })
	next.Topics[i].Configs = maps.Clone(configs)
	if err := s.commit(next); err != nil {
		return Effects{}, err
	}
	live := s.byName[topic]
	return Effects{Reconfigure: []TopicConfig{{Topic: topic, ID: live.ID, Config: s.TopicConfig(live)}}}, nil
}

// SetBrokerConfigs replaces the dynamic broker configs with ZooKeeper's
// (/config/brokers/<id>, or /config/brokers/<default> when
// clusterDefault): the layers every held topic's defaults and the
// broker's own dynamic settings resolve against. Every held topic is
// reconfigured, since its inherited values may have moved; keys newly
// set that samsa does not act on are named once in Unapplied.
func (s *State) SetBrokerConfigs(clusterDefault bool, configs map[string]string) (Effects, error) {
	if len(configs) == 0 {
		configs = nil
	}
	current, name := s.snap.DynamicBroker, strconv.Itoa(int(s.snap.BrokerID))
	if clusterDefault {
		current, name = s.snap.DynamicDefault, ""
	}
	if maps.Equal(current, configs) {
		return Effects{}, nil
	}
	next := s.snap.clone()
	if clusterDefault {
		next.DynamicDefault = maps.Clone(configs)
	} else {
		next.DynamicBroker = maps.Clone(configs)
	}
	if err := s.commit(next); err != nil {
		return Effects{}, err
	}
	var set []Alteration
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		if _, _, known := config.DynamicBrokerDef(k); known && (current == nil || current[k] != configs[k]) {
			v := configs[k]
			set = append(set, Alteration{Name: k, Op: kmsg.IncrementalAlterConfigOpSet, Value: &v})
		}
	}
	eff := Effects{Unapplied: s.unappliedChanges(resourceResult{typ: kmsg.ConfigResourceTypeBroker, name: name}, set)}
	if !clusterDefault {
		eff.KeystoresChanged = changedKeystoreListeners(current, configs)
	}
	for i := range s.snap.Topics {
		t := &s.snap.Topics[i]
		eff.Reconfigure = append(eff.Reconfigure, TopicConfig{Topic: t.Name, ID: t.ID, Config: s.TopicConfig(t)})
	}
	return eff, nil
}
