// Package groups tests consumer groups end to end: real clients (franz-go
// with the eager and cooperative-sticky balancers, sarama's
// ConsumerGroup, kafka-go's Reader, librdkafka through `kcat -G`) against
// a `samsa serve` process.
//
// What the tests pin down:
//
//   - members of one group consume a topic exactly once between them
//     (franz_test.go), also while members join and leave under load
//     (every record at least once, committed offsets end at the log end);
//   - a member killed without leaving (kcat SIGKILLed) keeps its
//     partitions until its session times out, then the others get them
//     (kcat_test.go);
//   - commits survive a broker restart: the coordinator reloads
//     __consumer_offsets and a new member resumes exactly where the last
//     commit left off (restart_test.go);
//   - sarama and kafka-go consume through the group and commit
//     (clients_test.go).
//
// Most tests share one broker started with
// --group.initial.rebalance.delay.ms 0 (main_test.go); the restart test
// runs its own. Each test uses its own topic and group names. The whole
// package runs in well under two minutes; the longest test waits for a
// six-second session timeout.
package groups
