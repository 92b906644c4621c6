// Package mixed tests samsa as a member of an Apache Kafka 3.9.1
// cluster (issue #21): Kafka brokers (real JVMs from Maven Central, in
// ZooKeeper mode) and `samsa serve` brokers on one real ZooKeeper
// (testkit.StartCluster with BrokerKinds), each kind leading and
// following partitions of the other, either kind the controller, under an
// acks=all franz-go producer while leaders are killed with SIGKILL; and
// the in-place takeover of a broker's data directory, Kafka's by samsa
// and samsa's by Kafka (testkit's ClusterBroker.SetKind).
//
// What is checked is what a user of a mixed cluster relies on: every
// acknowledged record is read back, the controller moves between kinds,
// consumer groups and transactions work whichever kind coordinates them,
// and the Kafka brokers log no error about what samsa sent or answered
// (their output is scanned for the log lines that name a malformed or
// refused inter-broker request).
//
// The JVMs are heavy for the small machines CI runs on, so the clusters
// are short-lived and the heaps small (testkit.KafkaJVMOptions). Java,
// Maven (for Kafka 3.9.1's jars) and ZooKeeper are needed; without them
// the tests skip, except in CI, where they fail. `make mixed-test` runs
// the package; `make cluster-test` runs it after e2e/cluster.
package mixed
