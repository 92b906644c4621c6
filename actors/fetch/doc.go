// Package fetch serves the Fetch API: incremental fetch sessions
// (KIP-227, sessions.go), the plan of a request against the routing
// table, and the operation that reads every partition of a fetch in
// parallel, long-polls when the data is short of min_bytes, and answers
// with file regions that netloop sends by sendfile (op.go, handle.go).
//
// Threading: the one documented exception to "everything is an actor
// message". A fetch in flight (fetchOp) is touched by the gnet loop that
// started it, by the partition actors that fill its slots (through
// partition.FetchOp), and by its max-wait timer; it keeps its state under
// a mutex with its round and answered flags in atomics so partitions can
// drop stale waiters without taking it. Why not an actor per fetch: a
// consumer at the tail sends a fetch every few milliseconds per
// connection, and most partitions are answered from their published view
// (partition.View) without any message at all; an actor per fetch would
// add a spawn and a mailbox hop to every one of them. Nothing blocks and
// nothing polls: the last slot in, a wake-up, or the timer moves the
// operation on, on whichever goroutine got there.
//
// # The path of a fetch
//
// Service.Handle (on the gnet loop) serves Fetch v4-17. It refuses
// replica fetches when the broker runs alone (replica id >= 0, from v15
// in ReplicaState: INVALID_REQUEST), resolves the fetch session, looks
// each partition up in the routing table (by topic id from v13; unknown ones are
// answered in the plan: UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID, or
// NOT_LEADER_OR_FOLLOWER for an offline log or, in cluster mode, a
// partition the cluster view has on other brokers only) and starts a fetchOp. The
// op sends every partition actor its slot (a partition.FetchSlot, which
// is both the message and where the answer goes); the actor checks the
// client's leader epoch (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH) and
// the offset (OFFSET_OUT_OF_RANGE outside [log start, log end]) and reads
// segment regions from the offset up to the high watermark (the last
// stable offset is the high watermark: no transactions yet), at most min(partition_max_bytes,
// max_bytes), always the first batch (segment.ReadRequest.MinOneBatch).
// The read is index lookups and header preads (none near the end of the
// log, where segment remembers the newest batches); record bytes stay in
// the file. A slot whose fetch offset is the partition's high watermark
// is answered without a message, from the view the partition actor
// publishes (partition.View: high watermark, leader epoch, log start):
// at the tail most partitions of a fetch have nothing new.
//
// max_bytes is a budget across partitions. Partitions are read in
// parallel, so the op applies it when answering: in fetch order, the
// first partition with data keeps its read whole, each later one only if
// it fits in what is left; a read that does not fit is released and its
// partition answered without records (the client asks again; sessions
// move partitions that got data to the end so none starves).
//
// Long polling: when the round's data is short of min_bytes (and
// max_wait_ms > 0, no partition failed), each partition whose read was
// short left a partition.Waiter (the offset it read up to and the log size
// then); the op releases its reads and parks. A slot answered from the
// view parks its waiter in the view as it is answered; the view keeps
// every waiter of the partition, under a lock that also orders the high
// watermark's changes. onHighWatermark, called by the produce side on
// every advance, takes out each waiter whose offset the high watermark
// passed and, after letting go of that lock, reports to it an estimate
// of the bytes that arrived (log size growth); once the estimates reach
// min_bytes the op reads again,
// only the partitions that reported progress when the parked round found
// nothing at all (op.go).
// A max_wait_ms timer reads a last time and answers. No polling, no
// actor waits. Broker.Drain (netloop calls it at Shutdown, through
// netloop.Drainer) answers parked fetches at once.
//
// Answering: one wire.EncodeFetchResponse call lays the response out
// around the regions (file chunks); netloop sends them with sendfile on
// plaintext listeners and calls Response.Done after the last byte or when
// the connection is gone, which releases the regions. Reads released
// early: a parked round's, a trimmed partition's, a late answer of an
// abandoned round. A slot sent to a stopped partition actor (deleted
// topic) comes back through protoactor's dead letters and is answered
// NOT_LEADER_OR_FOLLOWER at once; one that is never answered (an actor
// stuck) is reported so after max_wait_ms plus the gather timeout.
//
// Cluster mode. A follower's fetch (replica id set) goes to the
// leader's actor, which records the follower's position. A consumer's
// v11+ fetch carries client metadata (KIP-392): a follower serves it up
// to its own high watermark, and when replica.selector.class is Kafka's
// RackAwareReplicaSelector and the consumer names its rack (client.rack),
// the leader may answer with a preferred read replica instead of records:
// an in-sync follower in that rack (partition.Core.PreferredReadReplica).
// Such a fetch skips the view's shortcut (the actor decides) and is
// answered at once, like an error; an incremental session always carries
// the redirect. From v16 a partition answered NOT_LEADER_OR_FOLLOWER or
// FENCED_LEADER_EPOCH names its current leader (the cluster view's) and
// the response's NodeEndpoints that leader's address on the clients'
// listener (KIP-951), as Kafka 3.9 does.
//
// Fetch sessions (KIP-227, sessions.go): real incremental sessions
// in a cache of max.incremental.fetch.session.cache.slots (default 1000;
// 0 turns them off and every fetch is full, which every client accepts).
// The rules (epochs, FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH,
// forgotten topics, eviction, which partitions an incremental answer
// carries) are in that file's comment.
//
// # The operation
//
// A fetchOp is one Fetch request in flight: it reads every partition in
// parallel (each partition actor fills its slot), and when the last slot
// is in it either answers or, when the data is short of min_bytes, parks
// until a partition reports progress or max_wait_ms passes, then reads
// again. Nothing blocks and nothing polls:
//
//	read round ──all slots in──▶ enough, error, final or no wait? ──▶ answer
//	    ▲                               │ no
//	    │                               ▼
//	    ├──── progress ≥ min_bytes ── parked (waiters on the partitions)
//	    └──── max wait timer (final round) ──┘
//
// A round is numbered; waiters left by an older round are stale and
// partitions drop them.
//
// When the parked round found no data at all (always so with min_bytes
// 1, what clients send by default), a wake-up re-reads only the
// partitions that reported progress (a partial round): the others answer
// with what their last read found, no data and the high watermark then,
// which has not moved since (it would have woken them). With six
// partitions and one appended to, that is one actor message per wake
// instead of six. A partial round that comes back short of min_bytes
// reads every partition at once instead of parking, so every partition
// leaves a fresh waiter. A parked round that found some data (short of a
// larger min_bytes) released it, so its wake-up reads every partition.
//
// A full round answers a partition whose fetch offset is its high
// watermark from the partition's published view, without a message
// (partition.View): at the tail, most partitions of a fetch are such.
// A slot that may wait parks its waiter in the view as it is answered, so
// the round can park without having asked any actor; the actor reports
// progress to the view's waiters when it raises the high watermark. A
// slot that may not wait (a final round, a fetch without max wait) is in
// a round that answers whatever it finds.
//
// The timer is armed once, at max_wait_ms from the request's arrival; if
// a round is still out when it fires (a partition actor died and its
// message went to dead letters), it re-arms for the gather timeout and
// then answers without the missing partitions (NOT_LEADER_OR_FOLLOWER),
// releasing late reads as they come in.
//
// Region references: a slot's read holds file references until released.
// A round that is not answered releases its reads before parking; the
// answer keeps the reads it sends and releases them in Response.Done
// (netloop calls it after the last byte, or when the connection is gone);
// reads trimmed off by max_bytes are released when the answer is built.
//
// Client quotas (quota.go): a consumer with a consumer_byte_rate asks
// for at most its quota's window; an answer that takes it over its byte
// rate, or finds it over its request_percentage, is replaced by Kafka's
// throttled answer (no partitions, throttle_time_ms, its reads released
// and its bytes taken back from the rate, the session left as the
// request made it) and the connection is muted for the throttle time.
package fetch
