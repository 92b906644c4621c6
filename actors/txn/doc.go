// Package txn is the transaction coordinator: its pure core now, its
// actors (one per __transaction_state partition) to come.
//
// The core (Core, one per __transaction_state partition this broker
// leads) follows Kafka's TransactionCoordinator: InitProducerId with a
// transactional id (epoch bumps, fencing, KIP-360 retries, producer-id
// rotation when the epoch is exhausted), AddPartitionsToTxn and
// AddOffsetsToTxn, EndTxn with its prepare record, markers and complete
// record, KIP-890's verification, timeouts (abort at a bumped epoch) and
// the expiry of idle transactional ids. Every state change is one record
// in the partition, in Kafka's format (TransactionLogKey v0 and
// TransactionLogValue v0, read up to v1, through kmsg), and takes effect
// only once durable; until then the id is pending and other requests for
// it get CONCURRENT_TRANSACTIONS.
//
// The core takes the time as an argument and returns Effects (records to
// append, replies, markers to send, producer ids it needs); it never
// blocks, reads a clock or does I/O, so the shell and a deterministic
// simulation can drive it alike.
//
// Until the shell is wired in, FindCoordinator for a transactional id
// answers an error (see actors/api/find_coordinator.go).
package txn
