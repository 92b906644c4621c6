// Package cleaner holds the end-to-end tests of the log cleaner: a real
// samsa process, a compacted topic written and read back with kcat
// (librdkafka) and Apache Kafka 3.9.1's Java console consumer, the
// cleaner's work checked on disk (cleaner-offset-checkpoint, segment
// sizes) and through the clients: each key once, its latest value at its
// original offset. The tests may sleep (e2e/).
package cleaner
