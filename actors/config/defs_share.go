package config

// The share coordinator's state topic in cluster mode.
const (
	KeyShareStatePartitions        = "share.coordinator.state.topic.num.partitions"
	KeyShareStateReplicationFactor = "share.coordinator.state.topic.replication.factor"
	KeyShareStateMinISR            = "share.coordinator.state.topic.min.isr"
)

// shareDefs are the broker configs of share groups (KIP-932,
// actors/sharegroup). The group.share.* ones that group configs default
// to (share.session.timeout.ms, ...) are here too: share groups use them.
var shareDefs = []Def{
	{Name: "group.share.session.timeout.ms", Type: Int, Default: "45000", Check: AtLeast(1), Doc: "Default share.session.timeout.ms of groups."},
	{Name: "group.share.min.session.timeout.ms", Type: Int, Default: "45000", Check: AtLeast(1), Doc: "Smallest share.session.timeout.ms a group may set."},
	{Name: "group.share.max.session.timeout.ms", Type: Int, Default: "60000", Check: AtLeast(1), Doc: "Largest share.session.timeout.ms a group may set."},
	{Name: "group.share.heartbeat.interval.ms", Type: Int, Default: "5000", Check: AtLeast(1), Doc: "Default share.heartbeat.interval.ms of groups."},
	{Name: "group.share.min.heartbeat.interval.ms", Type: Int, Default: "5000", Check: AtLeast(1), Doc: "Smallest share.heartbeat.interval.ms a group may set."},
	{Name: "group.share.max.heartbeat.interval.ms", Type: Int, Default: "15000", Check: AtLeast(1), Doc: "Largest share.heartbeat.interval.ms a group may set."},
	{Name: "group.share.record.lock.duration.ms", Type: Int, Default: "30000", Check: AtLeast(1000), Doc: "Default share.record.lock.duration.ms of groups."},
	{Name: "group.share.min.record.lock.duration.ms", Type: Int, Default: "15000", Check: AtLeast(1000), Doc: "Smallest share.record.lock.duration.ms a group may set."},
	{Name: "group.share.max.record.lock.duration.ms", Type: Int, Default: "60000", Check: AtLeast(1000), Doc: "Largest share.record.lock.duration.ms a group may set."},
	{Name: "group.share.delivery.count.limit", Type: Int, Default: "5", Check: Between(2, 10), Doc: "How many times a share group delivers a record before archiving it; also the default share.delivery.count.limit of groups."},
	{Name: "group.share.min.delivery.count.limit", Type: Int, Default: "2", Check: AtLeast(2), Doc: "Smallest share.delivery.count.limit a group may set."},
	{Name: "group.share.max.delivery.count.limit", Type: Int, Default: "10", Check: AtLeast(2), Doc: "Largest share.delivery.count.limit a group may set."},
	{Name: "group.share.partition.max.record.locks", Type: Int, Default: "2000", Check: AtLeast(100), Doc: "Most records of one share partition in flight (between its start and end offsets) at a time."},
	{Name: KeyShareStatePartitions, Type: Int, Default: "50", Check: AtLeast(1),
		Doc: "Cluster mode: partitions of __share_group_state, made on first use; a share partition's state lives on abs(hash(\"group:topicId:partition\")) % this. A single broker keeps one partition."},
	{Name: KeyShareStateReplicationFactor, Type: Short, Default: "3", Check: AtLeast(1),
		Doc: "Cluster mode: replication factor of __share_group_state (lowered to the brokers up when it is made). A single broker ignores it."},
	{Name: KeyShareStateMinISR, Type: Short, Default: "2", Check: AtLeast(1), Doc: "Cluster mode: min.insync.replicas of __share_group_state (at most its replication factor)."},
	{Name: "group.share.enable", Type: Boolean, Default: "true", Doc: "Kafka 4.1's switch for share groups; samsa serves them either way and accepts the key for server.properties compatibility."},
}

// GroupConfigActs reports whether samsa acts on a group config (share
// groups apply theirs, actors/sharegroup; consumer groups their session
// timeout and heartbeat interval, actors/group); the others are stored
// and described only.
func GroupConfigActs(name string) bool {
	switch name {
	case "share.auto.offset.reset", "share.session.timeout.ms", "share.heartbeat.interval.ms",
		"share.record.lock.duration.ms", "share.delivery.count.limit",
		"consumer.session.timeout.ms", "consumer.heartbeat.interval.ms":
		return true
	}
	return false
}
