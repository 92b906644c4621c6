// Package replication tests samsa's replication with real processes: a
// cluster of `samsa serve` brokers on a real ZooKeeper (testkit.StartCluster),
// real clients producing with acks=all, and brokers killed with SIGKILL
// under load, frozen with SIGSTOP, or cut off from the other brokers
// (testkit's BrokerLinks: the network between brokers fails while
// ZooKeeper and the clients still reach every broker). What it checks is
// Kafka's promise, on samsa's stronger durability: every record a producer
// was told is written is read back afterwards, a leader that cannot
// replicate stops acknowledging, replicas that fell behind catch up to
// byte-identical logs, and every replica returns to the ISR. Besides
// franz-go, Apache Kafka's Java client (testdata/RideThrough.java, run in
// java's source-file mode on Kafka 3.9.1's class path) and librdkafka
// (kcat) must ride through leader kills.
package replication
