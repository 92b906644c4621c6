package io.samsa.interop;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A real Java client driving samsa in tests. Every record i has key
 * "key-i", a value "value-i-" padded with a deterministic filler to the
 * requested size, and a header "seq" = i, so the consumer can check each
 * record it reads without remembering what was sent.
 *
 * Usage:
 *   produce BOOTSTRAP TOPICS COUNT SIZE COMPRESSIONS IDEMPOTENT(true|false)
 *   consume BOOTSTRAP TOPICS COUNT GROUP|- TIMEOUT_MS [FETCH_BYTES]
 *   admin   BOOTSTRAP TOPIC PARTITIONS
 *   matrix  BOOTSTRAP PREFIX COUNT   (the interop matrix scenario, see Matrix)
 *   txn     BOOTSTRAP TOPIC TXNS PER_TXN GROUP   (transactions, see Txn)
 *   streams-eos BOOTSTRAP APP_ID IN OUT COUNTS STATE_DIR   (Kafka Streams, see StreamsEos)
 *   sasl-ssl, sasl-ssl-acl   (SASL_SSL with SCRAM, see SaslSsl)
 *   group-member BOOTSTRAP TOPIC GROUP PROTOCOL [ASSIGNOR]   (a group member until stdin closes, see GroupMember)
 * TOPICS is a comma list; produce writes COUNT records to each topic, with
 * the matching entry of the comma list COMPRESSIONS (or its only entry).
 * consume reads COUNT records from each topic, all partitions from the
 * start (without a group: assign and seekToBeginning), and checks each
 * record: key, value, exactly once per topic, offsets dense from 0 and
 * seq increasing within each partition (one producer per topic, which
 * keeps order per partition), create-time timestamps. FETCH_BYTES sets
 * max.partition.fetch.bytes: small values make many incremental fetch
 * session (KIP-227) round trips.
 * Prints one line "OK ..." on success; anything else exits non-zero with the
 * client's own error.
 */
