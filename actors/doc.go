// Package actors holds all broker state and behaviour: the router that
// hands each request to the actor that owns it, the metadata actor, and a
// supervised partition actor per partition. It is built on protoactor-go
// (package actor).
//
// # Wiring (what cmd/samsa does)
//
//	cfg, _ := config.Load(inputs...)               // actors/config
//	b, _ := actors.NewBroker(cfg, logger)          // opens metadata and every log
//	srv, _ := netloop.New(netloopCfg, b)           // b is the netloop.Handler
//	srv.Start()
//	b.SetAdvertised(host, boundPort)               // before telling anyone we are ready
//	... wait for SIGTERM/SIGINT ...
//	srv.Shutdown(ctx)                              // stop accepting, finish requests in flight
//	b.Close(ctx)                                   // close every log cleanly
//
// internal/wiring (Start, Node.Stop) is that sequence in code; cmd/samsa
// and testkit.StartInProcess, the in-process broker of tests, both run it.
//
// # Actors and what they own
//
//   - The metadata actor ("metadata", one per broker) owns
//     metadata.State: topics, partitions, topic ids, dynamic configs and
//     the cluster identity, persisted atomically in samsa-metadata.json in
//     a data directory. It serves every admin API and spawns, reconfigures
//     and deletes partition actors, which are its children.
//   - A partition actor ("metadata/p-<topic id>-<partition>") owns one
//     segment.Log and everything derived from it. On this issue it opens
//     (and recovers) the log in Started, applies config changes live,
//     reports its size, closes the log cleanly when stopped, and removes
//     its files when its topic is deleted.
//
// Each actor is a thin shell around a plain core: metadata.State's
// handlers take a kmsg request (and the time) and return the response
// plus Effects (partitions to start, reconfigure, delete); the shell
// carries the effects out. The cores are tested without an actor system.
//
// # Threading
//
// Broker.Handle runs on a gnet event loop and never blocks: it looks the
// API key up in routesByKey (router.go) and either answers directly
// (ApiVersions, from the wire table) or Sends the request to the owning
// actor. Mailboxes are unbounded (a bounded one would block the loop);
// backpressure is netloop's, per connection. No actor ever waits on
// another (no Future.Wait or Result inside Receive): when an answer needs
// several actors (new partitions' logs open for CreateTopics,
// CreatePartitions and auto-creation; sizes for DescribeLogDirs; file
// removal for DeleteTopics) the
// asking actor hands each one a slot of a gather (gather.go), and the
// actor that fills the last slot sends the response through req.Reply,
// which netloop accepts from any goroutine. A gather has a deadline so a
// dead actor cannot leave a client waiting.
//
// The routing table (Routes: topic to partition actor PIDs) is an
// immutable value the metadata actor republishes after every change
// through an atomic pointer, so the router reads it without locks.
//
// # Messages
//
//   - adminRequest{req, handle}: router to metadata actor; handle is the
//     handler from the dispatch table, run inside the actor.
//   - setEndpoint: the advertised host/port (SetAdvertised).
//   - deletionDone: a deleted topic's files are gone; its name is free.
//   - reconfigure{segment.Config, config.Topic}: metadata to partition.
//   - reportLog{gather, slot}: metadata to partition; answered into the
//     gather.
//   - deletePartition{gather, slot}: metadata to partition; the partition
//     removes its files, fills the slot and stops.
//
// Requests are owned by whoever holds them; a *wire.Request's Body may
// alias its Frame. netloop reuses a frame's buffer only after the handler
// calls ReleaseFrame, which handleProduce does once every partition has
// answered (each has appended, so copied, or refused its records) and
// never after a gather timed out; other requests are left to the GC.
//
// # Supervision and durability
//
// Supervision restarts an actor from durable state, never from memory:
//
//   - A partition actor that panics is restarted (5 times a minute at
//     most, then stopped: that partition stays offline until the broker
//     restarts, the rest keeps serving). Restarting closes the log and
//     Started re-opens it from disk.
//   - The metadata actor is a root actor. A panic while serving a request
//     is logged with its stack, the request is dropped (the client times
//     out), its children (all partitions) are stopped, logs closed, and
//     the restarted actor reloads the snapshot from disk and respawns them.
//   - A failed snapshot save leaves the live state untouched and answers
//     KAFKA_STORAGE_ERROR.
//   - DeleteTopics removes the topic from the snapshot and records it in
//     Snapshot.Deleting in the same save; the name stays reserved until its
//     files are gone. A crash in between resumes the removal on the next
//     start, so a re-created topic never finds old files.
//   - Close poisons the metadata actor (queued messages first), which
//     stops every partition actor (each closes its log), then closes the
//     data directories, which write segment's clean-shutdown marker.
//
// # Adding a handler
//
//  1. Add the API's row to wire.APIs (wire/apis.go) with the versions
//     served; never advertise an API before its handler exists.
//  2. Write handle_<api>.go with one function: either
//     func(b *Broker, req *wire.Request) (answers on the loop; must not
//     block) or a metadataActor method, or a function that Sends to the
//     owning actor (for produce and fetch: the partition actor from
//     b.Routes().Partition(topic, partition), with a gather for
//     multi-partition requests).
//  3. Add it to routesByKey in router.go.
//  4. Put the logic in a pure core (a sub-package with kmsg in, response
//     and effects out) and unit-test it there.
//
// # Produce side (handle_produce.go, partition_produce.go)
//
// handleProduce (on the gnet loop) answers unknown partitions and bad
// acks itself and sends each partition a produceRequest holding its
// batch (a slice of the request frame) and a pointer to its answer in
// the response; a gather slot per partition, the last one encodes and
// replies (acks=0: req.Reply(nil) once every part is appended, because
// the batches alias the frame; if a part failed, a response with no bytes
// and CloseAfter instead, so netloop closes the connection as Kafka does).
// The partition core validates the batch (actors/partition/validate.go: a
// pure function of the batch, the topic's rules and now) and checks the
// producer state (actors/idempotence); the actor appends it
// through segment.Log.Append at the partition's leader epoch (assigned
// to the log when it opens), and answers once the batch is below the
// high watermark.
//
// High watermark and acknowledgements: the partition's pure core
// (actors/partition: Core) owns the high watermark, the produce answers
// waiting for durability and the producer state; the actor reads the
// log's state for each call and carries out the core's effects
// (partition_produce.go). The high watermark is the end of what is
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
// appended (partition_producers.go). Producer ids come from blocks of
// 1000 persisted in samsa-producer-ids in every data directory before
// use (producer_ids.go), so ids stay unique across restarts.
//
// ListOffsets, DeleteRecords and OffsetForLeaderEpoch send each partition
// a partitionTask (a function run inside the actor) through
// partitionTasks (partition_fanout.go).
//
// # Fetch side (handle_fetch.go, fetch_wait.go, partition_fetch.go, fetch_sessions.go)
//
// handleFetch (on the gnet loop) refuses replica fetches (replica id >= 0:
// INVALID_REQUEST until cluster mode), resolves the fetch session, looks
// each partition up in b.Routes() (by topic id from v13; unknown ones are
// answered in the plan: UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID, or
// NOT_LEADER_OR_FOLLOWER for an offline log) and starts a fetchOp. The
// op sends every partition actor its slot (a partitionFetch, which is
// both the message and where the answer goes); the actor checks the
// client's leader epoch (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH) and
// the offset (OFFSET_OUT_OF_RANGE outside [log start, log end]) and reads
// segment regions from the offset up to the high watermark (the last
// stable offset is the high watermark: no transactions yet), at most min(partition_max_bytes,
// max_bytes), always the first batch (segment.ReadRequest.MinOneBatch).
// The read is index lookups and header preads (none near the end of the
// log, where segment remembers the newest batches); record bytes stay in
// the file. A slot whose fetch offset is the partition's high watermark
// is answered without a message, from the view the partition actor
// publishes (partition_view.go: high watermark, leader epoch, log start):
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
// short left a fetchWaiter (the offset it read up to and the log size
// then); the op releases its reads and parks. A slot answered from the
// view parks its waiter in the view as it is answered; the view keeps
// every waiter of the partition, under a lock that also orders the high
// watermark's changes. onHighWatermark, called by the produce side on
// every advance, takes out each waiter whose offset the high watermark
// passed and, after letting go of that lock, reports to it an estimate
// of the bytes that arrived (log size growth); once the estimates reach
// min_bytes the op reads again,
// only the partitions that reported progress when the parked round found
// nothing at all (fetch_wait.go).
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
// stuck) is reported so after max_wait_ms plus GatherTimeout.
//
// Fetch sessions (KIP-227, fetch_sessions.go): real incremental sessions
// in a cache of max.incremental.fetch.session.cache.slots (default 1000;
// 0 turns them off and every fetch is full, which every client accepts).
// The rules (epochs, FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH,
// forgotten topics, eviction, which partitions an incremental answer
// carries) are in that file's comment.
//
// # Group coordinator (group_actor.go, group_route.go, group_offsets_topic.go, handle_find_coordinator.go)
//
// Consumer groups are the pure core in actors/group (read its doc.go: the
// state machine, Effects, the __consumer_offsets record formats); this
// package is its shell.
//
// One actor per __consumer_offsets partition ("group-coordinator-<p>", a
// root actor), each owning a group.Coordinator for the groups that hash
// to its partition (group.PartitionFor, Kafka's rule). Why per partition
// rather than per group: the partition is Kafka's unit of coordinator
// ownership, loading and failover (in cluster mode a broker coordinates
// the groups of the partitions it leads, and loses them together); the
// load (COORDINATOR_LOAD_IN_PROGRESS until the partition is read) is per
// partition anyway; all appends to one partition leave from one mailbox,
// so records reach the log in the order the core produced them; and 50
// actors cost nothing where per-group actors would need a per-partition
// gate for loading and a registry to find and retire thousands of actors.
// Groups of different partitions still proceed in parallel.
//
// __consumer_offsets is created on the first FindCoordinator or group
// request (as Kafka does), offsets.topic.num.partitions partitions,
// cleanup.policy=compact, segment.bytes=offsets.topic.segment.bytes, and
// flagged internal in Metadata; the first FindCoordinator waits for it
// rather than answering an error. On a start where it exists the
// coordinators start with the broker. Log compaction itself (the cleaner)
// is not implemented yet: the topic only grows (a few hundred bytes per
// commit) until the log cleaner issue lands.
//
// Routing (group_route.go registers the group keys in routesByKey from an
// init): handleGroupRequest sends a request to the coordinator of its
// group with a groupCall; batches over groups of several partitions
// (DescribeGroups, DeleteGroups, OffsetFetch v8+) are split per
// coordinator and ListGroups goes to every coordinator, each part answered
// under a groupPart ticket into a gather that merges the parts in request
// order. OffsetCommit partitions of unknown topics are answered
// UNKNOWN_TOPIC_OR_PARTITION by the router; the rest go to the core.
//
// Inside the actor (every field on the actor's goroutine):
//
//   - Replies go to the *wire.Request (or groupPart) the core hands back.
//   - Appends are RecordBatch v2 batches (buildGroupBatch) sent to the
//     partition actor as an ordinary produceRequest with acks=-1, so they
//     go through validation, the leader epoch and the flush policy; the
//     gather of that produce sends groupAppended back, and only then does
//     the core's OnAppended answer (nothing is acknowledged before it is
//     durable).
//   - Timers are time.AfterFunc that only Send groupTimerFired (with a
//     generation, so a replaced timer's late firing is dropped); the core
//     is never called from a timer goroutine. offsets.retention.check.
//     interval.ms ticks ExpireOffsets the same way.
//   - Loading: Started begins a load; partitionTasks read the partition
//     below its high watermark in 4 MiB chunks (readLoadChunk) and the
//     actor replays every record (replayBatches), then EndLoad (the first
//     start on a just-created topic has nothing to read and skips it). A record
//     that does not decode is logged and skipped; a log that cannot be read
//     leaves the partition's groups answering LOAD_IN_PROGRESS.
//   - A panic while serving a request answers it COORDINATOR_NOT_AVAILABLE
//     and restarts the actor, which reloads from the log.
//
// Broker.Close stops the coordinators before the partitions close.
package actors
