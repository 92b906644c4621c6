package controller

// The core's own plain types for what it reads from ZooKeeper. They
// mirror package zkmeta's (field for field, same names) so that the shell
// converts mechanically, and the core depends on nothing but its inputs:
// it is tested without ZooKeeper, and zkmeta may change its internals
// freely.

// Endpoint is one listener of a broker, as registered in
// /brokers/ids/<id>.
type Endpoint struct {
	Listener         string // listener name: "PLAINTEXT", "INTERNAL", ...
	Host             string
	Port             int32
	SecurityProtocol string // "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"
}

// BrokerInfo is a live broker: its registration and its epoch.
type BrokerInfo struct {
	ID        int32
	Endpoints []Endpoint // in registration order
	Rack      string     // "" = none
	// Epoch is the czxid of the broker's ephemeral registration: a broker
	// that restarted (a new registration) has a larger one.
	Epoch int64
}

// TopicID is Kafka's topic UUID.
type TopicID [16]byte

// TopicAssignment is /brokers/topics/<t>: the replicas of each partition,
// in preference order (the first is the preferred leader).
type TopicAssignment struct {
	Name             string
	ID               TopicID // zero = none written
	Partitions       map[int32][]int32
	Adding, Removing map[int32][]int32 // a reassignment under way (reassign.go)
	Version          int32             // znode version
}

// Leader recovery states (KIP-704): a partition whose leader was elected
// uncleanly is RECOVERING until that leader has settled its log.
const (
	Recovered  int8 = 0
	Recovering int8 = 1
)

// Leader sentinels of Kafka's LeaderAndIsr.
const (
	NoLeader           int32 = -1 // no live in-sync replica to lead
	LeaderDuringDelete int32 = -2 // told to brokers for a topic queued for deletion
)

// PartitionState is /brokers/topics/<t>/partitions/<p>/state.
type PartitionState struct {
	Leader, LeaderEpoch, ControllerEpoch int32
	ISR                                  []int32
	LeaderRecoveryState                  int8
	// Version is the znode's version: the partition epoch the brokers see
	// (LeaderAndIsr's and UpdateMetadata's zk_version, AlterPartition's
	// partition_epoch) and the expected version of the next write.
	Version int32
}

func (s PartitionState) clone() PartitionState {
	s.ISR = append([]int32(nil), s.ISR...)
	return s
}

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// StateWrite is one partition state write: a create (a new partition) or
// a set at State.Version (the version the znode has before the write).
type StateWrite struct {
	TP     TopicPartition
	State  PartitionState
	Create bool
}

// ProducerIDBlock is /latest_producer_id_block: the last block of
// producer ids handed out, [Start, End].
type ProducerIDBlock struct {
	Broker     int32
	Start, End int64
}
