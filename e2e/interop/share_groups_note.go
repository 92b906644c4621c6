package main

// shareGroupsSection closes docs/compatibility.md: share groups are not
// part of the matrix run (only Java has a share consumer), so what is
// known of them is written here, checked by e2e/sharegroups.
const shareGroupsSection = `
## Share groups (KIP-932)

Checked by e2e/sharegroups, not by this matrix: Java's KafkaShareConsumer from kafka-clients 4.1.1
(interop/java, io.samsa.interop.ShareGroups) against one ` + "`samsa serve`" + `. Three members of a group
consume 300 records once in total; a released record comes back with delivery count 2; a record whose
acquisition lock runs out (group.share.record.lock.duration.ms=1000) goes to another member; a rejected record and
one released group.share.delivery.count.limit times are archived; acknowledgements survive a restart
(__share_group_state); Java's Admin lists the group (listGroups for share groups, not for consumer groups),
describes it and lists, alters and deletes its offsets. A group's configs (IncrementalAlterConfigs on the GROUP
resource, a broker alone only) apply, checked against the broker's group.share.min/max.* bounds (INVALID_CONFIG):
share.auto.offset.reset (latest, earliest, by_duration:<ISO-8601 duration>), share.record.lock.duration.ms (the
all-once run sets 30 s), share.delivery.count.limit (Kafka 4.2's, KIP-1240), share.session.timeout.ms and
share.heartbeat.interval.ms. Kafka's simple assignor spreads a group's partitions over its members (shared by
several when members outnumber them), and a waiting ShareFetch wakes when records are produced, released or their
locks run out. samsa serves ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch and ShareAcknowledge at v1 (Kafka
4.1's), and DescribeShareGroupOffsets v0-1, AlterShareGroupOffsets and DeleteShareGroupOffsets v0; no
group.share.enable or share.version feature is needed. In cluster mode (ZooKeeper, where Kafka never had share
groups; samsa's design is in actors/sharegroup's doc) three members consume 3000 records of a topic with 6
partitions and replication factor 3 on three brokers while the leader of partition 0 is killed with -9: every
record is acknowledged exactly once (records acquired on the dead leader come back, acknowledged ones do not), and
the Admin calls above (and deleteShareGroups) work against the group's coordinator. ListGroups lists share groups
with type "share" (v5's type filter, v4's state filter); Kafka 4.1's kafka-share-groups.sh --list finds them on
the cluster. Not yet: read_committed share groups, group configs in cluster mode, durable membership in cluster
mode.
`
