// Package sharegroup is the broker's share groups (KIP-932, "queues for
// Kafka"): consumers of a share group read a topic's records together,
// each record going to one member at a time under an acquisition lock,
// acknowledged one by one rather than by offset.
//
// Pure cores, unit-tested without actors:
//
//   - Partition (partition.go) is one share partition: the group's view
//     of one topic partition. Below its start offset every record is
//     finished; from start to end, in-flight records are Available,
//     Acquired (locked by one member until the group's
//     share.record.lock.duration.ms runs out), Acknowledged or Archived;
//     at or above end nothing was delivered. A record is delivered at most
//     share.delivery.count.limit times: a release or lock expiry at the
//     limit archives it. Accept
//     acknowledges, release makes it available again, reject archives.
//     The start moves over finished records.
//   - Group (group.go) is membership: ShareGroupHeartbeat joins (epoch
//     0), heartbeats and leaves (epoch -1); the server assigns with
//     Kafka's simple assignor (assign.go, AssignShares): partitions spread
//     over the members, each partition given to ceil(members/partitions)
//     of them, member counts within one of each other, a homogeneous
//     group balanced over all its partitions and a heterogeneous one
//     topic by topic, members keeping what they had as far as balance
//     allows. A member gets its new target at its next heartbeat (share
//     groups revoke nothing: the share partitions, not the assignment,
//     keep one record from two members).
//   - Sessions (session.go) are share sessions: the partitions a member
//     fetches and the epoch its next ShareFetch or ShareAcknowledge
//     carries (0 opens, -1 closes, otherwise it must be the next one:
//     INVALID_SHARE_SESSION_EPOCH, SHARE_SESSION_NOT_FOUND).
//
// The shell (actor.go, actor_*.go) is one actor per broker,
// "share-coordinator", owning every group, share partition and session;
// the share APIs (actors/api: ShareGroupHeartbeat 76, ShareGroupDescribe
// 77, ShareFetch 78, ShareAcknowledge 79, all v1 as Kafka 4.1 serves them,
// and the admin APIs DescribeShareGroupOffsets 90 v0-1 (start offset and
// lag per share partition, actor_offsets.go), AlterShareGroupOffsets 91
// and DeleteShareGroupOffsets 92 v0 (an empty group's share partitions
// restarted at an offset, or forgotten with a tombstone in the state
// topic; NON_EMPTY_GROUP with members, actor_alter_offsets.go)) send it
// their requests. A ShareFetch applies its acknowledgements,
// reads whole batches from each session partition's first available
// offset through the partition actor (partition.ReadChunk), acquires
// available offsets of those batches (at most MaxRecords) and answers
// the batches holding acquired offsets with the AcquiredRecords ranges
// (partitions with neither records nor an error are left out of the
// answer). A fetch that acquired nothing waits (actor_wait.go) until its
// max wait: parked on its partitions' views as a Fetch is (woken by the
// partition actor when the high watermark moves), on its group (woken
// by acknowledgements and members leaving, which free records) and on a
// timer at the earliest lock expiry; a fetch whose share session closed
// while it waited answers empty. A group's configs (actor_settings.go,
// read from the metadata actor at each heartbeat, each defaulting to its
// group.share.* broker config) apply: share.record.lock.duration.ms and
// share.delivery.count.limit to its share partitions,
// share.heartbeat.interval.ms to its heartbeats, share.session.timeout.ms
// to the expiry of its members (looked at every second; their locks are
// released), and share.auto.offset.reset to where a new share partition
// starts: the high watermark for latest (the default), the log start for
// earliest, and for by_duration:<ISO-8601 duration> the first offset
// whose timestamp is at or after now less the duration (ListOffsets by
// timestamp of the partition actor; the latest offset if none is).
//
// Durability (state.go): after each request that changed share
// partitions, their snapshots are appended to the compacted internal
// topic __share_group_state (one partition, created on first use) and
// the answer waits until the append is durable, so an acknowledged
// record is never redelivered after a restart. Records follow Kafka's
// ShareSnapshot layout: key = int16 record type 0, string group id,
// uuid topic id, int32 partition; value = int16 version 0, uint16
// snapshot epoch, int32 state epoch, int32 leader epoch, int64 start
// offset, compact array of state batches (int64 first, int64 last, int8
// state 0 available/2 acknowledged/4 archived, int16 delivery count,
// tagged fields), tagged fields. Written as one snapshot per change
// (no ShareUpdate deltas); not checked byte for byte against Kafka 4.1's
// share coordinator. Locks do not survive a restart: acquired records
// come back available (archived if at their delivery limit). On start
// the topic is read whole before the first share request is served.
//
// Not yet:
//   - Cluster mode: a broker with zookeeper.connect neither starts the
//     share coordinator nor advertises the share APIs (wire.ShareGroupAPIs
//     are enabled by a broker alone). Here share partitions live with the
//     one coordinator actor of the broker; a cluster needs them on the
//     partition leaders, membership on the group coordinator, and the
//     state on the leader of its __share_group_state partition.
//   - read_committed share groups (share.isolation.level).
//   - Share groups in ListGroups (its type filter; kafka-share-groups.sh
//     --list) and DeleteShareGroups; empty share groups stay in memory.
//   - Rack-aware assignment (Kafka's simple assignor ignores racks too).
//
// Tests: partition_test.go (seeded randomized: no record with two
// members at once, at most the delivery limit, finished records never
// again, lock expiry, restarts from snapshots), assign_test.go (seeded
// randomized: members only get partitions of their topics, every
// subscribed partition has a member, sharing and counts within Kafka's
// bounds, stable and sticky), share_kgo_test.go (the four APIs through
// franz-go's raw requests), wait_kgo_test.go (long polls woken by a
// produce, a release, a session close), settings_kgo_test.go (group
// configs applied and bounded, by_duration), and e2e/sharegroups (Java's
// KafkaShareConsumer 4.1).
//
// Threading: everything lives on the actor's goroutine; reads, appends,
// lookups and timers come back to it as messages. Only a waiting fetch's
// round number is shared: partition actors read it (atomically) to tell
// a stale waiter.
package sharegroup
