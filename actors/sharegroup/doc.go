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
// reads whole batches below the high watermark from each session
// partition's first available offset through the partition actor
// (shards.ReadCommitted, about as many bytes as the records it may still
// acquire take: read_budget.go), acquires available offsets of those
// batches (MaxRecords, then on to the end of the batch it stopped in:
// Kafka's soft limit, so a batch is sent once and whole) and answers
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
// topic __share_group_state (one partition alone, created on first use) and
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
// the topic is read whole before the first share request is served. A
// new share partition's start is written too, at its first fetch.
//
// Cluster mode (route.go, cluster*.go): Kafka never had share groups with
// ZooKeeper, so samsa defines them here, keeping Kafka 4.1 clients'
// routing. Each broker still runs one share-coordinator actor, but what
// it owns is split:
//
//   - Membership (ShareGroupHeartbeat, ShareGroupDescribe) and the offsets
//     admin APIs are served by the group's coordinator: the leader of the
//     group's __consumer_offsets partition, where FindCoordinator(GROUP)
//     points, as for classic and consumer groups. Elsewhere they answer
//     NOT_COORDINATOR and the client finds the coordinator again.
//     Membership is not persisted: when the coordinator moves, the new
//     one answers the members' heartbeats UNKNOWN_MEMBER_ID and Java's
//     share consumer rejoins (epoch 0, same member id); the old one
//     forgets the group on its next tick.
//   - ShareFetch and ShareAcknowledge go, in Java's share consumer, to
//     each partition's leader, so share partitions and share sessions live
//     on the data partition's leader; a broker that does not lead a
//     partition answers it NOT_LEADER_OR_FOLLOWER (the client refreshes
//     its metadata). The leader does not ask the coordinator about the
//     member: it takes the member the session names, and closes a session
//     idle for the session timeout (its locks go, as they would anyway
//     at their lock duration).
//   - State: __share_group_state has share.coordinator.state.topic.num.partitions
//     partitions (default 50), replication factor
//     share.coordinator.state.topic.replication.factor lowered to the
//     brokers up (default 3) and min.insync.replicas
//     share.coordinator.state.topic.min.isr (default 2). A share partition's
//     snapshots go to partition abs(javaHash("group:topicId:partition")) %
//     n, as Kafka's share coordinator places them, with acks=all: through
//     the partition actor when this broker leads the state partition,
//     else as a Produce v9 to its leader over a link of the share
//     coordinator's own (actors/share_wiring.go). One append per state
//     partition is in flight at a time, so snapshots land in the order
//     they were taken. A failed append fails the changes waiting behind it
//     too and rolls them back (the share partitions are read again from
//     their last durable state): a client told its acknowledgement failed
//     gets the record again. A leader serves a share partition only once it read
//     the share partition's newest snapshot at the data partition's current
//     leader epoch (calls wait meanwhile): it appends a read barrier record
//     with acks=all first (a state partition's new leader's high watermark
//     lags until its followers fetch again, and could hide the newest
//     snapshot), then reads the state partition to its high watermark
//     (Fetch v12 when another broker leads it). Each state partition's
//     reads go one at a time and keep what they read (the newest snapshot
//     of every key), so a load reads only what was appended since the
//     last, and share partitions waiting on the same state partition are
//     served by one read (cluster_read.go; writes in cluster_write.go). After a leader change or a
//     kill -9 the new leader so starts from the last acknowledged state:
//     acquired records come back, acknowledged ones do not. A group's share
//     partitions are read again too when its first session on the broker
//     opens (an admin may have altered or deleted them while it was empty).
//   - DescribeShareGroupOffsets on the coordinator reads the start offsets
//     from the state topic (lag -1: the high watermarks are on the
//     leaders); with no topics named it means the topics the group's
//     members subscribed to while this broker coordinated it.
//     AlterShareGroupOffsets and DeleteShareGroupOffsets write snapshots
//     and tombstones there.
//
// ListGroups (list.go; actors/api merges it with the group coordinators'
// answers) lists the share groups a broker coordinates, type and protocol
// type "share", with v4's state filter (Empty, Stable) and v5's type
// filter, so kafka-share-groups.sh --list and Admin.listGroups find them.
// DeleteGroups (delete.go; actors/api asks the share coordinator first)
// deletes an empty share group and tombstones its share partitions' state
// (NON_EMPTY_GROUP with members).
//
// Not yet:
//   - Cluster mode: membership is rebuilt by rejoining when the
//     coordinator moves (a group whose members all left before
//     heartbeating to the new coordinator is unknown there: not listed or
//     described); a leader does not check that a session's member is in
//     the group; every change is a whole snapshot (no ShareUpdate
//     deltas); lag in DescribeShareGroupOffsets is -1; the state topic is
//     not marked internal (a client could produce to it); group configs
//     (share.auto.offset.reset and the others) are a broker alone's only;
//     a Kafka 3.9 broker in a mixed cluster serves no share APIs.
//   - read_committed share groups (share.isolation.level).
//   - Empty share groups stay in memory until deleted.
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
// configs applied and bounded, by_duration), list_kgo_test.go
// (ListGroups' filters), cluster_test.go (state placement), and
// e2e/sharegroups (Java's KafkaShareConsumer 4.1, alone and on three
// brokers across a kill -9 of a partition leader).
//
// Threading: everything lives on the actor's goroutine; reads, appends,
// lookups and timers come back to it as messages. Only a waiting fetch's
// round number is shared: partition actors read it (atomically) to tell
// a stale waiter.
package sharegroup
