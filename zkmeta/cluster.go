package zkmeta

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/go-zookeeper/zk"
)

// EnsurePersistentPaths creates the paths every Kafka broker makes sure
// exist at startup (ZkData.PersistentZkPaths, KafkaZkClient.createTopLevelPaths).
func (c *Client) EnsurePersistentPaths() error {
	for _, p := range PersistentPaths {
		if err := c.createRecursive(p, nil, false); err != nil {
			return err
		}
	}
	return nil
}

// EncodeClusterID is ClusterIdZNode.toJson: {"version":"1","id":"..."}
// (the version is a string here).
func EncodeClusterID(id string) []byte {
	return object([]field{{"version", jStr("1")}, {"id", jStr(id)}})
}

// DecodeClusterID is ClusterIdZNode.fromJson.
func DecodeClusterID(data []byte) (string, error) {
	var j struct {
		ID *string `json:"id"`
	}
	if err := decodeJSON("cluster id", data, &j); err != nil {
		return "", err
	}
	if j.ID == nil {
		return "", fmt.Errorf("zkmeta: /cluster/id without id: %q", truncate(data))
	}
	return *j.ID, nil
}

// ClusterID reads /cluster/id; ErrNoNode when none was written.
func (c *Client) ClusterID() (string, error) {
	data, _, err := c.get(PathClusterID)
	if err != nil {
		return "", err
	}
	return DecodeClusterID(data)
}

// GetOrCreateClusterID is KafkaServer.getOrGenerateClusterId: the id in
// /cluster/id, or, when there is none, newID()'s (Kafka's is a random
// topic-id-style UUID: NewTopicID().String()), written unless another
// broker won the race, whose id is then returned.
func (c *Client) GetOrCreateClusterID(newID func() string) (string, error) {
	id, err := c.ClusterID()
	if !errors.Is(err, zk.ErrNoNode) {
		return id, err
	}
	proposed := newID()
	err = c.createRecursive(PathClusterID, EncodeClusterID(proposed), true)
	if err == nil {
		return proposed, nil
	}
	if !errors.Is(err, zk.ErrNodeExists) {
		return "", err
	}
	return c.ClusterID()
}

// FeatureZNode status values.
const (
	FeaturesDisabled int32 = 0
	FeaturesEnabled  int32 = 1
)

// Features is /feature (KIP-584) as Kafka 3.9 writes it in ZooKeeper mode
// (version 2): the cluster's finalized features, name -> max version level.
type Features struct {
	Version   int32 // 1 or 2 (read); written as 2
	Status    int32
	Finalized map[string]int16
}

// EncodeFeatures is FeatureZNode.encode at version 2:
// {"features":{"name":{"max_version_level":n}},"version":2,"status":1}.
func EncodeFeatures(f Features) []byte {
	names := slices.Sorted(maps.Keys(f.Finalized))
	fields := make([]field, 0, len(names))
	for _, n := range scalaImmutableOrder(names) {
		fields = append(fields, field{n, object([]field{{"max_version_level", jInt(int64(f.Finalized[n]))}})})
	}
	return object(orderFields([]field{
		{"version", jInt(2)},
		{"status", jInt(int64(f.Status))},
		{"features", object(fields)},
	}, func(k []string) []string { return scalaMutableOrder(3, k) }))
}

// DecodeFeatures is FeatureZNode.decode: versions 1 and 2.
func DecodeFeatures(data []byte) (Features, error) {
	var j struct {
		Version  *int32                      `json:"version"`
		Status   *int32                      `json:"status"`
		Features map[string]map[string]int16 `json:"features"`
	}
	if err := decodeJSON("feature", data, &j); err != nil {
		return Features{}, err
	}
	if j.Version == nil || *j.Version < 1 || *j.Version > 2 || j.Status == nil || j.Features == nil {
		return Features{}, fmt.Errorf("zkmeta: unsupported feature znode: %q", truncate(data))
	}
	f := Features{Version: *j.Version, Status: *j.Status, Finalized: map[string]int16{}}
	for n, v := range j.Features {
		maxV, ok := v["max_version_level"]
		if !ok {
			return Features{}, fmt.Errorf("zkmeta: feature %q without max_version_level: %q", n, truncate(data))
		}
		f.Finalized[n] = maxV
	}
	return f, nil
}

// EnsureFeatures is the controller's KafkaController.enableFeatureVersioning
// with a broker that supports no features (Kafka 3.9's ZooKeeper brokers,
// BrokerFeatures.createEmpty): /feature is created as
// {"features":{},"version":2,"status":1} when missing, and a disabled one
// is enabled with no features. It returns the znode's version.
func (c *Client) EnsureFeatures() (int32, error) {
	data, st, err := c.get(PathFeature)
	if errors.Is(err, zk.ErrNoNode) {
		_, err := c.create(PathFeature, EncodeFeatures(Features{Status: FeaturesEnabled}), 0)
		if err == nil {
			return 0, nil
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			return 0, err
		}
		return c.EnsureFeatures()
	}
	if err != nil {
		return 0, err
	}
	cur, err := DecodeFeatures(data)
	if err != nil {
		return 0, err
	}
	next := Features{Version: 2, Status: FeaturesEnabled, Finalized: cur.Finalized}
	if cur.Status != FeaturesEnabled {
		next.Finalized = nil
	}
	if cur.Version == 2 && cur.Status == FeaturesEnabled {
		return st.Version, nil
	}
	st, err = c.set(PathFeature, EncodeFeatures(next), -1)
	if err != nil {
		return 0, err
	}
	return st.Version, nil
}
