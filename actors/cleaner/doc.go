// Package cleaner is the broker's log cleaner: it compacts the logs of
// cleanup.policy=compact topics (__consumer_offsets and
// __transaction_state among them) as Kafka's LogCleaner does.
//
// # Threading
//
// A Cleaner runs log.cleaner.threads workers, each a goroutine that is
// restarted (after log.cleaner.backoff.ms) if it panics, so one bad log
// cannot stop compaction for good: the pool is supervised like the
// broker's actors, without an actor of its own, because a worker spends
// its time in file I/O that must not sit in any actor's mailbox. A
// worker's round:
//
//  1. asks every partition actor how dirty its log is
//     (partition.CleanQuery: clean and dirty bytes of the closed segments
//     below the high watermark, the last stable offset and
//     min.compaction.lag.ms, split at the cleaner checkpoint);
//  2. picks the dirtiest log not being cleaned by another worker: first
//     one whose oldest dirty record is older than max.compaction.lag.ms,
//     else the largest dirty ratio (dirty / (clean + dirty)) at or above
//     min.cleanable.dirty.ratio;
//  3. has the partition actor snapshot it (partition.CleanPrepare), runs
//     the cleaning off the actor (segment.CleanJob.Run: the offset map in
//     log.cleaner.dedupe.buffer.size / threads bytes, the rewrite into
//     .cleaned files, throttled to log.cleaner.io.max.bytes.per.second
//     over all workers), and has the actor swap the result in
//     (partition.CleanCommit), which moves the cleaner-offset-checkpoint;
//  4. sleeps log.cleaner.backoff.ms when no log needed cleaning.
//
// Each cleaning is logged (one line: bytes read and written, records
// kept, dirty ratio, duration) and counted in Stats. What a cleaning keeps
// and how the swap survives a crash: package segment, clean.go and
// clean_swap.go.
package cleaner
