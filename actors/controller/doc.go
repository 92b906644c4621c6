// Package controller is the cluster controller of ZooKeeper mode, as
// Apache Kafka 3.9's KafkaController: the one broker that won
// /controller, the only writer of partition state (leader, leader epoch,
// ISR), and the sender of LeaderAndIsr, UpdateMetadata and StopReplica to
// the brokers. It answers the brokers' AlterPartition, ControlledShutdown
// and AllocateProducerIds.
//
// # Core and shell
//
// The core (core.go, types.go, config.go, effects.go, requests.go,
// election.go, preferred.go, replicas.go, brokers.go, topics.go,
// deletion.go, alter.go, shutdown.go, reassign.go) is plain state: no
// clock, no goroutines, no I/O of its own (Config.UncleanFor, the one
// lookup it makes, is the shell's). Each method takes one input (Start
// with everything read from ZooKeeper, BrokersChanged, TopicsChanged,
// DeletionRequested, StopReplicaAnswered, AlterPartition,
// ControlledShutdown, ElectLeaders, CheckLeaderBalance,
// AlterPartitionReassignments, ZkReassignment) and returns Effects:
// fenced partition-state and topic znode writes (one multi, all or
// nothing), topic deletions and marker removals, then the requests to
// send, in order, then a reply.
// Writes come before sends because a request announces what was
// written. The core predicts each write's new znode version (a create
// leaves 0, a set one more than expected), so its requests carry the
// versions at once; Written checks the prediction, WriteFailed turns a
// fenced write into Resign and a conflict into Reload (start over from a
// fresh read).
//
// The shell (actor.go, messages.go, store.go) is a protoactor actor: it
// campaigns through Store.ElectController and a watch on /controller;
// once elected it arms the watches (/brokers/ids, /brokers/topics and
// each topic, /admin/delete_topics), reads everything and starts the
// core; it carries out Effects through the Store and the Sender (one
// in-order queue per broker, interbroker.Channel), and steps down when
// the session expires, a fenced write fails or /controller is no longer
// its own. Store and Sender are interfaces here so the package depends on
// neither zkmeta nor interbroker; the wiring adapts them.
//
// # Kafka's rules, and where this differs
//
//   - New partitions: the first live replica in assignment order leads,
//     the live replicas are the ISR, leader epoch 0; LeaderAndIsr with
//     is_new to the ISR. No live replica: the partition waits (no znode).
//
//   - A broker dies: partitions it led elect the first live ISR member in
//     assignment order (leader epoch +1, the ISR keeps its live members);
//     with none, unclean.leader.election.enable picks the first live
//     replica, alone in the ISR and RECOVERING; otherwise the dead
//     broker still leaves the ISR as below. Then it leaves every ISR it
//     was in (a last member stays: the ISR is never empty; the leader
//     becomes -1 if it led), each such change a new leader epoch, as
//     Kafka 3.9's ZooKeeper controller bumps it for every change it
//     makes; LeaderAndIsr to the other replicas.
//
//   - A broker comes (back), or re-registers with a larger epoch (a
//     restart): the others get UpdateMetadata with the new broker list,
//     it gets UpdateMetadata with every partition and LeaderAndIsr for
//     every replica it hosts, then leaderless partitions elect. This core
//     handles restarted brokers before new ones so no request carries a
//     stale broker epoch (Kafka does it the other way round).
//
//   - Every change ends with UpdateMetadata for the changed partitions to
//     every registered broker (live brokers with their endpoints and
//     rack; offline replicas; leader -2 for topics queued for deletion).
//
//   - Deletion (TopicDeletionManager): UpdateMetadata with leader -2,
//     StopReplica (delete=false) then StopReplica (delete=true) to every
//     live replica; when every replica answered success the topic's
//     znodes go. A replica on a dead broker or one that failed halts the
//     deletion until one of the topic's brokers starts again.
//     delete.topic.enable=false only removes the marker.
//
//   - AlterPartition: Kafka's checks and error codes (see AlterPartition);
//     a request from a broker that is not the leader is refused with
//     NOT_LEADER_OR_FOLLOWER (Kafka's ZooKeeper controller would make it
//     the leader). The write keeps the leader epoch; the partition epoch
//     is the znode version.
//
//   - ControlledShutdown: the broker can no longer lead or be in an ISR;
//     partitions it leads elect another ISR member (and it leaves their
//     ISR), partitions it follows get StopReplica and shrink it out; the
//     answer lists what it still leads. Partitions with one replica stay.
//
//   - ElectLeaders (preferred.go, Kafka's processReplicaLeaderElection):
//     preferred, the first replica leads if it is live and in the ISR
//     (the ISR stays; leader epoch +1); unclean, a partition without a
//     live leader elects as if its leader died with unclean election
//     allowed. Kafka's per-partition errors; the answer goes once the
//     write succeeds (Kafka's broker also waits until its metadata shows
//     the new leader).
//
//   - auto.leader.rebalance.enable: CheckLeaderBalance, called by the
//     shell's timer (first 5 s after the election, then every
//     leader.imbalance.check.interval.seconds), runs preferred elections
//     for every broker whose preferred partitions led elsewhere are more
//     than leader.imbalance.per.broker.percentage of them (Kafka's
//     checkAndTriggerAutoLeaderRebalance; topics queued for deletion are
//     left out). Like Kafka 3.9 it does not skip partitions being
//     reassigned.
//
//   - unclean.leader.election.enable is looked up per topic
//     (Config.UncleanFor: the topic's config, else the broker's) only
//     when a partition has no live in-sync replica, as Kafka reads it
//     at the election.
//
//   - Requests as Kafka 3.9 sends them at its default IBP: LeaderAndIsr
//     v7, UpdateMetadata v8, StopReplica v4, with controller id and
//     epoch, the target's broker epoch, topic ids, Type 0 (a ZooKeeper
//     controller never sets it) and isKRaftController false.
//
//   - Reassignment (reassign.go, KIP-455): AlterPartitionReassignments,
//     ListPartitionReassignments and the legacy /admin/reassign_partitions
//     znode. The topic znode gets target-then-original replicas with
//     adding/removing; the adding replicas get LeaderAndIsr (is_new) and
//     catch up; an AlterPartition that puts the whole target in the ISR
//     completes it (leader from the target if needed, removed replicas
//     out of the ISR, StopReplica delete=true, the final znode). Start
//     resumes the reassignments the topic znodes hold. Topic znode writes
//     go in the same fenced multi as the partition states (Kafka writes
//     them one by one).
//
// Not done: the legacy /admin/preferred_replica_election znode, ISR
// change and log-dir notifications, topic ids for topics written without
// one, LeaderAndIsr KAFKA_STORAGE_ERROR answers, ISR shrinks for topics
// queued for deletion (Kafka writes them; their states are about to go).
package controller
