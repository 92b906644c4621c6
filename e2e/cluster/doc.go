// Package cluster tests samsa's cluster mode end to end: three `samsa
// serve` processes on one real ZooKeeper (testkit.StartCluster, Kind
// Samsa), driven by real clients and tools, checked against what Apache
// Kafka 3.9.1 does in ZooKeeper mode (docs/cluster-reference.md). The
// tests are the "Done when" list of issue #16:
//
//   - tools_test.go: kcat -L, Kafka's TopicCommand (kafka-topics.sh
//     --describe) of 3.9.1 and of 4.1.1, and BrokerApiVersionsCommand see
//     three brokers, the controller, and an RF 3 topic spread over them.
//   - zookeeper_test.go: the znodes the brokers write (/cluster/id,
//     /brokers/ids/N, /controller, /controller_epoch, topics, partition
//     state, configs, /admin/delete_topics, /latest_producer_id_block)
//     decode with zkmeta's decoders and have the same JSON keys as the
//     znodes Kafka 3.9.1 wrote (zkmeta/testdata/kafka-3.9.1).
//   - failover_test.go: kill -9 of the controller; another is elected
//     within the session timeout, topics are still created and deleted,
//     and a deleted topic's partition directories go from every broker.
//   - lifecycle_test.go: session expiry, restart at once after kill -9
//     (the old ephemeral registration is still there), controlled
//     shutdown on SIGTERM.
//   - groups_test.go: a 3-member consumer group consumes exactly once and
//     commits; its coordinator's broker is killed, another broker
//     coordinates the group, the group is Stable again and consumes new
//     records, resuming from its commits (each record of either side of
//     the kill consumed exactly once), and commits alone survive the
//     coordinator's death (TestCommitsSurviveCoordinatorKill). The
//     resumption check would skip if replicationWorks found the killed
//     leader's records gone from the new leaders.
//   - kip848_test.go: the same kill for a KIP-848 consumer group
//     (franz-go members on the consumer protocol): the new coordinator
//     loads the group from __consumer_offsets with the same members, and
//     consumption resumes exactly once.
//   - reassign_test.go (issue #17, four brokers): partition reassignment
//     with Kafka 3.9.1's kafka-reassign-partitions (--execute --throttle,
//     --verify, --cancel), kadm's AlterPartitionAssignments and
//     ListPartitionReassignments, and the legacy /admin/reassign_partitions
//     znode; the new replicas hold every record, the removed ones'
//     directories go; replication throttles hold a move up, and a move
//     survives a controller kill. SAMSA_REASSIGN_REFERENCE=kafka39 runs
//     it against Kafka 3.9.1 brokers instead.
//
// The tests that only look share one cluster (sharedCluster, started on
// first use and stopped with SIGTERM after the last test, an unclean stop
// failing the run); tests that kill, stop or expire a broker start their
// own. Tests run one at a time: on a small machine parallel clusters would
// stretch the timing bounds the failover tests assert.
//
// Time bounds here are correctness bounds (a failover must finish within
// the ZooKeeper session timeout plus slack), not performance claims.
//
// kcat, java and Maven (for Kafka's tools) and ZooKeeper are needed;
// without them tests skip, except in CI (CI=true), where they fail.
// `make cluster-test` runs the package; `make test` leaves it out.
package cluster
