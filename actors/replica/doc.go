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
// to the partition's actor (partition.ReplicaAppend), which answers at
// once with the new log end and reports it durable apart, once fsynced;
// when the next fetch may go out is the durable positions' business
// (below). A divergent tail is cut (partition.ReplicaTruncate) before
// fetching on. A partition whose leader says NOT_LEADER,
// FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH or UNKNOWN_TOPIC_ID (the
// leader has not had its LeaderAndIsr yet) is held back for
// replica.fetch.backoff.ms and tried again; the controller's next
// LeaderAndIsr replaces it anyway. Each fetch tells the leader this
// follower's log start, and each answer's log_start_offset goes to the
// partition, whose log start follows the leader's (retention and
// DeleteRecords reach the replicas, as in Kafka).
//
// # Durable positions (durable.go)
//
// Under a flush policy that fsyncs, samsa acknowledges acks=all only
// once every ISR member has the records on disk. Each fetch says two
// things of a partition: its fetch offset (the log end: what the
// follower holds, where the leader reads next) and, in samsa's own
// tagged field (wire.FetchDurableEndTag, tag 10000 of the request
// partition), its durable end. A samsa leader counts the durable end
// for the high watermark and for joining the ISR, and answers with
// wire.FetchDurableHonouredTag (tag 10000 of the response partition);
// only then does the follower fetch again while its fsync runs (the
// fetch and the fsync overlap, and the partitions of one answer are
// appended and fsynced together rather than one after the other).
// Against a leader that does not answer so (Apache Kafka 3.9, which
// skips unknown tagged fields, or a samsa without the scheme) the next
// fetch waits until the log end is durable, so its fetch offset is the
// durable end and no leader ever counts what a power cut could take.
// The answer binds one partition at one leader epoch: a new leader or
// epoch (a LeaderAndIsr) and a position read again start without it.
// Either way what is ahead is bounded: a fetch waits until everything
// appended before the previous fetch went out is durable, so a follower
// whose disk hangs stops fetching and leaves the ISR. A fetch sent with
// something not yet durable asks the leader not to wait (max wait 0),
// since parked there it could not report the fsync; if it brings
// nothing, the next fetch waits for the fsync and then parks as usual.
// Under the interval and never policies what is appended counts as
// durable at once, so the fetch offset is the position, as in Kafka.
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
