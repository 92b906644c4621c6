// Package partition is one partition's pure core: the produce state the
// partition actor (the shell, in package actors for now) owns, as a plain
// value that takes a message and the time and returns effects.
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
//     partition, sizes, codecs, timestamps, keys on compacted topics).
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
// # Threading
//
// A Core belongs to one goroutine (its actor's); it has no locks.
package partition
