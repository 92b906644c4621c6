// Package quota is the broker's client quotas, with Kafka's semantics:
// per-entity byte rates for produce and fetch (producer_byte_rate,
// consumer_byte_rate) and a share of request handling time
// (request_percentage: the time each request's handler takes on the gnet
// loop, in percent of one thread, as Kafka's unit; actors' work is not
// counted; its throttle is bounded by one window, as Kafka bounds it; the
// answer's throttle_time_ms reports it and the connection is held for
// it). controller_mutation_rate is stored and described, not enforced.
// Connection creation quotas (connections.go) are the broker's and each
// listener's max.connection.creation.rate and the ip entities'
// connection_creation_rate, consulted by netloop on every accepted
// connection.
//
// What is counted: a produce request's whole frame (as Kafka counts the
// request size), once its partitions have answered; a fetch answer's
// record bytes. As in Kafka (KIP-219), a fetch over its consumer quota
// or its request_percentage is answered empty, with the throttle time,
// and its bytes are taken back (Unrecord); the fetch size is capped at
// the quota over Num-1 windows, so one answer never outruns the window.
// An acks=0 produce over its byte rate gets no answer, as any acks=0
// produce, and its connection is muted for the throttle time; acks=0
// produces are spared request_percentage, as in Kafka.
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
// znode to Replace, at start and on each notification. A description
// reads every quota znode (ZooKeeperReadAll), as Kafka's ZooKeeper mode
// does, so it shows a change made through another broker at once. Like
// Kafka's,
// the read-modify-write of a znode is not guarded against a concurrent
// write of the same znode through another broker.
//
// ip entities hold connection_creation_rate (KIP-612), stored and
// described like the others.
package quota
