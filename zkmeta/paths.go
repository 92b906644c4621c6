package zkmeta

import "strconv"

// Paths of Kafka 3.9's znodes (ZkData.scala), relative to the chroot.
const (
	PathBrokers             = "/brokers"
	PathBrokerIDs           = "/brokers/ids"
	PathBrokerSeqID         = "/brokers/seqid"
	PathTopics              = "/brokers/topics"
	PathController          = "/controller"
	PathControllerEpoch     = "/controller_epoch"
	PathConfig              = "/config"
	PathConfigChanges       = "/config/changes"
	PathAdmin               = "/admin"
	PathDeleteTopics        = "/admin/delete_topics"
	PathReassignPartitions  = "/admin/reassign_partitions"
	PathPreferredElection   = "/admin/preferred_replica_election"
	PathIsrChange           = "/isr_change_notification"
	PathLogDirEvent         = "/log_dir_event_notification"
	PathProducerIDBlock     = "/latest_producer_id_block"
	PathCluster             = "/cluster"
	PathClusterID           = "/cluster/id"
	PathFeature             = "/feature"
	PathConsumers           = "/consumers"
	ConfigChangePrefix      = "config_change_"
	IsrChangePrefix         = "isr_change_"
	LogDirEventPrefix       = "log_dir_event_"
	configChangeCreatePath  = PathConfigChanges + "/" + ConfigChangePrefix
	isrChangeCreatePath     = PathIsrChange + "/" + IsrChangePrefix
	logDirEventCreatePath   = PathLogDirEvent + "/" + LogDirEventPrefix
	partitionsChildName     = "partitions"
	partitionStateChildName = "state"
)

// Config entity types (ConfigType.ALL), each a child of /config.
const (
	ConfigTopics  = "topics"
	ConfigClients = "clients"
	ConfigUsers   = "users"
	ConfigBrokers = "brokers"
	ConfigIPs     = "ips"
)

// ConfigTypes lists the config entity types in Kafka's order.
var ConfigTypes = []string{ConfigTopics, ConfigClients, ConfigUsers, ConfigBrokers, ConfigIPs}

// PersistentPaths are the paths every Kafka broker makes sure exist at
// startup (ZkData.PersistentZkPaths), in Kafka's order.
var PersistentPaths = []string{
	PathConsumers,
	PathBrokerIDs,
	PathTopics,
	PathConfigChanges,
	PathDeleteTopics,
	PathBrokerSeqID,
	PathIsrChange,
	PathProducerIDBlock,
	PathLogDirEvent,
	PathConfig + "/" + ConfigTopics,
	PathConfig + "/" + ConfigClients,
	PathConfig + "/" + ConfigUsers,
	PathConfig + "/" + ConfigBrokers,
	PathConfig + "/" + ConfigIPs,
}

// BrokerPath is /brokers/ids/<id>.
func BrokerPath(id int32) string { return PathBrokerIDs + "/" + strconv.Itoa(int(id)) }

// TopicPath is /brokers/topics/<topic>.
func TopicPath(topic string) string { return PathTopics + "/" + topic }

// PartitionsPath is /brokers/topics/<topic>/partitions.
func PartitionsPath(topic string) string { return TopicPath(topic) + "/" + partitionsChildName }

// PartitionPath is /brokers/topics/<topic>/partitions/<p>.
func PartitionPath(tp TopicPartition) string {
	return PartitionsPath(tp.Topic) + "/" + strconv.Itoa(int(tp.Partition))
}

// PartitionStatePath is /brokers/topics/<topic>/partitions/<p>/state.
func PartitionStatePath(tp TopicPartition) string {
	return PartitionPath(tp) + "/" + partitionStateChildName
}

// ConfigTypePath is /config/<type>.
func ConfigTypePath(entityType string) string { return PathConfig + "/" + entityType }

// ConfigPath is /config/<type>/<name>.
func ConfigPath(entityType, name string) string { return ConfigTypePath(entityType) + "/" + name }

// DeleteTopicPath is /admin/delete_topics/<topic>.
func DeleteTopicPath(topic string) string { return PathDeleteTopics + "/" + topic }

// parentPath is the path above p ("" above a top-level node).
func parentPath(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return ""
}
