// Package replication tests samsa's replication with real processes: a
// cluster of `samsa serve` brokers on a real ZooKeeper (testkit.StartCluster),
// real clients producing with acks=all, and brokers killed with SIGKILL
// under load. What it checks is Kafka's promise, on samsa's stronger
// durability: every record a producer was told is written is read back
// afterwards, and every replica returns to the ISR.
package replication
