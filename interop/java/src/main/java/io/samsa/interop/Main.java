package io.samsa.interop;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
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
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A real Java client driving samsa in tests. Every record i has key
 * "key-i", a value "value-i-" padded with a deterministic filler to the
 * requested size, and a header "seq" = i, so the consumer can check each
 * record it reads without remembering what was sent.
 *
 * Usage:
 *   produce BOOTSTRAP TOPIC COUNT SIZE COMPRESSION IDEMPOTENT(true|false)
 *   consume BOOTSTRAP TOPIC COUNT GROUP|- TIMEOUT_MS
 *   admin   BOOTSTRAP TOPIC PARTITIONS
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
        String bootstrap = a[1], topic = a[2], compression = a[5];
        long count = Long.parseLong(a[3]);
        int size = Integer.parseInt(a[4]);
        boolean idempotent = Boolean.parseBoolean(a[6]);
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
        System.out.println("OK produced " + count);
    }

    static void consume(String[] a) throws Exception {
        String bootstrap = a[1], topic = a[2], group = a[4];
        long count = Long.parseLong(a[3]);
        long timeoutMs = Long.parseLong(a[5]);
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        boolean useGroup = !group.equals("-");
        if (useGroup) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        }
        BitSet seen = new BitSet();
        long got = 0;
        long deadline = System.currentTimeMillis() + timeoutMs;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            if (useGroup) {
                consumer.subscribe(Collections.singletonList(topic));
            } else {
                List<org.apache.kafka.common.TopicPartition> tps = new ArrayList<>();
                consumer.partitionsFor(topic).forEach(pi -> tps.add(new org.apache.kafka.common.TopicPartition(topic, pi.partition())));
                consumer.assign(tps);
                consumer.seekToBeginning(tps);
            }
            while (got < count && System.currentTimeMillis() < deadline) {
                ConsumerRecords<byte[], byte[]> recs = consumer.poll(Duration.ofMillis(500));
                for (ConsumerRecord<byte[], byte[]> r : recs) {
                    Header h = r.headers().lastHeader("seq");
                    if (h == null) {
                        fail("record at offset " + r.offset() + " has no seq header");
                    }
                    long i = Long.parseLong(new String(h.value(), StandardCharsets.UTF_8));
                    if (!java.util.Arrays.equals(r.key(), key(i))) {
                        fail("record " + i + ": wrong key");
                    }
                    byte[] want = value(i, r.value().length);
                    if (!java.util.Arrays.equals(r.value(), want)) {
                        fail("record " + i + ": wrong value");
                    }
                    if (seen.get((int) i)) {
                        fail("record " + i + " delivered twice");
                    }
                    seen.set((int) i);
                    got++;
                }
                if (useGroup && !recs.isEmpty()) {
                    consumer.commitSync();
                }
            }
        }
        if (got < count) {
            fail("consumed " + got + " of " + count + " records before the timeout");
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
