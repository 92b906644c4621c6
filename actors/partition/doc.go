// Package partition is one partition: a pure core (core.go,
// validate.go: the produce state as a plain value that takes a message
// and the time and returns effects) and the partition actor, its shell
// (actor*.go: one per partition, owning its segment.Log, carrying out
// the core's effects, serving reads, publishing a View for the fetch
// path). Only the core files are bound by the pure-core lint rules (no
// clock, no timers); the shell reads the broker's clock and hands the
// time in.
//
// # What the core owns
//
//   - the high watermark: offsets below it are durable under the topic's
//     flush policy (at once for interval/never; for group/always once the
//     log's recovery point or a durability report says so);
//   - the produce answers waiting for durability, answered as the high
//     watermark passes them, failed when an fsync fails or the log closes
//     uncleanly;
//   - the producer (idempotence) state: duplicates answered with their
//     first offsets, out-of-sequence and fenced batches refused, and when
//     to snapshot it;
//   - the topic's produce rules (validate.go: one RecordBatch v2 per
//     partition, sizes, codecs, timestamps, keys on compacted topics);
//     a batch refused for some of its records names every one of them
//     (Ack.RecordErrors, Produce v8+'s record_errors, KIP-467).
//
// Room is left beside the high watermark for what cluster mode brings:
// the role (leader or follower), the ISR and followers' fetch positions,
// and the last stable offset with open transactions.
//
// # The protocol with the shell
//
//	core, fx := NewCore(rules, producers, snapAt, logStart, nowMs, logState)
//	a, fx := core.Produce(Produce{Records, Version, Acks, Ticket}, nowMs, logState)
//	if a != nil {                          // validated, in sequence: append it
//	    res, err := log.Append(a.Records, epoch, nowMs)
//	    fx = core.Appended(a, res, err, nowMs, logStateAfter)
//	}
//	fx = core.Durable(end, err, logState)  // a durability report came back
//	fx = core.Reconfigure(rules, logState) // the topic's config changed
//	fx = core.Closed(cleanly)              // the log closed
//
// The shell reads a LogState from its segment.Log right before each call
// and carries out the Effects: answer Acks (each names the Ticket the
// shell passed in), register a durability wait (segment.Log.WhenDurable)
// whose report comes back as a message to Durable, publish a moved high
// watermark and wake fetches, write a producer-state snapshot, log a
// Problem. The core never reads a clock, touches a file or sends a
// message, so it is tested alone: core_sim_test.go drives it through a
// seeded simulation of a log with fsyncs, partial group commits, fsync
// failures, crashes, restarts and policy changes, and checks that nothing
// unsynced is acknowledged and every produce is answered exactly once.
//
// # The path of a produce
//
// The api package's Produce handler (on the gnet loop) answers unknown partitions and bad
// acks itself and sends each partition a ProduceRequest holding its
// batch (a slice of the request frame) and a pointer to its answer in
// the response; a gather slot per partition, the last one encodes and
// replies (acks=0: req.Reply(nil) once every part is appended, because
// the batches alias the frame; if a part failed, a response with no bytes
// and CloseAfter instead, so netloop closes the connection as Kafka does).
// The core validates the batch (validate.go: a
// pure function of the batch, the topic's rules and now) and checks the
// producer state (actors/idempotence); the actor appends it
// through segment.Log.Append at the partition's leader epoch (assigned
// to the log when it opens), and answers once the batch is below the
// high watermark.
//
// High watermark and acknowledgements: the Core owns the high watermark,
// the produce answers waiting for durability and the producer state; the
// actor reads the log's state for each call and carries out the core's
// effects (actor_produce.go). The high watermark is the end of what is
// durable under the topic's flush policy: at once for interval/never, for
// group/always when segment's RecoveryPoint or a WhenDurable callback
// says so. The callback runs on segment's flush goroutine and only Sends
// durableUpTo to the actor. Every advance answers the produces it covers
// and calls onHighWatermark (the fetch side's wake-up). A failed fsync
// answers the waiting produces KAFKA_STORAGE_ERROR; the log refuses
// appends after it, so nothing is acknowledged that is not durable.
//
// Producer state: rebuilt in Started from the newest <offset>.snapshot
// at or below the log end plus a header-only replay of the log after it
// (segment.Log.ScanBatches); written at every close and every 256 MiB
// appended, through the data directory's vfs (actor_snapshots.go).
// Producer ids come from blocks of 1000 persisted in samsa-producer-ids
// in every data directory before use (actors/catalog), so ids stay unique
// across restarts. A producer silent for producer.id.expiration.ms with
// no transaction open is forgotten at each retention check
// (ExpireProducers).
//
// Transactions (KIP-890 part 1, core_verify.go and actor_verify.go): a
// transactional batch that would open its producer's transaction on the
// partition is appended only once the transaction's coordinator (TxnLink:
// an actor here, or AddPartitionsToTxn v4 VerifyOnly to its broker) said
// the partition is in the transaction; meanwhile the producer's later
// batches wait behind it in order, and a guard that any transactional
// batch or marker of the producer clears keeps a verification answered
// for an ended transaction from letting the batch in. Refusals are
// answered as Kafka 3.9's leader answers (VerificationError).
//
// ListOffsets, DeleteRecords, OffsetForLeaderEpoch and a coordinator's
// load each send the partition one typed message (ListOffsets,
// DeleteRecords, EndOffsetForEpoch, ReadChunk: messages.go), answered
// into its Out and Reply slot (actor_offsets.go); DescribeProducers
// (actor_producers.go) lists the producer state the same way.
//
// # Cluster mode: what replicas carry across restarts and from the leader
//
// Every move of the high watermark is recorded on the segment.Log
// (SetHighWatermark), which its directory writes to Kafka's
// replication-offset-checkpoint; a restarted partition starts from that
// high watermark (at most its log end): a leader's core leads from it, a
// follower serves consumers up to it until its leader says more. A
// follower's log start follows its leader's (ReplicaAppend's
// LeaderLogStart, capped at its own high watermark), so retention and
// DeleteRecords on the leader reach the replicas. Consumers (Fetch v11+)
// are served by followers up to their high watermark, and a leader with
// the rack-aware selector answers a consumer in another replica's rack
// with that replica as preferred read replica (KIP-392, core_select.go).
//
// A leader counts a follower's durable end (samsa's tagged field in its
// fetch, FollowerFetch.Durable) for the high watermark and for joining
// the ISR, and its fetch offset for being caught up (core_replica.go);
// a follower appends at once and reports durability apart
// (ReplicaAppend.Durable), so its fetcher can fetch while the fsync runs
// (actors/replica's durable.go).
//
// # Threading
//
// A Core belongs to one goroutine (its actor's); it has no locks. The
// actor's state belongs to its goroutine too, except the View, which the
// fetch path reads from any goroutine (atomics) and whose waiter list is
// under its own lock; only the actor moves the high watermark it
// publishes. Local runs the actor's fetch side on a caller's goroutine
// for the fetch package's tests.
//
// # Supervision
//
// A partition actor that panics is restarted (5 times a minute at most,
// then stopped: that partition stays offline until the broker restarts,
// the rest keeps serving). Restarting closes the log and Started re-opens
// it from disk: the log is the partition's durable state.
package partition
