// Package shards is a table of actors, one per partition of an internal
// topic (__consumer_offsets for the group coordinators,
// __transaction_state for the transaction coordinators), published for
// the request handlers to read without a lock.
//
// Alone, a broker starts every partition's actor at once (Started); in
// cluster mode an actor runs only on the partition's leader, so the
// table fills and empties one entry at a time as this broker gains and
// loses leaderships (SetRole), a nil entry meaning another broker leads
// that partition. Requests that arrive before the topic exists wait for
// it (WhenStarted) rather than send the client into its retry back-off.
//
// Threading: PIDs is lock-free; the rest take the table's mutex and are
// safe from any goroutine.
package shards
