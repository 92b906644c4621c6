// Package replica is the follower side of replication in cluster mode,
// and the leaders' link to the controller for ISR changes.
//
// # Fetchers
//
// Fetchers keeps one fetcher per leader broker (Kafka's
// ReplicaFetcherManager and its fetcher threads): each multiplexes every
// partition this broker follows from that leader into one Fetch request
// at a time, sent as Kafka 3.9's followers send it: v17, this broker's id
// and registration epoch in ReplicaState, topics by id, max wait 500 ms,
// min bytes 1, 10 MiB per response and 1 MiB per partition (the
// replica.fetch.* configs), no rack; down to the highest version an
// older leader serves (negotiated through ApiVersions, never below 12),
// and at 12, by name, when a partition's topic id is unknown. From each
// partition's log end and with the epoch of its last batch (KIP-320), so
// the leader can say where a divergent tail starts. What comes back goes
// to the partition's actor (partition.ReplicaAppend), which answers once
// the data counts as this follower's position (once fsynced, under a
// flush policy that fsyncs); only then does the next fetch go out, so the
// leader's high watermark never counts an offset a follower could lose
// to a power cut. A divergent tail is cut (partition.ReplicaTruncate)
// before fetching on. A partition whose leader says NOT_LEADER,
// FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH or UNKNOWN_TOPIC_ID (the
// leader has not had its LeaderAndIsr yet) is held back for
// replica.fetch.backoff.ms and tried again; the controller's next
// LeaderAndIsr replaces it anyway. Each fetch tells the leader this
// follower's log start, and each answer's log_start_offset goes to the
// partition, whose log start follows the leader's (retention and
// DeleteRecords reach the replicas, as in Kafka).
//
// # Throttles
//
// Throttles (throttle.go) are Kafka's replication quotas: a follower
// quota the fetchers consult (a throttled partition out of the ISR sits
// out fetches while the quota is exceeded) and a leader quota the
// partitions consult when they answer a follower (partition.Replication's
// LeaderThrottle), both set from the dynamic broker and topic configs the
// metadata actor reads.
//
// # Threading
//
// A fetcher is a goroutine with a network client, not an actor: it
// blocks on the leader's answer and on the partition actors' replies,
// which arrive through callbacks into channels. Fetchers' methods are
// safe for concurrent use; the metadata actor calls them as roles change.
//
// # ISR changes
//
// ISRSender sends a leader's AlterPartition (v3, as Kafka 3.9's brokers)
// to the controller the cluster view names, and hands the answer back to
// the partition.
package replica
