package zkmeta

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/go-zookeeper/zk"
)

// TopicID is a topic's UUID.
type TopicID [16]byte

// String is Kafka's Uuid.toString: unpadded URL-safe base64 (22 chars).
func (id TopicID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// IsZero reports whether id is the zero UUID (Kafka's Uuid.ZERO_UUID,
// "no topic id").
func (id TopicID) IsZero() bool { return id == TopicID{} }

// ParseTopicID is Kafka's Uuid.fromString (padding tolerated).
func ParseTopicID(s string) (TopicID, error) {
	var id TopicID
	raw, err := base64.RawURLEncoding.DecodeString(trimPadding(s))
	if err != nil || len(raw) != 16 {
		return id, fmt.Errorf("zkmeta: malformed topic id %q", s)
	}
	copy(id[:], raw)
	return id, nil
}

func trimPadding(s string) string {
	for len(s) > 0 && s[len(s)-1] == '=' {
		s = s[:len(s)-1]
	}
	return s
}

// NewTopicID is Uuid.randomUuid: random, never zero, and never one whose
// string starts with '-' (Kafka avoids those, they read as flags).
func NewTopicID() TopicID {
	for {
		var id TopicID
		_, _ = rand.Read(id[:])
		// Version 4, variant 2, as java.util.UUID.randomUUID.
		id[6] = id[6]&0x0f | 0x40
		id[8] = id[8]&0x3f | 0x80
		if !id.IsZero() && id.String()[0] != '-' {
			return id
		}
	}
}

// TopicAssignment is /brokers/topics/<t>:
// {"version":3,"partitions":{"0":[1,2,3]},"adding_replicas":{},"removing_replicas":{},"topic_id":"..."}.
type TopicAssignment struct {
	Name             string
	ID               TopicID // zero = none written
	Partitions       map[int32][]int32
	Adding, Removing map[int32][]int32 // reassignment in progress; empty lists are not written
	Version          int32             // znode stat version (read only; the CAS version of SetAssignment)
}

// EncodeTopicAssignment is TopicZNode.encode (version 3).
func EncodeTopicAssignment(a TopicAssignment) []byte {
	fields := []field{
		{"version", jInt(3)},
		{"partitions", encodeReplicaMap(a.Partitions, true)},
		{"adding_replicas", encodeReplicaMap(a.Adding, false)},
		{"removing_replicas", encodeReplicaMap(a.Removing, false)},
	}
	if !a.ID.IsZero() {
		fields = append(fields, field{"topic_id", jStr(a.ID.String())})
	}
	return object(orderFields(fields, func(k []string) []string { return scalaMutableOrder(4, k) }))
}

// encodeReplicaMap writes partition -> replicas as Kafka's
// mutable.Map[String, List] (empty lists left out unless keepEmpty).
func encodeReplicaMap(m map[int32][]int32, keepEmpty bool) []byte {
	ps := make([]int32, 0, len(m))
	for p, rs := range m {
		if keepEmpty || len(rs) > 0 {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	fields := make([]field, len(ps))
	for i, p := range ps {
		fields[i] = field{strconv.Itoa(int(p)), jInts(m[p])}
	}
	return object(orderFields(fields, func(k []string) []string { return scalaMutableOrder(0, k) }))
}

// DecodeTopicAssignment is TopicZNode.decode: any version, topic_id
// optional, adding/removing optional.
func DecodeTopicAssignment(topic string, data []byte) (TopicAssignment, error) {
	a := TopicAssignment{Name: topic, Partitions: map[int32][]int32{}}
	if len(data) == 0 {
		return a, nil // Kafka: an empty assignment
	}
	var j struct {
		TopicID  *string            `json:"topic_id"`
		Parts    map[string][]int32 `json:"partitions"`
		Adding   map[string][]int32 `json:"adding_replicas"`
		Removing map[string][]int32 `json:"removing_replicas"`
	}
	if err := decodeJSON("topic "+topic, data, &j); err != nil {
		return a, err
	}
	if j.TopicID != nil {
		id, err := ParseTopicID(*j.TopicID)
		if err != nil {
			return a, fmt.Errorf("zkmeta: topic %s: %w", topic, err)
		}
		a.ID = id
	}
	conv := func(m map[string][]int32) (map[int32][]int32, error) {
		out := make(map[int32][]int32, len(m))
		for k, v := range m {
			p, err := strconv.ParseInt(k, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("zkmeta: topic %s: partition %q: %w", topic, k, err)
			}
			if v == nil {
				v = []int32{}
			}
			out[int32(p)] = v
		}
		return out, nil
	}
	var err error
	if a.Partitions, err = conv(j.Parts); err != nil {
		return a, err
	}
	if a.Adding, err = conv(j.Adding); err != nil {
		return a, err
	}
	if a.Removing, err = conv(j.Removing); err != nil {
		return a, err
	}
	return a, nil
}

// WatchTopics lists /brokers/topics (sorted) and arms a one-shot watch on
// the list.
func (c *Client) WatchTopics() (names []string, changed <-chan struct{}, err error) {
	names, ch, err := c.childrenW(PathTopics)
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(names)
	return names, ch, nil
}

// Topics lists /brokers/topics, sorted.
func (c *Client) Topics() ([]string, error) {
	names, err := c.children(PathTopics)
	slices.Sort(names)
	return names, err
}

// Assignment reads /brokers/topics/<topic>; ErrNoNode when there is no
// such topic.
func (c *Client) Assignment(topic string) (TopicAssignment, error) {
	data, st, err := c.get(TopicPath(topic))
	if err != nil {
		return TopicAssignment{}, err
	}
	a, err := DecodeTopicAssignment(topic, data)
	a.Version = st.Version
	return a, err
}

// WatchAssignment reads /brokers/topics/<topic> and arms a one-shot watch
// on it (partitions added, topic deleted).
func (c *Client) WatchAssignment(topic string) (TopicAssignment, <-chan struct{}, error) {
	data, st, ch, err := c.getW(TopicPath(topic))
	if err != nil {
		return TopicAssignment{}, nil, err
	}
	a, err := DecodeTopicAssignment(topic, data)
	a.Version = st.Version
	return a, ch, err
}

// CreateTopic is AdminZkClient.createTopicWithAssignment: it writes the
// topic's config (/config/topics/<t>, also when configs is empty), then
// creates /brokers/topics/<t>. A topic that exists, or is marked for
// deletion, is ErrNodeExists (Kafka's TopicExistsException). A zero a.ID
// gets a random topic id, as Kafka 3.9 (IBP >= 2.8) does.
func (c *Client) CreateTopic(a TopicAssignment, configs map[string]string) error {
	if marked, _, err := c.exists(DeleteTopicPath(a.Name)); err != nil {
		return err
	} else if marked {
		return fmt.Errorf("zkmeta: topic %q is marked for deletion: %w", a.Name, ErrNodeExists)
	}
	if ok, _, err := c.exists(TopicPath(a.Name)); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("zkmeta: topic %q already exists: %w", a.Name, ErrNodeExists)
	}
	if err := c.setOrCreateEntityConfig(ConfigTopics, a.Name, configs); err != nil {
		return err
	}
	if a.ID.IsZero() {
		a.ID = NewTopicID()
	}
	if err := c.createRecursive(TopicPath(a.Name), EncodeTopicAssignment(a), true); err != nil {
		if errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("zkmeta: topic %q already exists: %w", a.Name, err)
		}
		return err
	}
	return nil
}

// SetAssignment rewrites /brokers/topics/<t> if its version is still
// a.Version (CreatePartitions, reassignment); ErrBadVersion otherwise.
func (c *Client) SetAssignment(a TopicAssignment) error {
	_, err := c.set(TopicPath(a.Name), EncodeTopicAssignment(a), a.Version)
	return err
}

// MarkTopicForDeletion is AdminZkClient.deleteTopic: it creates
// /admin/delete_topics/<topic> for the controller to act on. ErrNoNode
// when there is no such topic, ErrNodeExists when it is already marked.
func (c *Client) MarkTopicForDeletion(topic string) error {
	if ok, _, err := c.exists(TopicPath(topic)); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("zkmeta: topic %q does not exist: %w", topic, ErrNoNode)
	}
	return c.createRecursive(DeleteTopicPath(topic), nil, true)
}

