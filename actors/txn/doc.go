// Package txn is the transaction coordinator: one actor per
// __transaction_state partition this broker leads, each a thin shell
// around a pure Core.
//
// The core (core.go and its neighbours) follows Kafka's
// TransactionCoordinator: InitProducerId with a transactional id (epoch
// bumps, fencing, KIP-360 retries, producer-id rotation when the epoch is
// exhausted), AddPartitionsToTxn and AddOffsetsToTxn, EndTxn with its
// prepare record, markers and complete record, KIP-890's verification,
// timeouts (abort at a bumped epoch) and the expiry of idle
// transactional ids. Every state change is one record in the partition,
// in Kafka's format (TransactionLogKey v0 and TransactionLogValue v0,
// read up to v1, through kmsg), and takes effect only once durable; until
// then the id is pending and other requests for it get
// CONCURRENT_TRANSACTIONS, except an AddPartitionsToTxn, which waits (up
// to ParkMaxMs) for the previous transaction to complete: with durable
// markers that beats the client's retry backoff. The core takes the
// time as an argument and
// returns Effects (records to append, replies, markers to send, producer
// ids it needs); it never blocks, reads a clock or does I/O.
//
// The shell (actor.go):
//
//   - loads its partition below the high watermark in chunks
//     (shards.ReadChunk) before serving; meanwhile requests get
//     COORDINATOR_LOAD_IN_PROGRESS. Transactions left prepared get their
//     markers again.
//   - appends each record through the partition's produce path with
//     acks=all (fsynced under the flush policy, and on the ISR in a
//     cluster), in the core's order, and reports each outcome back.
//   - asks the metadata actor for producer ids (catalog.AllocateProducerID:
//     the same blocks idempotent producers get theirs from).
//   - hands markers to the MarkerSender (markers.go), which writes them on
//     this broker's partitions (partition.WriteMarker) and sends
//     WriteTxnMarkers to the leaders of the others, retrying every
//     partition until it has its marker; __consumer_offsets partitions
//     then complete the group coordinator's transactional offsets.
//   - ticks every transaction.abort.timed.out.transaction.cleanup.interval.ms
//     for timeouts and expiry.
//
// Verify (verify.go) is the partition leaders' side of KIP-890 part 1
// (Kafka's AddPartitionsToTxnManager): before a transactional batch opens
// a transaction on a partition, its leader asks the coordinator of the
// transactional id whether the partition is in the open transaction —
// the actor here (Core.Verify), or the coordinator's broker with
// AddPartitionsToTxn v4 VerifyOnly, one request in flight per broker and
// the verifications asked meanwhile batched into the next (a broker
// without v4 leaves the batch unverified, as Kafka does). KIP-890 part 2 (EndTxn v5's epoch bump per
// transaction, Produce v12 without AddPartitionsToTxn) is Kafka 4's, gated
// on the transaction.version feature that ZooKeeper-mode Kafka 3.9 never
// finalizes; samsa serves what 3.9 serves (AddPartitionsToTxn 0-5, EndTxn
// 0-4).
//
// Coordinators (registry.go) publishes the actors for the api package:
// alone, all partitions at once, once __transaction_state exists (made on
// the first transactional request); in cluster mode each on its
// partition's leader (shards.Table.SetRole), its coordinator epoch the
// partition's leader epoch.
//
// The broker serves transactions unless samsa.transactions.enable is
// false; off, a transactional producer is refused at once
// (actors/api/find_coordinator.go).
package txn
