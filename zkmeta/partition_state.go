package zkmeta

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/go-zookeeper/zk"
)

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }

// Leader recovery states (KIP-704).
const (
	LeaderRecovered  int8 = 0
	LeaderRecovering int8 = 1
)

// PartitionState is /brokers/topics/<t>/partitions/<p>/state:
// {"controller_epoch":7,"leader":1,"version":1,"leader_epoch":5,"isr":[1,2,3]}
// (+ "leader_recovery_state":1 only while RECOVERING).
type PartitionState struct {
	Leader, LeaderEpoch, ControllerEpoch int32
	ISR                                  []int32
	LeaderRecoveryState                  int8
	Version                              int32 // znode stat version = the partition epoch, the CAS version of updates (read only)
}

// EncodePartitionState is TopicPartitionStateZNode.encode: an immutable
// Scala map of five (six with leader_recovery_state) entries, so a CHAMP
// map's key order.
func EncodePartitionState(s PartitionState) []byte {
	isr := s.ISR
	if isr == nil {
		isr = []int32{}
	}
	fields := []field{
		{"version", jInt(1)},
		{"leader", jInt(int64(s.Leader))},
		{"leader_epoch", jInt(int64(s.LeaderEpoch))},
		{"controller_epoch", jInt(int64(s.ControllerEpoch))},
		{"isr", jInts(isr)},
	}
	if s.LeaderRecoveryState != LeaderRecovered {
		fields = append(fields, field{"leader_recovery_state", jInt(int64(s.LeaderRecoveryState))})
	}
	return object(orderFields(fields, scalaImmutableOrder))
}

// DecodePartitionState is TopicPartitionStateZNode.decode; Version is
// left 0 (it comes from the znode's stat).
func DecodePartitionState(data []byte) (PartitionState, error) {
	var j struct {
		Leader          *int32  `json:"leader"`
		LeaderEpoch     *int32  `json:"leader_epoch"`
		ControllerEpoch *int32  `json:"controller_epoch"`
		ISR             []int32 `json:"isr"`
		Recovery        *int8   `json:"leader_recovery_state"`
	}
	if err := decodeJSON("partition state", data, &j); err != nil {
		return PartitionState{}, err
	}
	if j.Leader == nil || j.LeaderEpoch == nil || j.ControllerEpoch == nil || j.ISR == nil {
		return PartitionState{}, fmt.Errorf("zkmeta: partition state lacks leader, leader_epoch, controller_epoch or isr: %q", truncate(data))
	}
	s := PartitionState{Leader: *j.Leader, LeaderEpoch: *j.LeaderEpoch, ControllerEpoch: *j.ControllerEpoch, ISR: j.ISR}
	if j.Recovery != nil {
		s.LeaderRecoveryState = *j.Recovery
	}
	return s, nil
}

// PartitionState reads one partition's state; ErrNoNode when it has none.
func (c *Client) PartitionState(tp TopicPartition) (PartitionState, error) {
	data, st, err := c.get(PartitionStatePath(tp))
	if err != nil {
		return PartitionState{}, err
	}
	s, err := DecodePartitionState(data)
	s.Version = st.Version
	if err != nil {
		return s, fmt.Errorf("zkmeta: %s: %w", tp, err)
	}
	return s, nil
}

// PartitionStates reads the state of every partition of topic that has
// one (a partition whose state is not written yet is absent).
func (c *Client) PartitionStates(topic string) (map[int32]PartitionState, error) {
	names, err := c.children(PartitionsPath(topic))
	if errors.Is(err, zk.ErrNoNode) {
		return map[int32]PartitionState{}, nil
	}
	if err != nil {
		return nil, err
	}
	type result struct {
		p   int32
		s   PartitionState
		err error
	}
	results := make([]result, 0, len(names))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, n := range names {
		p, perr := strconv.ParseInt(n, 10, 32)
		if perr != nil {
			continue
		}
		wg.Add(1)
		go func(p int32) { // go-zookeeper pipelines these on one connection
			defer wg.Done()
			s, err := c.PartitionState(TopicPartition{topic, p})
			mu.Lock()
			results = append(results, result{p, s, err})
			mu.Unlock()
		}(int32(p))
	}
	wg.Wait()
	out := make(map[int32]PartitionState, len(results))
	for _, r := range results {
		if errors.Is(r.err, zk.ErrNoNode) {
			continue
		}
		if r.err != nil {
			return nil, r.err
		}
		out[r.p] = r.s
	}
	return out, nil
}

// StateWrite is one partition state the controller writes: Create makes
// the znode (and its parents), otherwise it is set at State.Version.
type StateWrite struct {
	TP     TopicPartition
	State  PartitionState
	Create bool
}

// PartitionWriteError says which partition's write failed; Err is
// ErrBadVersion, ErrNodeExists or ErrNoNode (errors.Is sees through).
type PartitionWriteError struct {
	TP  TopicPartition
	Err error
}

