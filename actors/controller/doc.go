// Package controller will hold the cluster controller of ZooKeeper mode:
// elected through /controller, the only writer of partition state, and
// the sender of LeaderAndIsr, UpdateMetadata and StopReplica. Nothing is
// here yet; cluster mode is its own issue.
package controller