public final class Main {
    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            usage();
        }
        switch (args[0]) {
            case "produce" -> produce(args);
            case "consume" -> consume(args);
            case "admin" -> admin(args);
            case "matrix" -> Matrix.run(args[1], args[2], Integer.parseInt(args[3]));
            case "txn" -> Txn.run(args);
            case "streams-eos" -> StreamsEos.run(args);
            case "sasl-ssl" -> SaslSsl.matrix(args);
            case "sasl-ssl-acl" -> SaslSsl.acl(args);
            case "group-member" -> GroupMember.run(args);
            default -> usage();
        }
    }

    private static void usage() {
        System.err.println("usage: produce|consume|admin ... (see Main.java)");
        System.exit(2);
    }

    static byte[] key(long i) {
        return ("key-" + i).getBytes(StandardCharsets.UTF_8);
    }

    static byte[] value(long i, int size) {
        byte[] prefix = ("value-" + i + "-").getBytes(StandardCharsets.UTF_8);
        byte[] v = new byte[Math.max(size, prefix.length)];
        System.arraycopy(prefix, 0, v, 0, prefix.length);
        for (int j = prefix.length; j < v.length; j++) {
            v[j] = (byte) ('a' + (i + j) % 26);
        }
        return v;
    }

    static void produce(String[] a) throws Exception {
        String bootstrap = a[1];
        String[] topics = a[2].split(",");
        String[] compressions = a[5].split(",");
        long count = Long.parseLong(a[3]);
        int size = Integer.parseInt(a[4]);
        boolean idempotent = Boolean.parseBoolean(a[6]);
        if (compressions.length != 1 && compressions.length != topics.length) {
            fail("give one compression or one per topic");
        }
        for (int t = 0; t < topics.length; t++) {
            String compression = compressions.length == 1 ? compressions[0] : compressions[t];
            produceTopic(bootstrap, topics[t], count, size, compression, idempotent);
        }
        System.out.println("OK produced " + count + " to each of " + topics.length + " topics");
    }

    static void produceTopic(String bootstrap, String topic, long count, int size, String compression,
            boolean idempotent) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, Boolean.toString(idempotent));
        p.put(ProducerConfig.ACKS_CONFIG, idempotent ? "all" : "1");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            List<Future<RecordMetadata>> acks = new ArrayList<>();
            for (long i = 0; i < count; i++) {
                ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, key(i), value(i, size));
                r.headers().add("seq", Long.toString(i).getBytes(StandardCharsets.UTF_8));
                acks.add(producer.send(r));
            }
            producer.flush();
            for (Future<RecordMetadata> f : acks) {
                f.get();
            }
        }
    }

    static void consume(String[] a) throws Exception {
        String bootstrap = a[1], group = a[4];
        List<String> topics = List.of(a[2].split(","));
        long count = Long.parseLong(a[3]);
        long timeoutMs = Long.parseLong(a[5]);
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        if (a.length > 6) {
            p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, a[6]);
        }
        boolean useGroup = !group.equals("-");
        if (useGroup) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        }
        Map<String, BitSet> seen = new HashMap<>();
        Map<TopicPartition, Long> nextOffset = new HashMap<>();
        Map<TopicPartition, Long> lastSeq = new HashMap<>();
        for (String t : topics) {
            seen.put(t, new BitSet());
        }
        long got = 0, want = count * topics.size();
        long deadline = System.currentTimeMillis() + timeoutMs;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            if (useGroup) {
                consumer.subscribe(topics);
            } else {
                List<TopicPartition> tps = new ArrayList<>();
                for (String t : topics) {
                    consumer.partitionsFor(t).forEach(pi -> tps.add(new TopicPartition(t, pi.partition())));
                }
                consumer.assign(tps);
                consumer.seekToBeginning(tps);
            }
            while (got < want && System.currentTimeMillis() < deadline) {
                ConsumerRecords<byte[], byte[]> recs = consumer.poll(Duration.ofMillis(500));
                for (ConsumerRecord<byte[], byte[]> r : recs) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    String at = tp + " offset " + r.offset();
                    long wantOffset = nextOffset.getOrDefault(tp, 0L);
                    if (r.offset() != wantOffset) {
                        fail(at + ": offsets not dense, want " + wantOffset);
                    }
                    nextOffset.put(tp, r.offset() + 1);
                    Header h = r.headers().lastHeader("seq");
                    if (h == null) {
                        fail(at + ": no seq header");
                    }
                    long i = Long.parseLong(new String(h.value(), StandardCharsets.UTF_8));
                    if (i < 0 || i >= count) {
                        fail(at + ": seq " + i + " out of range");
                    }
                    if (!java.util.Arrays.equals(r.key(), key(i))) {
                        fail(at + ": record " + i + ": wrong key");
                    }
                    if (!java.util.Arrays.equals(r.value(), value(i, r.value().length))) {
                        fail(at + ": record " + i + ": wrong value");
                    }
                    if (r.timestampType() != TimestampType.CREATE_TIME || r.timestamp() <= 0) {
                        fail(at + ": record " + i + ": timestamp " + r.timestampType() + " " + r.timestamp());
                    }
                    Long last = lastSeq.get(tp);
                    if (last != null && i <= last) {
                        fail(at + ": record " + i + " after record " + last + ": order lost");
                    }
                    lastSeq.put(tp, i);
                    BitSet s = seen.get(r.topic());
                    if (s == null) {
                        fail(at + ": a topic that was not asked for");
                    }
                    if (s.get((int) i)) {
                        fail(at + ": record " + i + " delivered twice");
                    }
                    s.set((int) i);
                    got++;
                }
                if (useGroup && !recs.isEmpty()) {
                    consumer.commitSync();
                }
            }
        }
        if (got < want) {
            fail("consumed " + got + " of " + want + " records before the timeout");
        }
        System.out.println("OK consumed " + got);
    }

    static void admin(String[] a) throws Exception {
        String bootstrap = a[1], topic = a[2];
        int partitions = Integer.parseInt(a[3]);
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
            Map<String, TopicDescription> d = admin.describeTopics(List.of(topic)).allTopicNames().get();
            int n = d.get(topic).partitions().size();
            if (n != partitions) {
                fail("described " + n + " partitions, want " + partitions);
            }
            if (!admin.listTopics().names().get().contains(topic)) {
                fail("listTopics misses " + topic);
            }
            admin.deleteTopics(List.of(topic)).all().get();
        }
        System.out.println("OK admin " + topic);
    }

    static void fail(String msg) {
        System.err.println("FAIL " + msg);
        System.exit(1);
    }
}