func (e *PartitionWriteError) Error() string {
	return "zkmeta: writing the state of " + e.TP.String() + ": " + e.Err.Error()
}

func (e *PartitionWriteError) Unwrap() error { return e.Err }

// WritePartitionStates writes ws all or nothing, in one multi behind
// check(/controller_epoch, epochZkVersion). It returns each znode's new
// version (the next CAS version), in ws's order. A failed check is
// ErrControllerMoved; a failed write is a *PartitionWriteError naming the
// partition, and nothing is written. The parents of created states
// (/partitions, /partitions/<p>) are created first, each fenced on its
// own, as Kafka does. One multi is bounded by ZooKeeper's jute.maxbuffer
// (1 MiB by default: some ten thousand partitions).
func (c *Client) WritePartitionStates(epochZkVersion int32, ws []StateWrite) (newVersions []int32, err error) {
	if len(ws) == 0 {
		return nil, nil
	}
	if err := c.createStateParents(epochZkVersion, ws); err != nil {
		return nil, err
	}
	ops := make([]any, len(ws))
	for i, w := range ws {
		p := c.abs(PartitionStatePath(w.TP))
		data := EncodePartitionState(w.State)
		if w.Create {
			ops[i] = &zk.CreateRequest{Path: p, Data: data, Acl: acl}
		} else {
			ops[i] = &zk.SetDataRequest{Path: p, Data: data, Version: w.State.Version}
		}
	}
	res, err := c.fenced(epochZkVersion, ops...)
	if err != nil {
		for i, r := range res {
			if r.Error != nil && i < len(ws) && !isRollback(r.Error) {
				return nil, &PartitionWriteError{TP: ws[i].TP, Err: r.Error}
			}
		}
		return nil, err
	}
	newVersions = make([]int32, len(ws))
	for i, w := range ws {
		if !w.Create && res[i].Stat != nil {
			newVersions[i] = res[i].Stat.Version
		}
	}
	return newVersions, nil
}

// isRollback reports whether a multi op's error only says another op of
// the multi failed (ZooKeeper's RUNTIMEINCONSISTENCY, -2).
func isRollback(err error) bool {
	return err != nil && !errors.Is(err, zk.ErrBadVersion) && !errors.Is(err, zk.ErrNodeExists) &&
		!errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNotEmpty)
}

// createStateParents creates /brokers/topics/<t>/partitions and
// /partitions/<p> for every created state, fenced, existing ones kept
// (KafkaZkClient.createTopicPartitions, createTopicPartition).
func (c *Client) createStateParents(epochZkVersion int32, ws []StateWrite) error {
	var dirs []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			dirs = append(dirs, p)
		}
	}
	for _, w := range ws {
		if w.Create {
			add(PartitionsPath(w.TP.Topic))
		}
	}
	for _, w := range ws {
		if w.Create {
			add(PartitionPath(w.TP))
		}
	}
	for _, d := range dirs {
		_, err := c.fenced(epochZkVersion, &zk.CreateRequest{Path: c.abs(d), Acl: acl})
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return pathError("create", d, err)
		}
	}
	return nil
}

// UpdateLeaderAndISR is KafkaZkClient.updateLeaderAndIsr: each state is
// set at its Version in its own fenced multi (so one partition's conflict
// does not hold back the others). It returns the new versions of the
// partitions written and the partitions whose version had moved (BADVERSION:
// re-read and retry). ErrControllerMoved if the fencing check fails for
// any; other errors per partition are returned joined.
func (c *Client) UpdateLeaderAndISR(epochZkVersion int32, states map[TopicPartition]PartitionState) (written map[TopicPartition]int32, retry []TopicPartition, err error) {
	type result struct {
		tp  TopicPartition
		v   int32
		err error
	}
	results := make(chan result, len(states))
	for tp, s := range states {
		go func(tp TopicPartition, s PartitionState) {
			res, err := c.fenced(epochZkVersion, &zk.SetDataRequest{Path: c.abs(PartitionStatePath(tp)), Data: EncodePartitionState(s), Version: s.Version})
			r := result{tp: tp, err: err}
			if err == nil {
				r.v = res[0].Stat.Version
			}
			results <- r
		}(tp, s)
	}
	written = make(map[TopicPartition]int32, len(states))
	var errs []error
	moved := false
	for range states {
		r := <-results
		switch {
		case r.err == nil:
			written[r.tp] = r.v
		case errors.Is(r.err, ErrControllerMoved):
			moved = true
		case errors.Is(r.err, zk.ErrBadVersion):
			retry = append(retry, r.tp)
		default:
			errs = append(errs, &PartitionWriteError{TP: r.tp, Err: r.err})
		}
	}
	slices.SortFunc(retry, compareTP)
	if moved {
		return written, retry, fmt.Errorf("%w: expected zkVersion %d", ErrControllerMoved, epochZkVersion)
	}
	return written, retry, errors.Join(errs...)
}

// compareTP orders partitions by topic, then number.
func compareTP(a, b TopicPartition) int {
	if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}
