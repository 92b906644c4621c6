// Package datapath holds the end-to-end tests of samsa's data path
// (Produce, Fetch, ListOffsets, InitProducerId, OffsetForLeaderEpoch)
// with real clients against `samsa serve` running as its own process,
// started through testkit. It has no code of its own; see the _test.go
// files.
//
// # What is tested
//
//   - franz_test.go: franz-go produces and consumes recordCount records
//     (1,000,000 by default) per codec (none, gzip, snappy, lz4, zstd),
//     every key, value, header and timestamp checked.
//   - cut_test.go: franz-go's idempotent producer while a
//     testkit/faultproxy, which the broker advertises as its address, cuts
//     every connection several times: no duplicate, no gap, order kept.
//   - crash_test.go: kill -9 of the broker under idempotent acks=all
//     producers at seeded random points, restart, every acknowledged record
//     back byte for byte at its offset, no duplicate after the producers
//     carry on.
//   - sarama_test.go, kafkago_test.go, kcat_test.go, java_test.go: the
//     other clients (sarama sync and async producers and consumer,
//     kafka-go Writer and Reader, kcat/librdkafka, the Java client from
//     interop/java) produce and consume with each codec they support.
//   - longpoll_test.go: how fast a fetch parked in max wait is woken by a
//     produce (p50/p99 logged, not asserted), and that it is woken rather
//     than answered at max wait.
//   - offsets_test.go: ListOffsets (earliest, latest, max timestamp, by
//     timestamp in plain and compressed batches, with Kafka's answer: the
//     first record at or after the timestamp), OffsetForLeaderEpoch,
//     DeleteRecords.
//   - edge_test.go, large_test.go: null and empty keys and values,
//     headers, the epoch timestamp, a 900 KiB value through every codec;
//     max.message.bytes, and batches larger than the consumer's fetch
//     limits (KIP-74).
//   - codec_test.go: a raw Fetch shows that batches are stored with the
//     codec the producer used.
//   - transactions_test.go, transactions_sarama_test.go,
//     transactions_streams_test.go: exactly-once. Java's transactional
//     producer (commit and abort, offsets in the transactions) with
//     read_committed and read_uncommitted consumers; franz-go commit and
//     abort; sarama consume-transform-produce with AddOffsetsToTxn; a
//     Kafka Streams exactly_once_v2 application over recordCount records
//     with the broker, then the application, kill -9'd mid-run (output
//     checked exactly: every input once, counts right), and the same on a
//     3-broker cluster (testkit.StartCluster, real ZooKeeper) with one
//     broker kill -9'd; and one broker
//     with samsa.transactions.enable=false refusing transactional
//     producers at once.
//   - txn_tools_test.go: Kafka 3.9.1's kafka-transactions.sh (list,
//     describe, describe-producers, find-hanging, abort) against a broker
//     serving transactions, down to aborting a hanging transaction and
//     reading read_committed past it.
//
// # The record model
//
// Round-trip records are built from their index (records_test.go), so a
// consumer checks each record on its own: key "key-<i>", a 24..99 byte
// value derived from i, a header "idx" carrying i, a create timestamp of
// base+i ms, partition i % partitions. The verifier requires every index
// exactly once, offsets dense from 0 and increasing indexes within each
// partition.
//
// # Knobs
//
//	go test ./e2e/datapath/                         # everything, 1,000,000 records per codec
//	go test -race ./e2e/datapath/                   # 100,000 per codec, other counts /4
//	go test -short ./e2e/datapath/                  # 50,000 per codec, fewer crash rounds
//	SAMSA_DATAPATH_RECORDS=200000 go test ./e2e/datapath/
//	SAMSA_CRASH_SEED=42 go test -run Crash -v ./e2e/datapath/
//
// Tests skip when the broker does not advertise Produce and Fetch yet, and
// when kcat, java or mvn are missing; under CI=true each of these is a
// failure instead. The Java harness is built once per test binary with
// `mvn -q -B package -DskipTests` in interop/java (the first build
// downloads from Maven Central).
//
// The race detector slows franz-go's codecs in the test process about
// twentyfold (1,000,000 records per codec: 11 minutes instead of 32 s),
// hence the smaller default under -race.
//
// # Timings (2 shared cores)
//
// Without -race the package takes about 2 minutes on a quiet machine
// (the five 1,000,000-record round trips 32 s of it, 4.7 to 8.3 s per
// codec) and up to 4.5 minutes when other builds compete for the cores;
// with -race, 4 to 6 minutes. The first Java run adds the Maven build
// (about 25 s, more when Maven downloads).
//
// # Brokers
//
// Most tests share one broker (sharedBroker); the crash and cut tests
// start their own, because they kill it or put a proxy in front of it.
package datapath
