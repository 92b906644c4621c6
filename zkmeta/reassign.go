package zkmeta

import (
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"
)

// /admin/reassign_partitions is the legacy way to ask for partition
// reassignments (Kafka's ReassignPartitionsZNode, deprecated by KIP-455
// but still honoured by Kafka 3.9's ZooKeeper controller):
// {"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}.
// An admin creates it; the controller starts what it lists, removes each
// entry as it completes, and deletes the znode when none is left.

// EncodeReassignPartitions is ReassignPartitionsZNode.encode; entries in
// topic, partition order (Kafka's follow its map's iteration order).
func EncodeReassignPartitions(parts map[TopicPartition][]int32) []byte {
	tps := make([]TopicPartition, 0, len(parts))
	for tp := range parts {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, compareTP)
	var list []byte
	list = append(list, '[')
	for i, tp := range tps {
		if i > 0 {
			list = append(list, ',')
		}
		list = append(list, object([]field{
			{"topic", jStr(tp.Topic)},
			{"partition", jInt(int64(tp.Partition))},
			{"replicas", jInts(parts[tp])},
		})...)
	}
	list = append(list, ']')
	return object([]field{{"version", jInt(1)}, {"partitions", list}})
}

// DecodeReassignPartitions is ReassignPartitionsZNode.decode.
func DecodeReassignPartitions(data []byte) (map[TopicPartition][]int32, error) {
	var j struct {
		Partitions []struct {
			Topic     string  `json:"topic"`
			Partition int32   `json:"partition"`
			Replicas  []int32 `json:"replicas"`
		} `json:"partitions"`
	}
	if err := decodeJSON("reassign_partitions", data, &j); err != nil {
		return nil, err
	}
	out := make(map[TopicPartition][]int32, len(j.Partitions))
	for _, p := range j.Partitions {
		rs := p.Replicas
		if rs == nil {
			rs = []int32{}
		}
		out[TopicPartition{Topic: p.Topic, Partition: p.Partition}] = rs
	}
	return out, nil
}

// WatchReassignPartitions reads /admin/reassign_partitions and arms a
// one-shot watch on it (created, changed or deleted). czxid tells one
// creation of the znode from the next.
func (c *Client) WatchReassignPartitions() (parts map[TopicPartition][]int32, czxid int64, exists bool, changed <-chan struct{}, err error) {
	ok, _, ch, err := c.existsW(PathReassignPartitions)
	if err != nil || !ok {
		return nil, 0, false, ch, err
	}
	data, st, err := c.get(PathReassignPartitions)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, 0, false, ch, nil // deleted meanwhile: the watch fires
	}
	if err != nil {
		return nil, 0, false, ch, err
	}
	parts, err = DecodeReassignPartitions(data)
	if err != nil {
		// Kafka logs a znode it cannot parse and acts on nothing.
		return map[TopicPartition][]int32{}, st.Czxid, true, ch, nil
	}
	return parts, st.Czxid, true, ch, nil
}

// CreateReassignPartitions is KafkaZkClient.createPartitionReassignment,
// what pre-3.0 kafka-reassign-partitions --zookeeper did:
// ErrNodeExists while a reassignment is already under way.
func (c *Client) CreateReassignPartitions(parts map[TopicPartition][]int32) error {
	_, err := c.create(PathReassignPartitions, EncodeReassignPartitions(parts), 0)
	return err
}

// SetReassignPartitions is the controller's rewrite of the znode
// (setOrCreatePartitionReassignment, deletePartitionReassignment), fenced
// by epochZkVersion: what is left, or no znode when nothing is.
func (c *Client) SetReassignPartitions(epochZkVersion int32, parts map[TopicPartition][]int32) error {
	if len(parts) == 0 {
		return c.fencedDelete(epochZkVersion, PathReassignPartitions)
	}
	data := EncodeReassignPartitions(parts)
	_, err := c.fenced(epochZkVersion, &zk.SetDataRequest{Path: c.abs(PathReassignPartitions), Data: data, Version: -1})
	if errors.Is(err, zk.ErrNoNode) {
		_, err = c.fenced(epochZkVersion, &zk.CreateRequest{Path: c.abs(PathReassignPartitions), Data: data, Acl: acl})
	}
	return pathError("set", PathReassignPartitions, err)
}

// WriteStatesAndAssignments is WritePartitionStates with topic znode
// rewrites (any version) in the same multi: a reassignment changes a
// partition's replicas together with its state. It returns the states'
// new versions, in ws's order.
func (c *Client) WriteStatesAndAssignments(epochZkVersion int32, ws []StateWrite, as []TopicAssignment) ([]int32, error) {
	if len(as) == 0 {
		return c.WritePartitionStates(epochZkVersion, ws)
	}
	if err := c.createStateParents(epochZkVersion, ws); err != nil {
		return nil, err
	}
	ops := make([]any, 0, len(ws)+len(as))
	for _, w := range ws {
		p := c.abs(PartitionStatePath(w.TP))
		data := EncodePartitionState(w.State)
		if w.Create {
			ops = append(ops, &zk.CreateRequest{Path: p, Data: data, Acl: acl})
		} else {
			ops = append(ops, &zk.SetDataRequest{Path: p, Data: data, Version: w.State.Version})
		}
	}
	for _, a := range as {
		ops = append(ops, &zk.SetDataRequest{Path: c.abs(TopicPath(a.Name)), Data: EncodeTopicAssignment(a), Version: -1})
	}
	res, err := c.fenced(epochZkVersion, ops...)
	if err != nil {
		for i, r := range res {
			if r.Error != nil && !isRollback(r.Error) {
				if i < len(ws) {
					return nil, &PartitionWriteError{TP: ws[i].TP, Err: r.Error}
				}
				return nil, fmt.Errorf("zkmeta: set %s: %w", TopicPath(as[i-len(ws)].Name), r.Error)
			}
		}
		return nil, err
	}
	versions := make([]int32, len(ws))
	for i, w := range ws {
		if !w.Create && res[i].Stat != nil {
			versions[i] = res[i].Stat.Version
		}
	}
	return versions, nil
}
