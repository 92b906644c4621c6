// Package metrics is the broker's Prometheus metrics: one registry per
// broker (not client_golang's global default, so several brokers run in
// one process, as tests do), named after Kafka's JMX metrics so that
// dashboards translate (docs/metrics.md maps each one).
//
// # Cost on the hot paths
//
// Produce and fetch pay no lookup and no lock for metrics:
//
//   - requests (requests.go): Track wraps a request's Reply and its
//     response's Done to observe the phases of its time (queue from
//     netloop's decode, local, remote as the handler reports it in
//     wire.Request.Remote, send until written, total) in histograms
//     resolved per API key when the broker starts (an array index, then
//     client_golang's lock-free Observe);
//   - transactions (txn.go): one counter and one histogram observation
//     per transaction, when its markers are all written;
//   - per topic and partition (partitions.go): the partition actors count
//     messages and bytes into their View's Stats (actors/partition,
//     atomic adds), and a Collector walks the routing table and sums them
//     when /metrics is scraped;
//   - errors by code (errors.go): an array of atomic counters indexed by
//     API and code, read at scrape time;
//   - group commit (flush.go): segment's OnFlush hook observes one fsync
//     time and one batch size per flush, not per record.
//
// Everything else is read at scrape time from what the broker already
// publishes for its own use: log sizes, roles and replica counts from the
// same Stats (partitions.go), the controller's figures from the cluster
// metadata cache, consumer group lag from the coordinators' committed
// offsets against the partitions' high watermarks (groups.go), the
// network layer's counters (network.go, copied from netloop.Stats by
// internal/wiring, since actors may not import netloop, including the
// event loops' busy time) and the log cleaner's totals (cleaner.go); the
// open transactions are asked of the transaction coordinators with a
// bounded wait, as consumer group lag is (txn.go).
//
// # Threading
//
// Track, CountError and OnFlush are called from any goroutine (gnet
// loops, actors, flush workers). Collectors run on the scraping HTTP
// goroutine; they never block an actor: consumer group lag asks the
// group coordinators with a bounded wait (groups.go).
package metrics
