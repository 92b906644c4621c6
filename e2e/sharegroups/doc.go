// Package sharegroups tests share groups (KIP-932) end to end with Java's
// KafkaShareConsumer (kafka-clients 4.1, interop/java's ShareGroups)
// against `samsa serve`: several members consume a topic's records once
// in total, a released record and a record whose acquisition lock ran
// out come back, rejected and over-limit records are archived, and a
// restart keeps every acknowledgement; Java's Admin lists share groups,
// describes them and lists, alters and deletes their offsets. On three
// brokers with ZooKeeper (cluster_test.go) three members consume a topic
// of 6 partitions (replication factor 3) across a kill -9 of a partition
// leader: every record acknowledged once, none twice, none lost; and
// routing_test.go asks each broker directly what goes to the group's
// coordinator and what to a partition's leader.
package sharegroups
