package metadata

import "github.com/samsa-io/samsa/actors/config"

// Effects is what the actor shell must carry out after a state change: the
// state is already committed (persisted) when they are returned.
type Effects struct {
	// Start opens partition logs (new topics, new partitions, start-up).
	Start []PartitionSpec
	// Delete closes partition logs and removes their files; when all are
	// gone the shell calls FinishDeletion for each topic.
	Delete []PartitionRef
	// Reconfigure applies a new effective config to every partition of a
	// topic, live.
	Reconfigure []TopicConfig
	// Unapplied are dynamic configs just set that samsa stores and reports
	// but does not act on, each named once per State: the shell logs them
	// at INFO. Nothing is to be done about them.
	Unapplied []UnappliedConfig
	// FreeSpace are partitions whose files to remove before asking again:
	// DeleteTopics could not persist a deletion for want of disk space.
	// The topics stay in the state until the second request succeeds.
	FreeSpace []PartitionRef
	// KeystoresChanged are the listeners (lower case, as in
	// listener.name.<listener>.*) whose keystore settings were just set
	// on this broker: the shell has their keystores read again (Kafka's
	// dynamic keystore update), with the settings Layers resolves.
	KeystoresChanged []string
}

// UnappliedConfig is a dynamic config that was set and has no effect.
type UnappliedConfig struct {
	Resource string // "broker 0", "cluster default", "group g"
	Key      string
	Why      string
}

// Empty reports whether there is nothing to do.
func (e *Effects) Empty() bool {
	return len(e.Start) == 0 && len(e.Delete) == 0 && len(e.Reconfigure) == 0
}

// PartitionSpec is everything a partition actor needs to open its log.
type PartitionSpec struct {
	Topic       string
	ID          TopicID
	Partition   int32
	Dir         string
	LeaderEpoch int32
	Config      config.Topic
	// Follower is set in cluster mode while this broker does not lead
	// the partition (until the controller's LeaderAndIsr says it does):
	// clients' reads and writes are NOT_LEADER_OR_FOLLOWER.
	Follower bool
	// Replicas, ISR and PartitionEpoch are the last LeaderAndIsr's, so a
	// leader restarted by its supervisor leads as it did (cluster mode).
	Replicas, ISR  []int32
	PartitionEpoch int32
}

// PartitionRef names one partition of a topic incarnation.
type PartitionRef struct {
	Topic     string
	ID        TopicID
	Partition int32
	Dir       string
}

// TopicConfig is a topic's new effective config.
type TopicConfig struct {
	Topic  string
	ID     TopicID
	Config config.Topic
}
