package io.samsa.interop;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Java's transactional KafkaProducer with the commit and abort pattern,
 * checked by read_committed and read_uncommitted KafkaConsumers.
 *
 * Usage: txn BOOTSTRAP TOPIC TXNS PER_TXN GROUP
 *
 * TOPIC (made by the caller, any number of partitions) gets TXNS
 * transactions of PER_TXN records each, round-robin over the partitions;
 * every third transaction (t % 3 == 2) is aborted, the others committed.
 * Record values are "t<t>-<i>". Each committed transaction also commits
 * an offset for GROUP (sendOffsetsToTransaction on partition 0 of TOPIC,
 * offset t+1), which must become visible with its records; the aborted
 * ones' offsets never.
 *
 * Then a read_committed consumer (assign, from the start) must read
 * exactly the committed records, each once, in each partition's order, and
 * stop there; a read_uncommitted one must read every record sent, the
 * aborted ones too. Prints "OK committed=N aborted=M offset=O" or fails
 * with the client's error.
 */
final class Txn {
    private Txn() {}

    static void run(String[] args) throws Exception {
        String bootstrap = args[1], topic = args[2], group = args[5];
        int txns = Integer.parseInt(args[3]), perTxn = Integer.parseInt(args[4]);

        int partitions;
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            partitions = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
        }

        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "samsa-java-txn-" + topic);
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        pp.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
        List<List<String>> committed = new ArrayList<>(), all = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            committed.add(new ArrayList<>());
            all.add(new ArrayList<>());
        }
        int committedN = 0, abortedN = 0;
        long lastCommittedOffset = -1;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp)) {
            producer.initTransactions();
            int next = 0;
            for (int t = 0; t < txns; t++) {
                boolean abort = t % 3 == 2;
                producer.beginTransaction();
                for (int i = 0; i < perTxn; i++) {
                    int p = next++ % partitions;
                    String v = "t" + t + "-" + i;
                    producer.send(new ProducerRecord<>(topic, p, null, v.getBytes(StandardCharsets.UTF_8)));
                    all.get(p).add(v);
                    if (!abort) {
                        committed.get(p).add(v);
                    }
                }
                Map<TopicPartition, OffsetAndMetadata> offsets = Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(t + 1));
                producer.sendOffsetsToTransaction(offsets, new ConsumerGroupMetadata(group));
                if (abort) {
                    // Flushed first, so the aborted records are in the log
                    // (abortTransaction drops those not yet sent).
                    producer.flush();
                    producer.abortTransaction();
                    abortedN += perTxn;
                } else {
                    producer.commitTransaction();
                    committedN += perTxn;
                    lastCommittedOffset = t + 1;
                }
            }
        }

        check("read_committed", bootstrap, topic, partitions, committed);
        check("read_uncommitted", bootstrap, topic, partitions, all);

        try (Admin admin = Admin.create(ap)) {
            OffsetAndMetadata om = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()
                .get(new TopicPartition(topic, 0));
            long got = om == null ? -1 : om.offset();
            if (got != lastCommittedOffset) {
                throw new IllegalStateException("group " + group + " committed offset " + got
                    + ", want " + lastCommittedOffset + " (the last committed transaction's)");
            }
        }
        System.out.println("OK committed=" + committedN + " aborted=" + abortedN + " offset=" + lastCommittedOffset);
    }

    /**
     * Reads every partition from the start up to its end under the given
     * isolation level and compares the values with want, partition by
     * partition, in order.
     */
    private static void check(String isolation, String bootstrap, String topic, int partitions, List<List<String>> want)
            throws Exception {
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        List<TopicPartition> tps = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            tps.add(new TopicPartition(topic, p));
        }
        Map<Integer, List<String>> got = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(cp)) {
            c.assign(tps);
            c.seekToBeginning(tps);
            // endOffsets under the consumer's isolation level: the LSO for
            // read_committed (here the log end: no transaction is open).
            Map<TopicPartition, Long> ends = c.endOffsets(tps);
            long deadline = System.currentTimeMillis() + 60_000;
            while (true) {
                boolean done = true;
                for (TopicPartition tp : tps) {
                    if (c.position(tp) < ends.get(tp)) {
                        done = false;
                    }
                }
                if (done) {
                    break;
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException(isolation + ": not at the end after 60s: positions "
                        + positions(c, tps) + ", ends " + ends);
                }
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                    got.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(new String(r.value(), StandardCharsets.UTF_8));
                }
            }
            // Nothing more comes (a read_committed consumer must not read
            // past the aborted data into anything else).
            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                throw new IllegalStateException(isolation + ": a record past the end: partition " + r.partition()
                    + " offset " + r.offset());
            }
        }
        for (int p = 0; p < partitions; p++) {
            List<String> g = got.getOrDefault(p, List.of());
            if (!g.equals(want.get(p))) {
                throw new IllegalStateException(isolation + ": partition " + p + " read " + g.size() + " records "
                    + head(g) + ", want " + want.get(p).size() + " " + head(want.get(p)));
            }
        }
    }

    private static String positions(KafkaConsumer<byte[], byte[]> c, List<TopicPartition> tps) {
        Map<TopicPartition, Long> m = new HashMap<>();
        for (TopicPartition tp : tps) {
            m.put(tp, c.position(tp));
        }
        return m.toString();
    }

    private static String head(List<String> l) {
        return l.subList(0, Math.min(10, l.size())).toString();
    }
}