// WatchDeleteTopics lists /admin/delete_topics (sorted) and arms a
// one-shot watch on it.
func (c *Client) WatchDeleteTopics() (names []string, changed <-chan struct{}, err error) {
	names, ch, err := c.childrenW(PathDeleteTopics)
	if errors.Is(err, zk.ErrNoNode) {
		if err := c.createRecursive(PathDeleteTopics, nil, false); err != nil {
			return nil, nil, err
		}
		names, ch, err = c.childrenW(PathDeleteTopics)
	}
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(names)
	return names, ch, nil
}

// DeleteTopic is the controller's end of a topic deletion
// (TopicDeletionManager.completeDeleteTopic): /brokers/topics/<t> and all
// under it, /config/topics/<t>, then /admin/delete_topics/<t>, each write
// fenced by epochZkVersion (ErrControllerMoved). Parts already gone are
// skipped, so a controller that failed over halfway can run it again.
func (c *Client) DeleteTopic(epochZkVersion int32, topic string) error {
	if err := c.deleteRecursive(TopicPath(topic), true, epochZkVersion); err != nil {
		return err
	}
	if err := c.fencedDelete(epochZkVersion, ConfigPath(ConfigTopics, topic)); err != nil {
		return err
	}
	return c.fencedDelete(epochZkVersion, DeleteTopicPath(topic))
}

// RemoveDeletionMarker deletes /admin/delete_topics/<topic> alone, fenced
// (a marker for a topic that does not exist, or with deletion disabled).
func (c *Client) RemoveDeletionMarker(epochZkVersion int32, topic string) error {
	return c.fencedDelete(epochZkVersion, DeleteTopicPath(topic))
}

func (c *Client) fencedDelete(epochZkVersion int32, p string) error {
	_, err := c.fenced(epochZkVersion, &zk.DeleteRequest{Path: c.abs(p), Version: -1})
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return pathError("delete", p, err)
}
