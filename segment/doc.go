// Package segment is one partition's log on disk, in Kafka's own format,
// so an operator who knows Kafka recognises the files.
//
// # Layout
//
// A log directory (one log.dirs entry, type Dir) holds one directory per
// partition plus four files of its own:
//
//	<log.dir>/
//	  recovery-point-offset-checkpoint   offsets below which each log is fsynced
//	  log-start-offset-checkpoint        each log's first readable offset
//	  replication-offset-checkpoint      each log's high watermark, as its partition last set it
//	  .kafka_cleanshutdown               present only after a clean Close
//	  cleaner-offset-checkpoint          each compacted log's first dirty offset
//	  <topic>-<partition>/
//	    00000000000000000000.log         record batches, exactly as on the wire
//	    00000000000000000000.index       sparse offset index
//	    00000000000000000000.timeindex   sparse time index
//	    00000000000000000000.txnindex    aborted transactions (only if any)
//	    00000000000000004096.log ...     the next segment, named by its base offset
//	    leader-epoch-checkpoint
//
// Segment files are named by their base offset, 20 zero-padded digits.
// Every metadata or checkpoint file is written atomically (temporary file,
// fsync, rename, fsync of the directory: vfs.WriteFileAtomic).
//
// # Byte layouts (big-endian; these are part of the on-disk format)
//
// .log: concatenated RecordBatch v2 (see package wire), baseOffset and
// partitionLeaderEpoch set by the broker, nothing else changed. The
// file's size is always exactly its batches. The active segment's file
// has disk space reserved past its end (Options.ReserveBytes, 1 MiB
// steps, fallocate with KEEP_SIZE where the filesystem offers it), which
// spares each append the filesystem's block allocation; a roll or a close
// gives the unused part back, and after a crash the next roll or clean
// close does.
//
// .index: 8-byte entries, one per index.interval.bytes of log (default
// 4096), written after the batch that crosses the interval:
//
//	0  relativeOffset int32   last offset of the batch - segment base offset
//	4  position       int32   byte position of the batch in the .log file
//
// .timeindex: 12-byte entries, added with offset-index entries when the
// segment's largest timestamp has grown, plus one when the segment is
// rolled:
//
//	0  timestamp      int64   largest batch max timestamp so far
//	8  relativeOffset int32   last offset of the batch that carried it - base
//
// .txnindex: Kafka's aborted-transaction index, 34-byte entries, one per
// transaction aborted by a marker in the segment (see txnindex.go for
// the layout). An entry is written and fsynced before its marker is
// appended, so recovery only ever finds entries to drop (those whose
// marker did not survive), never a durable marker without its entry.
//
// Entries increase strictly in both fields. Index files are not
// preallocated: their size is exactly the entries. The active segment's
// indexes live in memory and are written (and fsynced) when the segment is
// rolled and when the log is closed; a closed segment's indexes are read
// into memory on first use.
//
// While a compacted log is cleaned, a cleaned segment group is written as
// <base>.log.cleaned (and .index/.timeindex/.txnindex.cleaned), renamed to
// .swap when whole and to its final names once the segments it replaces
// are gone (clean.go: what a cleaning keeps; clean_swap.go: the swap and
// how recovery finishes it). A compacted batch keeps its base offset,
// last offset delta and producer fields and may hold fewer records than
// its offset range, or none (KIP-534's delete horizon may be in its base
// timestamp, attribute bit 0x40): recovery and replicated appends accept
// such batches (wire.ValidateStoredBatch); a leader's appends do not.
//
// Offset checkpoints (recovery-point, log-start-offset, cleaner) are text:
//
//	0                  version
//	2                  number of entries
//	orders 0 1234      topic partition offset
//	orders 1 99
//
// leader-epoch-checkpoint is the same with "epoch startOffset" lines.
//
// # Threading
//
// A Log belongs to one goroutine, its partition actor: appends, reads,
// retention, truncation, config changes and Close are not safe for
// concurrent use. WhenDurable and the accessors LogStartOffset,
// LogEndOffset, RecoveryPoint, Size and Failure are safe from any
// goroutine. A Dir is safe for concurrent use. ReadResult.Release may be
// called from any goroutine.
//
// Durability: each log has a flusher; a small pool of goroutines per Dir
// runs the fsyncs (group commit: one fsync covers every append before it).
// Appends never wait for each other; the caller asks WhenDurable(offset,
// fn) and fn runs on a flush goroutine once the offset is fsynced. Before
// a background fsync the flusher waits, at most Options.GroupGatherMax
// (1ms, on the injected clock), for the producers the previous fsync
// acknowledged to append again, so producers that wait for their
// acknowledgement share fsyncs instead of alternating between two groups;
// a lone producer never waits.
// Policies (Config.FlushPolicy): group (default: acknowledge after fsync),
// always (fsync inside Append), interval (fsync within flush.ms, acknowledge
// at once), never (fsync only on roll and close, acknowledge at once). A
// failed fsync fails the log for good: every waiter gets the error,
// appends return ErrLogFailed wrapping the cause; the log is never
// fsynced again and carried on. A failed append write (a full disk) fails
// only that append: the file is truncated back to its last whole batch,
// whatever count the write reported, and only if that truncation fails
// does the log fail.
//
// File handles: every segment .log file, the active one included, is
// opened through a bounded LRU cache shared by all logs of a Dir
// (Options.MaxOpenFiles, default 1024), so a broker with 10,000 partitions
// holds about that many descriptors, not one or more per segment. Index
// files are opened only to be read or written whole. A handle is
// reference-counted: an evicted handle stays open while a ReadResult or a
// pending fsync still uses it (so an fsync always goes through the
// descriptor that wrote the data), and closes on the last release.
// Dir.OpenFiles reports the count. An append does not look its file up in
// the cache: the active segment remembers its handle (without holding a
// reference) and takes a reference with a compare-and-swap while the
// cache still holds it, falling back to the cache otherwise; such uses
// set a second-chance bit that eviction honours instead of moving the
// entry in the LRU list.
//
// Reads return file regions (for sendfile) that always hold whole batches:
// the batch holding the requested offset first, then as many whole batches
// as fit in the byte budget and lie below the caller's bound (the high
// watermark). With ReadRequest.MinOneBatch the first batch is returned
// even when it is larger than the budget. A read finds its first batch
// with the offset index and then reads batch headers forward from the
// entry; near the end of the active segment it reads none: the segment
// remembers the spans of the last 32 batches appended (tail.go), which
// answer while they end exactly at the segment's size (a truncation
// makes them stale; the next append starts them afresh).
//
// # Recovery rules (Dir.Open)
//
//  1. A cleaned segment's swap past its commit point (a <base>.log.swap)
//     is finished; then temporary files (.cleaned, .swap, .deleted,
//     .tmp) and index files without a .log are deleted.
//     The first batch of each segment below the recovery point (of every
//     segment after a clean shutdown) must have magic 2: Kafka's message
//     sets v0 and v1, which a Kafka broker's directory may still hold, and
//     unknown formats are refused with ErrUnsupportedFormat (the
//     partition stays offline, its files untouched), never cut as damage.
//  2. After a clean shutdown (marker present), nothing is scanned but the
//     active segment's tail after its last index entry; any invalid byte
//     there is a CorruptionError.
//  3. Otherwise every segment from the one holding the recovery point on,
//     and always the active one, is read batch by batch (length, CRC-32C,
//     increasing offsets) and its indexes rebuilt. The first invalid byte
//     at or after the recovery point ends the log: the tail is truncated,
//     later segments are deleted, and the RecoveryReport says how many
//     bytes and which offsets were cut (up to the last offset of the
//     deleted segments and of any whole batches found past the damage).
//     A cut that is only an incomplete write at the very end of the log
//     (no whole batch after it) is a torn tail: never fsynced, so never
//     acknowledged under the group and always policies, and reported as
//     such (TornTail, logged at info); anything else is loss (Lost,
//     logged as a warning). An invalid byte before the recovery point,
//     or a log ending below it, is a CorruptionError, never a silent cut.
//  4. Closed segments' index files that are missing or malformed are
//     rebuilt from the log; those that look sane are checked against the
//     log as they are used: the batch at an entry's position must be the
//     one the entry names, and each batch read on from there must follow
//     the one before. On a mismatch the index is rebuilt from the log
//     (logged; corruption of the log itself shows up then) and the lookup
//     made again. After a clean shutdown the active segment's last entry
//     is checked before its tail is scanned from it.
//  5. What recovery kept is fsynced before it counts as durable.
//  6. A damaged recovery-point or log-start-offset checkpoint is ignored
//     with a warning (every log is then scanned from its first segment
//     after a crash, and starts at its first segment); a missing or
//     damaged leader-epoch-checkpoint of a non-empty log is rebuilt from
//     the batch headers (the epoch in force at the log start starts
//     there). An error reading any of them is returned.
//
// Invariants that make rule 3 safe: the recovery point only counts fsynced
// data; a rolled segment's indexes are fsynced before the recovery point
// passes it; a truncation lowers the recovery-point checkpoint before it
// cuts (under the checkpoint lock, so no checkpoint that read the old
// point lands after the cut) and is fsynced before it returns. The
// checkpoint files are written by Dir.Checkpoint (the broker calls it
// periodically) and after every roll once the rolled segment is fsynced,
// so a crash rescans little more than the active segment.
//
// Time: the package never reads the clock in its logic; appends and
// retention take now (milliseconds) as an argument and the FlushInterval
// timer comes from Options.Clock.
//
// Benchmarks of append, read and recovery, what they measure and the
// latest figures: docs/performance.md, "Segment benchmarks".
//
// Format version: the layouts above are Kafka's (magic 2 batches, version
// 0 checkpoints). A future change must bump the checkpoint version line
// and teach the loader the old one.
package segment
