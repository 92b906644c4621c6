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
// A slot sent to a partition actor that has stopped (deleted topic)
// comes back through the actor system's dead letters and is answered
// NOT_LEADER_OR_FOLLOWER at once; one never answered (an actor stuck) is
// answered so after max_wait_ms plus the gather timeout.
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
package fetch
