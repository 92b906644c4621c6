package metadata

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
)

// SnapshotVersion is the version of the persisted snapshot layout.
const SnapshotVersion = 1

// TopicID is a topic's 16-byte UUID (Metadata v10+, DeleteTopics v6).
type TopicID [16]byte

// String is the id in Kafka's display form: unpadded URL-safe base64.
func (id TopicID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// MarshalText writes the id in its display form (the snapshot file).
func (id TopicID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText reads the display form.
func (id *TopicID) UnmarshalText(b []byte) error {
	raw, err := base64.RawURLEncoding.DecodeString(string(b))
	if err != nil || len(raw) != len(id) {
		return fmt.Errorf("metadata: bad topic id %q", b)
	}
	copy(id[:], raw)
	return nil
}

// IsZero reports whether id is the all-zero (unset) id.
func (id TopicID) IsZero() bool { return id == TopicID{} }

// Partition is one partition of a topic and where its log lives.
type Partition struct {
	Index       int32  `json:"index"`
	Dir         string `json:"dir"` // the log directory (one of log.dirs)
	LeaderEpoch int32  `json:"leader_epoch"`
}

// Topic is one topic's durable metadata.
type Topic struct {
	Name       string            `json:"name"`
	ID         TopicID           `json:"id"`
	Partitions []Partition       `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"` // dynamic topic configs
	Created    time.Time         `json:"created"`
}

// Snapshot is everything the metadata actor persists, in one file.
type Snapshot struct {
	Version   int     `json:"version"`
	ClusterID string  `json:"cluster_id"`
	BrokerID  int32   `json:"broker_id"`
	Topics    []Topic `json:"topics"`
	// DynamicDefault are cluster-wide dynamic broker configs (AlterConfigs
	// on the BROKER resource with an empty name); DynamicBroker are this
	// broker's own.
	DynamicDefault map[string]string `json:"dynamic_default,omitempty"`
	DynamicBroker  map[string]string `json:"dynamic_broker,omitempty"`
	// Groups are the dynamic group configs (IncrementalAlterConfigs on a
	// GROUP resource) by group id; a group need not exist to have them.
	// Absent in snapshots written before group configs: none set.
	Groups map[string]map[string]string `json:"groups,omitempty"`
	// Deleting are deleted topics whose files may not all be gone yet;
	// their names stay reserved, and a restart resumes their removal.
	Deleting []Topic `json:"deleting,omitempty"`
}

// clone deep-copies s so a failed save leaves the live state untouched.
func (s *Snapshot) clone() *Snapshot {
	c := *s
	c.Topics = make([]Topic, len(s.Topics))
	for i, t := range s.Topics {
		t.Partitions = slices.Clone(t.Partitions)
		t.Configs = maps.Clone(t.Configs)
		c.Topics[i] = t
	}
	c.Deleting = slices.Clone(s.Deleting)
	c.DynamicDefault = maps.Clone(s.DynamicDefault)
	c.DynamicBroker = maps.Clone(s.DynamicBroker)
	if s.Groups != nil {
		c.Groups = make(map[string]map[string]string, len(s.Groups))
		for g, cfg := range s.Groups {
			c.Groups[g] = maps.Clone(cfg)
		}
	}
	return &c
}

// Store persists snapshots atomically: after Save returns nil, a restart
// loads exactly that snapshot.
type Store interface {
	Save(*Snapshot) error
}

// Endpoint is the address clients are told to connect to.
type Endpoint struct {
	Host string
	Port int32
}

// ErrBrokerIDMismatch is returned by New when the data directory belongs
// to another broker id.
var ErrBrokerIDMismatch = errors.New("metadata: broker.id does not match the data directory")

// State is the metadata actor's core: topics, partitions, topic ids,
// dynamic configs and cluster identity. It is not safe for concurrent use;
// one actor owns it. It does no I/O besides Store.Save.
type State struct {
	broker   *config.Broker
	snap     *Snapshot
	store    Store
	rand     io.Reader
	endpoint Endpoint

	byName   map[string]*Topic
	byID     map[TopicID]*Topic
	deleting map[string]TopicID // names whose files are being removed

	// Metadata answers are built once per state change: the entries are
	// immutable and shared by every response until the next install.
	metaEntries map[string]kmsg.MetadataResponseTopic
	sortedNames []string

	// offline partitions (their log cannot be opened), not persisted: a
	// restart tries again.
	offline map[TopicID]map[int32]bool

	// unapplied are the dynamic config keys already reported as having no
	// effect (Effects.Unapplied), so each is reported once.
	unapplied map[string]bool

	// keystoreCheck checks the keystores a change of this broker's
	// configs would have listeners read (keystores.go); nil: none.
	keystoreCheck KeystoreCheck
}

// New builds the state from a loaded snapshot (nil for a fresh data
// directory, in which case a cluster id is generated and saved). rand
// supplies cluster and topic ids.
func New(broker *config.Broker, snap *Snapshot, store Store, rand io.Reader) (*State, error) {
	s := &State{broker: broker, store: store, rand: rand, offline: make(map[TopicID]map[int32]bool), unapplied: make(map[string]bool)}
	if snap == nil {
		var id [16]byte
		if _, err := io.ReadFull(rand, id[:]); err != nil {
			return nil, fmt.Errorf("metadata: cluster id: %w", err)
		}
		snap = &Snapshot{Version: SnapshotVersion, ClusterID: base64.RawURLEncoding.EncodeToString(id[:]), BrokerID: broker.BrokerID}
		if err := store.Save(snap); err != nil {
			return nil, err
		}
	}
	if snap.Version != SnapshotVersion {
		return nil, fmt.Errorf("metadata: snapshot version %d, this samsa reads %d", snap.Version, SnapshotVersion)
	}
	if snap.BrokerID != broker.BrokerID {
		return nil, fmt.Errorf("%w: configured broker.id=%d, data directory holds broker %d", ErrBrokerIDMismatch, broker.BrokerID, snap.BrokerID)
	}
	for _, t := range append(slices.Clone(snap.Topics), snap.Deleting...) {
		for _, p := range t.Partitions {
			if !slices.Contains(broker.LogDirs, p.Dir) {
				return nil, fmt.Errorf("metadata: partition %s-%d lives in %s, which is not in log.dirs %v", t.Name, p.Index, p.Dir, broker.LogDirs)
			}
		}
	}
	s.install(snap)
	if len(broker.Advertised) > 0 {
		s.endpoint = Endpoint{Host: broker.Advertised[0].Host, Port: int32(broker.Advertised[0].Port)}
	} else {
		s.endpoint = Endpoint{Host: broker.Listeners[0].Host, Port: int32(broker.Listeners[0].Port)}
	}
	return s, nil
}

func (s *State) install(snap *Snapshot) {
	s.snap = snap
	s.byName = make(map[string]*Topic, len(snap.Topics))
	s.byID = make(map[TopicID]*Topic, len(snap.Topics))
	for i := range snap.Topics {
		t := &snap.Topics[i]
		s.byName[t.Name] = t
		s.byID[t.ID] = t
	}
	s.metaEntries = make(map[string]kmsg.MetadataResponseTopic, len(snap.Topics))
	s.sortedNames = make([]string, 0, len(snap.Topics))
	for i := range snap.Topics {
		t := &snap.Topics[i]
		s.metaEntries[t.Name] = s.buildTopicEntry(t)
		s.sortedNames = append(s.sortedNames, t.Name)
	}
	slices.Sort(s.sortedNames)
	s.deleting = make(map[string]TopicID, len(snap.Deleting))
	for _, t := range snap.Deleting {
		s.deleting[t.Name] = t.ID
	}
}

// commit saves next and, on success, makes it the live state.
func (s *State) commit(next *Snapshot) error {
	if err := s.store.Save(next); err != nil {
		return err
	}
	s.install(next)
	return nil
}

// SetOffline marks a partition offline (its log cannot be opened) or back
// online. Metadata then reports it without a leader.
func (s *State) SetOffline(id TopicID, partition int32, offline bool) {
	t, ok := s.byID[id]
	if !ok || s.offline[id][partition] == offline {
		return
	}
	if offline {
		if s.offline[id] == nil {
			s.offline[id] = make(map[int32]bool)
		}
		s.offline[id][partition] = true
	} else {
		delete(s.offline[id], partition)
	}
	s.metaEntries[t.Name] = s.buildTopicEntry(t)
}

// SetEndpoint sets the address Metadata and DescribeCluster advertise.
func (s *State) SetEndpoint(e Endpoint) { s.endpoint = e }

// Endpoint is the advertised address.
func (s *State) Endpoint() Endpoint { return s.endpoint }

// ClusterID is the cluster's id, generated on first start.
func (s *State) ClusterID() string { return s.snap.ClusterID }

// BrokerID is this broker's id (also the controller in single-node mode).
func (s *State) BrokerID() int32 { return s.snap.BrokerID }

// Topics returns the live topics; callers must not modify them.
func (s *State) Topics() []Topic { return s.snap.Topics }

// Topic returns a topic by name.
func (s *State) Topic(name string) (*Topic, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// Layers is the broker-side config layers topics resolve against.
func (s *State) Layers() config.Layers {
	return config.Layers{DynamicBroker: s.snap.DynamicBroker, DynamicDefault: s.snap.DynamicDefault, Static: s.broker.Static}
}

// TopicConfig is the effective typed configuration of a topic.
func (s *State) TopicConfig(t *Topic) config.Topic {
	return config.ParseTopic(config.EffectiveTopic(t.Configs, s.Layers()))
}

// brokerInt is the effective value of an integer broker config, dynamic
// layers included.
func (s *State) brokerInt(name string) int64 {
	e, _ := config.ResolveBroker(name, s.Layers())
	return config.ParseInt(e.Value)
}

// StartAll returns the effects of a start: open every partition, and
// resume removing the files of topics whose deletion was interrupted.
func (s *State) StartAll() Effects {
	var eff Effects
	for i := range s.snap.Topics {
		t := &s.snap.Topics[i]
		eff.Start = append(eff.Start, s.specs(t, t.Partitions)...)
	}
	for _, t := range s.snap.Deleting {
		eff.Delete = append(eff.Delete, refs(t)...)
	}
	return eff
}

func refs(t Topic) []PartitionRef {
	out := make([]PartitionRef, len(t.Partitions))
	for i, p := range t.Partitions {
		out[i] = PartitionRef{Topic: t.Name, ID: t.ID, Partition: p.Index, Dir: p.Dir}
	}
	return out
}

func (s *State) specs(t *Topic, parts []Partition) []PartitionSpec {
	cfg := s.TopicConfig(t)
	out := make([]PartitionSpec, len(parts))
	for i, p := range parts {
		out[i] = PartitionSpec{Topic: t.Name, ID: t.ID, Partition: p.Index, Dir: p.Dir, LeaderEpoch: p.LeaderEpoch, Config: cfg}
	}
	return out
}

// pickDir returns the log directory with the fewest partitions, given
// extra planned counts.
func (s *State) pickDir(planned map[string]int) string {
	counts := make(map[string]int, len(s.broker.LogDirs))
	for _, t := range append(slices.Clone(s.snap.Topics), s.snap.Deleting...) {
		for _, p := range t.Partitions {
			counts[p.Dir]++
		}
	}
	best := s.broker.LogDirs[0]
	for _, d := range s.broker.LogDirs {
		if counts[d]+planned[d] < counts[best]+planned[best] {
			best = d
		}
	}
	planned[best]++
	return best
}

func (s *State) newTopicID() (TopicID, error) {
	for {
		var id TopicID
		if _, err := io.ReadFull(s.rand, id[:]); err != nil {
			return id, fmt.Errorf("metadata: topic id: %w", err)
		}
		if _, taken := s.byID[id]; !taken && !id.IsZero() {
			return id, nil
		}
	}
}
