// Package mixed tests samsa as a member of an Apache Kafka 3.9.1
// cluster (issue #21): Kafka brokers (real JVMs from Maven Central, in
// ZooKeeper mode) and `samsa serve` brokers on one real ZooKeeper
// (testkit.StartCluster with BrokerKinds), and each kind taking over the
// other's data directory in place (testkit's ClusterBroker.SetKind):
//
//   - kills_test.go: TestOneKafkaTwoSamsa and TestTwoKafkaOneSamsa, an
//     RF 3 topic under an idempotent acks=all producer while leaders of
//     both kinds are killed with SIGKILL and restarted, under a Kafka
//     controller and then a samsa one (controller_test.go forces it);
//     every acknowledged record is read back exactly once.
//   - coordinators_test.go: a consumer group and a transactional id
//     coordinated by a Kafka broker, then by a samsa broker, each
//     surviving its coordinator's kill (the other kind loads the
//     __consumer_offsets and __transaction_state it replicated).
//   - takeover_test.go, takeover_data_test.go: Kafka writes a directory
//     with every kind of file (segments, indexes, .txnindex, leader
//     epochs, the four checkpoints, producer snapshots, group offsets),
//     samsa serves it and writes more, Kafka takes it back; and the same
//     starting with samsa. TestTakeoverRefusesOldFormat: a partition in
//     Kafka's message format v1 is refused clearly, its files untouched.
//   - migration_test.go: TestRollingMigration, docs/migration.md under
//     load: three Kafka brokers replaced one by one by samsa with
//     controlled shutdowns, one rolled back.
//
// Every test scans the Kafka brokers' output afterwards
// (kafkalogs_test.go): a line naming a protocol problem, or an ERROR the
// test's own kills do not explain, fails it. E2E_MIXED_LOGS=<dir> keeps
// every broker's whole output of each test for reading.
//
// The JVMs are heavy for the small machines CI runs on, so the clusters
// are short-lived, the heaps small (testkit.KafkaJVMOptions) and the load
// paced. Java, Maven (for Kafka 3.9.1's jars) and ZooKeeper are needed;
// without them the tests skip, except in CI, where they fail.
// `make mixed-test` runs the package (`make cluster-test` runs it after
// e2e/cluster; `make test` leaves it out); `make migrate-demo` runs the
// rolling migration alone.
package mixed
