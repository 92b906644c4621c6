// Package quota is the broker's client quotas, with Kafka's semantics:
// per-entity byte rates for produce and fetch (producer_byte_rate,
// consumer_byte_rate) and a share of request handling time
// (request_percentage: the time each request's handler takes on the gnet
// loop, in percent of one thread, as Kafka's unit; actors' work is not
// counted; its throttle is bounded by one window, as Kafka bounds it,
// and only holds the connection, throttle_time_ms is not set for it).
// controller_mutation_rate is stored and described, not enforced.
//
// What is counted: a produce request's whole frame (as Kafka counts the
// request size), once its partitions have answered; a fetch response's
// record bytes. Unlike Kafka, a throttled fetch still carries its
// records (Kafka answers empty and takes the bytes back); the fetch
// size is capped at the quota over Num-1 windows as in Kafka, so one
// response never outruns the window. acks=0 produces are not throttled.
//
// Entities are Kafka's: a user, a client id, or both, each of which may be
// the <default> entity. The quota that applies to a request is found in
// Kafka's precedence order, most specific first (resolve.go); the entity
// it came from decides who shares a rate (all of alice's clients share
// the rate of a quota set on user alice; a <default> quota gives every
// user, or client id, its own).
//
// Rates are measured as Kafka's sampled Rate: quota.window.num (11)
// samples of quota.window.size.seconds (1 s); a request that takes the
// rate over the quota is still served, and its throttle time is the time
// after which the bytes recorded would be back within the quota (Kafka's
// formula, rate.go). The caller sends it as throttle_time_ms and has the
// connection muted for that long after the response is written (KIP-219).
//
// Threading: a Manager is shared by every gnet loop and fetch goroutine;
// its configs are an immutable snapshot behind an atomic pointer (nil
// when no quota is set: then Enabled is the request path's one check),
// its rates sit behind one mutex. Time is an argument, never read inside.
//
// Persistence: a single node keeps the configs in its first data
// directory (file.go: temporary file, fsync, rename); the file's JSON is
// {"version":1,"entities":[{"entity":{"user":"alice"},"config":{...}}]},
// a <default> name is JSON null. A cluster keeps them in ZooKeeper in
// Kafka 3.9's layout (zookeeper.go): an alteration, through any broker,
// reads each entity's znode, writes it back with the new quotas (other
// keys, a user's SCRAM credentials, kept) and a change notification;
// every broker's config watch (actors/catalog) hands each quota entity's
// znode to Replace, at start and on each notification. Like Kafka's,
// the read-modify-write of a znode is not guarded against a concurrent
// write of the same znode through another broker.
//
// ip entities hold connection_creation_rate (KIP-612), stored and
// described like the others.
package quota
