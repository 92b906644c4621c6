// Package replica will hold the follower fetchers of cluster mode: one
// actor per source broker multiplexing its partitions, fetching with the
// ordinary Fetch API (replica id set), truncating by leader epoch before
// fetching. Nothing is here yet; replication is its own issue.
package replica
