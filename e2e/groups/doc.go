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
//   - members keep consuming across a broker restart (restart_test.go);
//   - a static member (group.instance.id) restarts without a rebalance
//     (static_test.go);
//   - sarama and kafka-go consume through the group and commit
//     (clients_test.go);
//   - `samsa group list|describe|reset-offsets|delete` against a live
//     group (cli_test.go);
//   - Apache Kafka's kafka-consumer-groups describes a samsa group and
//     Kafka's OffsetsMessageFormatter/GroupMetadataMessageFormatter read
//     samsa's __consumer_offsets records (java_test.go; jars from
//     interop/java, skipped with -short);
//   - KIP-848 consumer groups (kip848_test.go, each on its own broker with
//     a 6 s group.consumer.session.timeout.ms): Java's KafkaConsumer with
//     group.protocol=consumer, and librdkafka (confluent-kafka in
//     interop/python/.venv) with Java, join singly and in a burst, leave,
//     and a SIGKILLed member is fenced; Java classic members upgraded
//     into a consumer group and downgraded out of it; every record
//     exactly once; kafka-consumer-groups and `samsa group describe`
//     show such a group. Java members are interop/java's GroupMember,
//     librdkafka ones interop/python/group_member.py: both commit before
//     they report a record.
//
// Most tests share one broker started with
// --group.initial.rebalance.delay.ms 0 (main_test.go); the restart test
// runs its own. Each test uses its own topic and group names. The whole
// package runs in about a minute; the longest tests wait for a
// six-second session timeout or start three JVMs.
package groups
