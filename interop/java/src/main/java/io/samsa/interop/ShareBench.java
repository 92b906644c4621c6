package io.samsa.interop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Share-group throughput (KIP-932) for bench/compare's workload S1: the
 * same Java client, KafkaShareConsumer from kafka-clients, against samsa
 * and against Apache Kafka.
 *
 * Usage: java -cp ... io.samsa.interop.ShareBench BOOTSTRAP TOPIC GROUP RECORDS CONSUMERS TIMEOUT_MS
 *
 * TOPIC must already hold RECORDS records, at offsets below 2^31 (a
 * fresh topic: distinct records are tracked in one BitSet per partition). GROUP's share.auto.offset.reset
 * is set to earliest (as ShareGroups does), then CONSUMERS share consumers
 * (one thread each, implicit acknowledgement, byte-array values) read until
 * RECORDS distinct records (partition, offset) are in; each then commits
 * its last acknowledgements (commitSync). The clock runs from the first
 * consumer's creation to the last commit, so it includes joining the
 * group. Prints one JSON line:
 *
 *   {"records":N,"deliveries":D,"consumers":C,"elapsed_ms":E,"first_record_ms":F,"records_per_s":R,"per_consumer":[...]}
 *
 * deliveries counts every record handed to a consumer, so deliveries - N
 * are redeliveries (a lock that ran out, a consumer that left). Exits
 * non-zero when TIMEOUT_MS passes first or a consumer fails.
 */
public final class ShareBench {
    private ShareBench() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: ShareBench BOOTSTRAP TOPIC GROUP RECORDS CONSUMERS TIMEOUT_MS");
            System.exit(2);
        }
        String bootstrap = args[0], topic = args[1], group = args[2];
        long records = Long.parseLong(args[3]);
        int consumers = Integer.parseInt(args[4]);
        long timeoutMs = Long.parseLong(args[5]);
        ShareGroups.earliest(bootstrap, group);

        Map<Integer, BitSet> seen = new ConcurrentHashMap<>();
        AtomicLong distinct = new AtomicLong(), deliveries = new AtomicLong(), firstRecordNanos = new AtomicLong();
        long[] perConsumer = new long[consumers];
        List<Throwable> failures = new ArrayList<>();
        CountDownLatch committed = new CountDownLatch(consumers);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        long start = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        for (int k = 0; k < consumers; k++) {
            final int me = k;
            Thread t = new Thread(() -> {
                try (KafkaShareConsumer<byte[], byte[]> c = consumer(bootstrap, topic, group)) {
                    try {
                        while (distinct.get() < records && System.nanoTime() < deadline) {
                            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) {
                                firstRecordNanos.compareAndSet(0, System.nanoTime());
                                deliveries.incrementAndGet();
                                perConsumer[me]++;
                                BitSet offsets = seen.computeIfAbsent(r.partition(), p -> new BitSet());
                                boolean fresh;
                                synchronized (offsets) {
                                    fresh = !offsets.get((int) r.offset());
                                    offsets.set((int) r.offset());
                                }
                                if (fresh) {
                                    distinct.incrementAndGet();
                                }
                            }
                        }
                        c.commitSync();
                    } finally {
                        committed.countDown();
                    }
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            }, "share-consumer-" + k);
            threads.add(t);
            t.start();
        }
        committed.await();
        long end = System.nanoTime();
        for (Thread t : threads) {
            t.join();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("a share consumer failed", failures.get(0));
        }
        if (distinct.get() < records) {
            System.err.printf("ShareBench: %d of %d records in %d ms (timeout)%n", distinct.get(), records, timeoutMs);
            System.exit(1);
        }
        double elapsedMs = (end - start) / 1e6;
        double firstMs = firstRecordNanos.get() == 0 ? -1 : (firstRecordNanos.get() - start) / 1e6;
        StringBuilder per = new StringBuilder();
        for (int k = 0; k < consumers; k++) {
            per.append(k == 0 ? "" : ",").append(perConsumer[k]);
        }
        System.out.printf("{\"records\":%d,\"deliveries\":%d,\"consumers\":%d,\"elapsed_ms\":%.1f,\"first_record_ms\":%.1f,\"records_per_s\":%.1f,\"per_consumer\":[%s]}%n",
            records, deliveries.get(), consumers, elapsedMs, firstMs, records / (elapsedMs / 1000), per);
    }

    static KafkaShareConsumer<byte[], byte[]> consumer(String bootstrap, String topic, String group) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put("share.acknowledgement.mode", "implicit");
        KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(p);
        c.subscribe(List.of(topic));
        return c;
    }
}
