// Package group is the pure core of the consumer-group coordinator for
// Kafka's classic group protocol (JoinGroup/SyncGroup/Heartbeat/LeaveGroup,
// the protocol every Kafka client uses by default) and for KIP-848's
// consumer group protocol (ConsumerGroupHeartbeat, Kafka 4's
// group.protocol=consumer; see "Consumer groups (KIP-848)" below), the
// offsets it stores, and the __consumer_offsets records that make all of
// it durable.
//
// It owns: group membership, rebalances (generations, leader, protocol
// selection), session/rebalance timeouts, static membership (KIP-345),
// KIP-394 member ids, committed offsets and their expiry, the record
// formats of __consumer_offsets, rebuilding all of it from those records,
// and where a group lives (PartitionFor).
//
// It does no I/O, starts no goroutine and reads no clock. Every call takes
// the current time and returns Effects; the actor shell around it carries
// them out. The same inputs always give the same outputs: member ids come
// from Config.NewUUID, which tests make deterministic.
//
// # Threading
//
// A Group (one per consumer group) or a Coordinator (a set of groups, for
// example one __consumer_offsets partition's) is owned by one actor and is
// not safe for concurrent use.
//
// # Where a group lives
//
// PartitionFor(groupID, offsets.topic.num.partitions) is Kafka's
// abs(javaStringHashCode(groupID)) % n, with Kafka's Utils.abs (MinInt32
// maps to 0). The leader of that __consumer_offsets partition is the
// group's coordinator: FindCoordinator (v0-v6, key type 0) answers with
// it, and every other group request for the group must reach it (others
// answer NOT_COORDINATOR, see ErrorResponse).
//
// # What the shell does
//
//  1. Route each group request to the Group (or Coordinator) of its group,
//     with a Ticket that identifies the request (the core hands it back,
//     untouched, in the Reply that answers it) and the current time.
//     JoinGroup also needs the Client (client id from the request header,
//     and "/"+IP of the connection, as Kafka writes it).
//     Group methods: JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
//     OffsetCommit, OffsetDelete, DeleteGroups (these return Effects);
//     OffsetFetch, FetchOffsets, Describe, ListEntry (read-only, return
//     the answer directly). Coordinator.Handle takes any of them. A router
//     with one actor per group uses GroupsOf to find the groups of a
//     request and MergeResponses to put a batch's answers together.
//  2. Send every Reply in Effects.Replies, in order, to the request its
//     To names. A reply may answer a request other than the one just
//     handled: when a rebalance's join phase ends, every parked JoinGroup
//     is answered at once; when the leader's assignment is stored, every
//     parked SyncGroup. Responses carry the request's version.
//  3. Append the Records of each Effects.Appends entry, in order, to the
//     group's __consumer_offsets partition (key and value as given, a nil
//     value is a tombstone; records of one Append in one batch), and when
//     the append is durable (or failed), call OnAppended(token, code, now)
//     with the partition's error code (kerr.None on success) and carry out
//     its Effects. Answers that depend on the records come from there:
//     nothing is acknowledged before it is in the log.
//  4. Arm a timer for each Effects.Timers entry (a later timer with the
//     same key replaces it; Effects.Cancel disarms keys) and call
//     OnTimer(key, now) when it fires. Late, early, duplicate or stale
//     firings are harmless: the core checks its own deadlines.
//  5. Every offsets.retention.check.interval.ms (Kafka: 10 minutes) call
//     ExpireOffsets(now).
//  6. On becoming leader of a __consumer_offsets partition: answer its
//     groups' requests with LoadInProgressResponse (COORDINATOR_LOAD_IN_
//     PROGRESS; heartbeats get no error, as in Kafka) while reading the
//     partition from its start, feeding every record to Coordinator.Replay
//     (or Group.Replay), in offset order; then call EndLoad (Group.Loaded),
//     which starts every member's session timer, and serve. A record that
//     does not decode returns an error: log it and go on. On losing
//     leadership, drop the groups: clients get NOT_COORDINATOR and find the
//     new coordinator.
//  7. Drop a Group when Vacant() (deleted or never really created, nothing
//     pending); a later request starts from NewGroup again. Coordinator
//     does this itself.
//  8. Topic checks that need cluster metadata (OffsetCommit/OffsetDelete
//     for an unknown topic: UNKNOWN_TOPIC_OR_PARTITION) and authorization
//     are the shell's, before the core.
//
// # States
//
//	              first JoinGroup
//	+-------+ ------------------------------> +--------------------+ <-----------------+
//	| Empty |                                 | PreparingRebalance |                   |
//	+-------+ <------------------------------ +--------------------+                   |
//	    |      join phase ends, no members               |                             |
//	    |      (generation+1, record written)            | join phase ends: all        |
//	    |                                                | rejoined, or rebalance      |
//	    |                                                | timeout (generation+1)      |
//	    |                                                v                             |
//	    |                                     +---------------------+  new member,     |
//	    |                                     | CompletingRebalance | ---------------->|
//	    |                                     +---------------------+  changed         |
//	    |                                                |             metadata, leave,|
//	    |                                                | leader's    expiry, sync    |
//	    |                                                | SyncGroup   timeout         |
//	    |                                                | stored                      |
//	    |                                                v                             |
//	    | DeleteGroups, or the                      +--------+  leader rejoins,        |
//	    | last offset expires                       | Stable | ----------------------->+
//	    v                                           +--------+  changed metadata,
//	+------+                                                    leave, expiry,
//	| Dead |  terminal: tombstone written, state dropped        sync timeout
//	+------+
//
// Rebalance rules:
//
//   - A rebalance starting from Empty waits group.initial.rebalance.delay.ms
//     (3 s) before ending its join phase, even if everyone is in; every
//     member that joins during a delay buys another delay, as long as the
//     rebalance timeout is not used up (Kafka's InitialDelayedJoin).
//     Otherwise the join phase ends as soon as every member has a parked
//     JoinGroup and no KIP-394 pending member id is outstanding, or after
//     the largest rebalance timeout of the members.
//   - When the join phase ends, dynamic members that did not rejoin are
//     removed; static members stay (only their session, or the sync
//     timeout, removes them). The leader stays leader if it rejoined,
//     otherwise the first member (in join order) that did takes over; the
//     first member ever to join a group leads it. If no one rejoined but
//     static members remain, the join phase waits another rebalance
//     timeout.
//   - The generation goes up by one each time a join phase ends (also
//     when it ends with no members: Empty, with a record). Then every
//     parked JoinGroup is answered: the leader gets the member list with
//     each member's metadata for the selected protocol.
//   - The selected protocol is, among those every member supports, the
//     one most members prefer (ties: the leader's order). A member whose
//     protocol type differs, or who shares no protocol with all current
//     members, gets INCONSISTENT_GROUP_PROTOCOL.
//   - Members that got their JoinGroup answer must SyncGroup within the
//     rebalance timeout, or they are removed (and the group rebalances).
//   - The leader's SyncGroup carries the assignment; members it forgot get
//     an empty one. It is appended (GroupMetadataValue with every member)
//     and only then does the group become Stable and every parked SyncGroup
//     get its member's assignment.
//
// # Parked requests
//
// A JoinGroup is parked in PreparingRebalance, a SyncGroup in
// CompletingRebalance. Every parked request is answered exactly once:
//
//	event                                      parked JoinGroup      parked SyncGroup
//	join phase ends                            result (gen, leader)  -
//	leader's assignment stored                 -                     assignment, NONE
//	assignment append failed                   -                     mapped error (*)
//	rebalance restarts from CompletingReb.     -                     REBALANCE_IN_PROGRESS
//	member leaves, expires, removed            UNKNOWN_MEMBER_ID     UNKNOWN_MEMBER_ID
//	static member replaced by a new instance   FENCED_INSTANCE_ID    FENCED_INSTANCE_ID
//	same member sends another one              REBALANCE_IN_PROGRESS REBALANCE_IN_PROGRESS
//	new member waiting > 5 min (KIP-394 era)   UNKNOWN_MEMBER_ID     -
//
// (*) NOT_LEADER_OR_FOLLOWER/KAFKA_STORAGE_ERROR -> NOT_COORDINATOR;
// UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS(_AFTER_APPEND),
// REQUEST_TIMED_OUT -> COORDINATOR_NOT_AVAILABLE; MESSAGE_TOO_LARGE,
// RECORD_LIST_TOO_LARGE, INVALID_FETCH_SIZE -> UNKNOWN_SERVER_ERROR
// (INVALID_COMMIT_OFFSET_SIZE for offset commits).
//
// # Requests in each state
//
//	               Empty          PreparingReb.        CompletingReb.         Stable                 Dead
//	JoinGroup new  rebalance      parked               rebalance              rebalance              COORD_NOT_AVAIL
//	JoinGroup own  UNKNOWN_MEMBER parked (updates)     same md: answer again  follower, same md:     COORD_NOT_AVAIL
//	                                                   else rebalance         answer; else rebal.
//	SyncGroup      UNKNOWN_MEMBER REBALANCE_IN_PROG.   parked (leader: store) assignment             COORD_NOT_AVAIL
//	Heartbeat      UNKNOWN_MEMBER REBALANCE_IN_PROG.   NONE                   NONE                   COORD_NOT_AVAIL
//	OffsetCommit   simple only    member, old gen ok   REBALANCE_IN_PROG.     member, current gen    COORD_NOT_AVAIL
//	OffsetFetch    always allowed
//	OffsetDelete   all            consumer groups: not subscribed topics       (else NON_EMPTY_GROUP) GROUP_ID_NOT_FOUND
//	DeleteGroups   -> Dead        NON_EMPTY_GROUP      NON_EMPTY_GROUP        NON_EMPTY_GROUP        GROUP_ID_NOT_FOUND
//
// Checks before the state: an empty group id is INVALID_GROUP_ID (except
// OffsetCommit/OffsetFetch/DescribeGroups/DeleteGroups, which Kafka allows
// for it); a session timeout outside group.min.session.timeout.ms (6 s) ..
// group.max.session.timeout.ms (30 min) is INVALID_SESSION_TIMEOUT; a
// request whose group.instance.id maps to another member id is
// FENCED_INSTANCE_ID; an unknown member id is UNKNOWN_MEMBER_ID; another
// generation is ILLEGAL_GENERATION; group.max.size (unlimited by default)
// is GROUP_MAX_SIZE_REACHED. A simple consumer (generation -1, no member
// id) may commit only while the group has no members (UNKNOWN_MEMBER_ID
// otherwise); to an unknown group it commits freely, while a commit with a
// generation to an unknown group is ILLEGAL_GENERATION. Metadata over
// offset.metadata.max.bytes (4096) is OFFSET_METADATA_TOO_LARGE for that
// partition alone. SyncGroup v5 checks the protocol type and name
// (INCONSISTENT_GROUP_PROTOCOL). DescribeGroups of an unknown group is a
// Dead entry with no error (GROUP_ID_NOT_FOUND from v6).
//
// Member ids: a dynamic member gets "<clientId>-<uuid>"; from JoinGroup v4
// (KIP-394) it first gets MEMBER_ID_REQUIRED with that id, which is held
// as pending for the session timeout and must be used to rejoin (never for
// v0-v3: those clients do not know the error). A static member
// (group.instance.id, JoinGroup v5+) gets "<instanceId>-<uuid>" at once.
// A static member rejoining with no member id (a restart) replaces the old
// id: its parked requests, and any later one, get FENCED_INSTANCE_ID. If
// the group is Stable and the selected protocol would not change (Kafka's
// rule; the subscription bytes are not compared, since a restarted client
// no longer knows its owned partitions), the new id inherits the
// assignment without a rebalance once the new mapping is in the log; a
// static leader is told to skip assignment (KIP-814). LeaveGroup v3+ may
// name a static member by instance id alone (administrative removal).
//
// # Offsets
//
// Commits are appended (one OffsetCommitKey/Value per partition) and
// become visible when OnAppended reports them durable; until then
// OffsetFetch with require_stable (v7+) answers UNSTABLE_OFFSET_COMMIT for
// them. OffsetFetch with null topics returns every committed partition;
// v8+ batches groups (Coordinator splits and merges). Expiry
// (offsets.retention.minutes, 7 days): in an Empty group every offset
// expires together, counted from when the group became Empty; for a group
// that never had members, from each commit; in a Stable consumer group
// only offsets of topics no member subscribes to expire (subscriptions are
// read from the members' ConsumerProtocolSubscription). A commit with an
// explicit retention (OffsetCommit v2-v4) expires at its own time. An
// Empty group left with no offsets becomes Dead. Deleted and expired
// offsets, and dead groups, are written as tombstones.
//
// # __consumer_offsets records
//
// Kafka's own schemas, so Kafka's tools read what samsa writes and samsa
// reads what Kafka wrote. Every key and value starts with an int16 schema
// version; the key's version says what the record is. Integers are
// big-endian. Non-flexible versions use int16-length strings (-1 = null)
// and int32-length arrays and bytes; flexible versions (values v4) use
// unsigned-varint lengths plus one (0 = null) and end each struct with a
// tagged-field section (a varint count, then tag, size, bytes), which
// readers skip. These layouts are part of the on-disk format.
//
// Offset commit, key version 1 (read 0 and 1, same layout):
//
//	int16 version=1 | string group | string topic | int32 partition
//
// Offset commit value, written as version 3 (version 1 when the commit has
// an expire timestamp), read 0-4 (newer versions are read as 4):
//
//	v0: int16 version | int64 offset | string metadata | int64 commitTimestamp
//	v1: v0 + int64 expireTimestamp
//	v2: same as v0
//	v3: int16 version | int64 offset | int32 leaderEpoch | string metadata | int64 commitTimestamp
//	v4: v3, flexible (compact string, tagged fields; tag 0 = topic id in Kafka 4.1)
//
// Group metadata, key version 2:
//
//	int16 version=2 | string group
//
// Group metadata value, written as version 3, read 0-4:
//
//	int16 version | string protocolType | int32 generation
//	| nullable string protocol | nullable string leader
//	| int64 currentStateTimestamp (v2+)
//	| array of members:
//	    string memberId | nullable string groupInstanceId (v3+)
//	    | string clientId | string clientHost | int32 rebalanceTimeoutMs (v1+)
//	    | int32 sessionTimeoutMs | bytes subscription | bytes assignment
//	(v4: all flexible)
//
// Key versions 3 to 8 belong to KIP-848 consumer groups (below); 9 and up
// to share and streams groups, which are skipped. A nil value (tombstone) deletes the offset or
// the group. Replaying a partition applies records in order: the last
// group metadata wins and becomes a Stable group (Empty if it has no
// members) of that generation, with session timers started at load.
// Because the group record is written only when a generation completes
// (leader's SyncGroup) or the group empties, a coordinator that fails in
// the middle of a rebalance comes back at the last completed generation:
// members holding the newer generation get ILLEGAL_GENERATION, rejoin
// with their member ids, and the group converges on a new generation.
//
// # Consumer groups (KIP-848)
//
// A group is classic or "consumer" (Group.cg set, consumer_group.go).
// ConsumerGroupHeartbeat turns an unknown or empty classic group into a
// consumer group (its offsets stay, its classic record gets a tombstone);
// a classic JoinGroup turns an empty consumer group back into a classic
// one. Kafka 4's online migration moves groups with members too, as
// group.consumer.migration.policy (Config.ConsumerMigrationPolicy)
// allows: upgrade, downgrade, both (bidirectional, the default) or
// neither (disabled) (consumer_classic.go):
//
//   - Upgrade (policy upgrade or bidirectional; otherwise
//     GROUP_ID_NOT_FOUND, "Cannot upgrade classic group <g> to consumer
//     group because online upgrade is disabled."): a consumer protocol
//     member joining a Stable classic group of
//     protocol type "consumer" whose subscriptions and assignments decode
//     (ConsumerProtocolSubscription/Assignment) turns it into a consumer
//     group: every classic member stays, at the generation as its epoch,
//     owning what its leader assigned it. A classic group that is
//     rebalancing answers COORDINATOR_NOT_AVAILABLE (retry), one that
//     cannot be read GROUP_ID_NOT_FOUND.
//   - Classic members in a consumer group are assigned by the broker's
//     assignor and reconcile through rejoins: their Heartbeat answers
//     REBALANCE_IN_PROGRESS until they are at the target; their JoinGroup
//     is answered at once (generation = member epoch, no leader, the
//     member's first protocol, owned partitions from its subscription);
//     their SyncGroup gets what they may own now (the leader's assignments
//     are ignored); their own session timeout applies; they commit with
//     their generation (ILLEGAL_GENERATION otherwise); LeaveGroup removes
//     them. New classic members may join a consumer group.
//   - Downgrade (policy downgrade or bidirectional, and the classic
//     members fit in group.max.size): when the last consumer protocol
//     member leaves (or is fenced) and classic members remain, the group
//     becomes classic again at the group epoch as its generation, each
//     member's assignment what it owns, and rebalances at once. Otherwise
//     the classic members carry on in the consumer group.
//
// The offsets, OffsetDelete, DeleteGroups and expiry are the Group's,
// shared by both kinds; for them a consumer group is Stable with members
// and Empty without, and subscribes to what its members' names and
// regexes resolve to.
//
// The shell hands ConsumerGroupHeartbeat the cluster's topics (Topics:
// name, id, partition count) with the request (Client.Topics), and the
// group's own configs (Client.GroupConfig: consumer.session.timeout.ms
// and consumer.heartbeat.interval.ms set with IncrementalAlterConfigs on
// the GROUP resource, which checks them against group.consumer.min/max.*;
// unset, the broker's apply). The core resolves subscriptions against the
// topics at every heartbeat; what a regex matches is cached while the
// topics are the same snapshot (TopicsSnapshot: the shell republishes its
// topics when one is created, deleted or grows), so a regex is matched
// against every topic name once per snapshot and once when it first
// appears, as Kafka resolves regexes again on a new metadata image. It
// keeps:
//
//   - the group epoch, bumped when a member joins or leaves (or is
//     fenced), changes its subscription, regex or server assignor, or the
//     subscribed topics' metadata (ids, partition counts) changes;
//   - the target assignment, computed at every bump by the broker-side
//     assignor (group.consumer.assignors, uniform then range by default;
//     the one most members name in ServerAssignor wins): uniform balances
//     partition counts and moves partitions only from members above their
//     share to members below it (when every member subscribes to the same
//     topics, each gets P/M and P%M of them one more, the extra ones to
//     those that held the most; each keeps its previous target up to that
//     quota, the rest fill the others); otherwise partitions stay with
//     their previous member up to its share, the rest go to the least
//     loaded subscriber, and the widest gap of two or more is narrowed one
//     move at a time). So no member gives partitions up and takes others
//     in one epoch, and a join or leave settles in one heartbeat interval
//     (consumer_convergence_test.go simulates it). Range gives each
//     subscriber of a topic a contiguous range, members in id order;
//   - per member: its epoch (the one it must heartbeat with) and previous
//     epoch, its state (stable, unrevoked partitions, unreleased
//     partitions), what it owns (assigned) and what it must give up
//     (pending revocation).
//
// Reconciliation (consumer_reconcile.go) moves a member one safe step per
// heartbeat: partitions it owns outside its target are taken out of its
// assignment first, at its old epoch; only when a heartbeat's owned
// partitions show they are gone (at once when this heartbeat's already
// leave them out, Kafka's ownsRevokedPartitions) does it move to the
// target epoch; then it
// gets every target partition no other member owns, and the others (still
// owned elsewhere) come on a later heartbeat once released. So no
// partition is ever owned by two members. A member that does not revoke
// within its rebalance timeout is fenced.
//
// Heartbeat rules (Kafka's): epoch 0 joins (v0: the coordinator makes the
// member id; v1: the client's, required); a known member at epoch 0
// rejoins owning nothing; a higher epoch than the member's, or a lower one
// other than its previous epoch with owned partitions within its
// assignment (a lost answer), is FENCED_MEMBER_EPOCH; an unknown member is
// UNKNOWN_MEMBER_ID; epoch -1 leaves; epoch -2 is a static member leaving
// for now: it keeps its partitions until its session ends, and the same
// group.instance.id joining again under a new member id takes over its
// assignment and epoch (UNRELEASED_INSTANCE_ID while the old one has not
// left). A member silent for group.consumer.session.timeout.ms (45 s; the
// group's consumer.session.timeout.ms when set, from the member's next
// heartbeat on) is fenced. Answers carry group.consumer.heartbeat.
// interval.ms (5 s; the group's consumer.heartbeat.interval.ms when set) and the
// assignment whenever it changed, the member joined, or the request's
// epoch or owned partitions differ from the member's. Bad requests get
// INVALID_REQUEST (Kafka's messages), a regex that does not compile
// INVALID_REGULAR_EXPRESSION (Go's regexp is RE2, as Kafka's RE2J; the
// regex must match the whole topic name; internal topics never match), an
// unknown ServerAssignor UNSUPPORTED_ASSIGNOR, a member over
// group.consumer.max.size GROUP_MAX_SIZE_REACHED.
//
// OffsetCommit v9+ carries the member epoch in its generation field and
// OffsetFetch v9+ the member id and epoch: an unknown member is
// UNKNOWN_MEMBER_ID, another epoch than the member's STALE_MEMBER_EPOCH; a
// commit or fetch naming no member (an admin, a simple consumer) is
// allowed, a commit only while the group has no members.
// ConsumerGroupDescribe shows the group epoch, assignment epoch, assignor,
// each member's epoch, subscription, assignment and target; state Empty,
// Assigning (group epoch ahead of the target), Reconciling (a member not
// yet at the target) or Stable. ListGroups v5 lists it with type
// "consumer"; DescribeGroups answers for it as for an unknown group (Dead;
// GROUP_ID_NOT_FOUND from v6), as Kafka 4 does for a non-classic group.
//
// Answers wait for their records: every heartbeat that changes anything
// appends its records and is answered from OnAppended.
//
// # Consumer group records
//
// Kafka 4.1's (GroupCoordinatorRecordSerde reads samsa's and samsa reads
// Kafka's; consumer_records_kafka_test.go checks both ways). Keys are non-flexible:
// int16 type, string group id (and string member id for 5, 7, 8). Values
// are int16 version 0, then a flexible struct (compact strings and
// arrays, uuids as 16 bytes) ending in a tagged-field section:
//
//	3 ConsumerGroupMetadata          int32 epoch (tags: metadata hash, creation time; not written)
//	4 ConsumerGroupPartitionMetadata []{uuid topicId, string name, int32 partitions, []{int32 partition, []string racks}}
//	5 ConsumerGroupMemberMetadata    nullable instanceId, nullable rackId, clientId, clientHost,
//	                                 []string topics, nullable regex, int32 rebalanceTimeoutMs, nullable assignor;
//	                                 tag 0 (classic members): nullable struct {int32 sessionTimeoutMs,
//	                                 []{string name, bytes metadata} protocols}
//	6 ConsumerGroupTargetAssignmentMetadata  int32 assignmentEpoch
//	7 ConsumerGroupTargetAssignmentMember    []{uuid topicId, []int32 partitions}
//	8 ConsumerGroupCurrentMemberAssignment   int32 epoch, int32 previousEpoch, int8 state,
//	                                         assigned and pendingRevocation as in 7
//
// A member that leaves gets tombstones for 8, 7 and 5; a deleted group
// also for 6, 4 and 3 (3 last: replaying its tombstone ends the group).
// Replay rebuilds the group; after the load every member's session starts
// again, and a member that moved with its coordinator carries on at its
// epoch.
//
// # Differences from Kafka worth knowing
//
//   - A request superseded by another from the same member is answered
//     (REBALANCE_IN_PROGRESS) instead of being dropped.
//   - Heartbeat in CompletingRebalance answers NONE (as Kafka 2.x+ does;
//     its state table in the docs says REBALANCE_IN_PROGRESS).
//   - Transactional offset commits (TxnOffsetCommit) are handled in
//     txn_offsets.go.
//   - KIP-848: no rack-aware assignment, per-group configs in
//     single-node mode only (cluster mode refuses GROUP resources, as
//     ZooKeeper-era Kafka does), regexes resolved synchronously in the
//     heartbeat that first sees a new topics snapshot (Kafka resolves
//     them in the background, and also every few minutes), the
//     downgrade only when a consumer protocol member leaves (not when a
//     classic static member replaces the last one), the subscribed
//     topics' metadata compared directly rather than through a hash, a heartbeat
//     to a group that does not exist with an epoch above 0 is
//     UNKNOWN_MEMBER_ID (the member rejoins), and an append that fails
//     after the state changed in memory is answered with its error but
//     not rolled back (the coordinator usually loses its partition then,
//     and reloads from the log).
package group
