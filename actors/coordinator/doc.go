// Package coordinator is the group coordinator actors: the shells around
// the pure consumer-group core (actors/group: the state machine, its
// Effects, the __consumer_offsets record formats), one actor per
// __consumer_offsets partition ("group-coordinator-<p>"), each owning a
// group.Coordinator for the groups that hash to its partition
// (group.PartitionFor, Kafka's rule).
//
// Why per partition rather than per group: the partition is Kafka's unit
// of coordinator ownership, loading and failover (in cluster mode a
// broker coordinates the groups of the partitions it leads, and loses
// them together); the load is per partition anyway; all appends to one
// partition leave from one mailbox, so records reach the log in the order
// the core produced them; and 50 actors cost nothing where per-group
// actors would need a registry to find and retire thousands of them.
//
// Coordinators (registry.go) starts them when __consumer_offsets exists,
// or creates the topic through the metadata actor on the first
// FindCoordinator or group request, as Kafka does, and publishes them
// for the api package's router.
//
// Inside an actor (every field on the actor's goroutine):
//
//   - A Call carries a request (or one coordinator's Part of a request
//     split over several) and its ticket; replies go back to the
//     *wire.Request or the Part the core names. A ConsumerGroupHeartbeat
//     (KIP-848) comes with the cluster's topics in Client.Topics, which
//     the api router takes from the controller's view (cluster mode) or
//     the broker's routes, so the core can resolve subscriptions and
//     assign partitions without asking anyone.
//   - Appends are RecordBatch v2 batches (BuildBatch) sent to the
//     partition actor as an ordinary partition.ProduceRequest with
//     acks=-1, so they go through validation, the leader epoch and the
//     flush policy; the core's OnAppended answers only once the append
//     is durable.
//   - Timers are time.AfterFunc that only send a message (with a
//     generation, so a replaced timer's late firing is dropped); the core
//     is never called from a timer goroutine. Offset expiry ticks the
//     same way.
//   - Loading: the actor reads its partition below the high watermark in
//     partition.ChunkBytes steps (partition.ReadChunk) and replays every
//     record (ReplayBatches), then ends the load; until then its groups
//     answer COORDINATOR_LOAD_IN_PROGRESS. A record that does not decode
//     is logged and skipped.
//   - A panic while serving a request answers it COORDINATOR_NOT_AVAILABLE
//     and restarts the actor, which reloads from the log.
//
// __consumer_offsets (and __transaction_state) are compacted by the log
// cleaner (actors/cleaner): a load replays only each key's latest record
// (and tombstones within delete.retention.ms), which gives the same
// groups and offsets as the uncompacted log. KIP-848 consumer groups
// live in the same partitions in Kafka's record types 3-8, and move with
// their partition like classic ones: the new leader's load rebuilds them
// and their members carry on at their epochs.
package coordinator
