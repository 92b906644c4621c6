// Package compare runs the same workloads against samsa and Apache Kafka
// on one machine and writes a Markdown report with charts. It is what
// `make bench-compare` drives (through bench/compare/cmd/bench-compare).
//
// How a comparison runs:
//   - Kafka 4.x comes from Maven Central: the class path of
//     interop/java/pom.xml (kafka_2.13, kafka-tools, kafka-clients) is
//     resolved with `mvn dependency:build-classpath`; nothing is
//     downloaded by hand. A single KRaft node (broker+controller) is
//     formatted with kafka.tools.StorageTool in a temporary directory and
//     started with kafka.Kafka on free loopback ports.
//   - samsa is the bin/samsa binary, started with `serve` on a free port
//     and a temporary log directory.
//   - Each round starts every broker configuration afresh, in turn (never
//     two at once), and runs every workload against it with the same
//     client (package bench, franz-go) and with Kafka's own
//     ProducerPerformance / ConsumerPerformance (kafka-tools), so the
//     comparison does not rest on one client.
//   - Broker cost comes from /proc (testkit/procstat): CPU seconds per
//     workload, resident memory at idle and at peak.
//
// The transactional workloads (txn.go, 10-13) run TxnProducers franz-go
// transactional producers side by side, each committing transactions of
// 1, 10 or 100 records one after another (transactions/s and the
// begin-to-commit latency), then fill a topic with transactions of 100
// records, every 10th aborted, and read it from the start with
// read_uncommitted and then read_committed (records/s, broker CPU, and
// the time ratio: what read_committed costs). samsa serves them with
// samsa.transactions.enable=true.
//
// Fairness: samsa acknowledges a write after fsync (samsa.flush.policy
// group), Kafka after the page cache write. Each broker runs once with its
// defaults and once with the other's durability (samsa flush policy never;
// Kafka log.flush.interval.messages=1), and the report pairs them.
//
// The group rebalance workloads (rebalance.go, G1 and G2; only them:
// -workloads G1,G2) time a consumer group of 10, 50 and 100 franz-go
// members on a 200-partition topic: formation (every partition owned by
// one member and fetched from, the coordinator saying Stable), then the
// median time to be stable again after one member joins and after one
// leaves, with the classic protocol (cooperative-sticky) and with
// KIP-848's consumer protocol (kgo.ServerSideBalancer). Both brokers keep
// their default heartbeat intervals, which bound these figures.
//
// The share-group workload (share.go, S1; alone: -workloads S1) fills a
// 6-partition topic with 100-byte records (franz-go), then 3 of Java's
// KafkaShareConsumers (kafka-clients 4.1.1, interop/java's ShareBench,
// the harness built with Maven on first use) in one new share group read
// and acknowledge every record: records/s from their start to their last
// commit, broker CPU per million records. franz-go has no share
// consumer, so the same Java client runs against both brokers. Kafka 4.1
// serves share groups only with the share.version feature at 1, which
// KafkaConfig sets when it formats the node's storage (with the share
// state topic at replication factor 1); samsa serves them always.
//
// TLS (tls.go, not run by default): -configs samsa-tls, samsa-tls-noflush
// and kafka-tls give each broker an SSL listener instead of PLAINTEXT, the
// same PKCS#12 keystore (a CA and an ECDSA P-256 certificate made for the
// run) on both, franz-go clients over TLS 1.3. Workloads whose clients
// are PLAINTEXT only here (the transactional ones, Kafka's tools) are
// skipped for them (Workload.PlaintextOnly).
//
// The replicated part (cluster*.go; run alone with -workloads replicated
// or BENCH_REPLICATED=1) does the same for clusters: three `samsa serve`
// brokers (once with the default flush policy, once with
// samsa.log.flush.policy=never, Kafka's durability) and three Apache
// Kafka 3.9.1 brokers in ZooKeeper mode, each system on a new ZooKeeper
// started by testkit.LaunchCluster, one system at a time. Every topic has
// 6 partitions, replication factor 3 and min.insync.replicas 2; the
// producer is idempotent with acks=all; records are 100 bytes. It
// measures produce throughput and latency, the three brokers' CPU summed
// per million records, each broker's peak RSS and their sum, and
// end-to-end latency at a fixed 5,000 records/s. The Kafka JVMs get the
// single-node Kafka's options (G1, the C2 compiler, a 512 MiB heap), not
// the testkit's quick-start ones. Its figures are tabled and charted
// apart from the single-node ones (ReplicatedPairs, prefix-replicated-*.svg).
//
// Threading: one goroutine drives everything, sequentially; brokers are
// child processes that are always stopped (SIGTERM, then SIGKILL) before
// the next one starts.
package compare
