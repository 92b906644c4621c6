// Package cluster is what a broker in cluster mode knows of the cluster,
// as pure values: the metadata cache the controller keeps it up to date
// with (UpdateMetadata), the answers built from it (Metadata,
// DescribeCluster, the coordinator of a group), the decisions a
// LeaderAndIsr or StopReplica asks of this broker, and Kafka's replica
// assignment for new topics and partitions.
//
// # The cache
//
// View is immutable: Apply returns a new View with an UpdateMetadata's
// live brokers (always the full set) and partition states (all of them
// on a broker's first update or after a controller change, the changed
// ones otherwise) laid over the old one, as Kafka's ZK-mode
// MetadataCache does. A partition state whose leader is -2
// (LeaderDuringDelete) removes the partition; a topic left with none is
// gone. Requests from a controller with an older epoch than the last one
// seen are refused (STALE_CONTROLLER_EPOCH) and leave the view as it was.
//
// # Threading
//
// Nothing here is safe for concurrent mutation and nothing needs to be:
// the metadata actor (actors/catalog) owns the current View and
// publishes each new one through Table, which request handlers on any
// goroutine read.
package cluster
