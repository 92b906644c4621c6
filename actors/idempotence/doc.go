// Package idempotence is a partition's producer state: for every idempotent
// (or transactional) producer id that wrote to the partition, its current
// epoch and the sequence ranges and offsets of its last five batches. The
// partition leader checks each incoming batch against it before appending:
//
//   - no producer id (-1): not idempotent, always appended;
//   - an epoch older than the one on record: INVALID_PRODUCER_EPOCH;
//   - a newer epoch: the batch must start at sequence 0;
//   - the same epoch: a batch whose sequence range equals one of the last
//     five is a duplicate (a retry whose answer was lost): it is not
//     appended and is answered with the offsets it got the first time;
//     otherwise its first sequence must follow the last one (wrapping at
//     the int32 maximum), else OUT_OF_ORDER_SEQUENCE_NUMBER;
//   - a producer id with no state (new, expired or truncated away) may start
//     at any sequence (KIP-360).
//
// Five is the client's max.in.flight.requests.per.connection bound for
// idempotence: no retry can reach further back than that.
//
// Transactions (txn.go): a producer's first transactional batch opens its
// transaction at that batch's offset; until a marker (a control batch
// the transaction coordinator has the leader append) ends it, the
// producer may write only transactional batches (else INVALID_TXN_STATE).
// The oldest open transaction's first offset bounds the last stable
// offset (FirstUnstableOffset). A marker from an older producer epoch is
// INVALID_PRODUCER_EPOCH, from an older coordinator epoch
// TRANSACTION_COORDINATOR_FENCED; a marker at a newer epoch (the
// coordinator fencing a producer) moves the producer to it. RecordMarker
// reports each transaction it ends, for the aborted-transaction index.
//
// State is rebuilt after a restart from a snapshot (Encode/Decode, in
// Kafka's producer-snapshot format, so that Kafka and samsa open each
// other's: snapshot.go) plus a replay of the batches appended after it
// (Observe).
//
// Threading: a State is owned by its partition actor; not safe for
// concurrent use. It does no I/O and reads no clock: times are arguments.
package idempotence
