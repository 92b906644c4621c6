package io.samsa.interop;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * One consumer group member for the group tests, running until its
 * standard input closes (then it leaves the group) or it is killed:
 *
 *   group-member BOOTSTRAP TOPIC GROUP PROTOCOL(consumer|classic) [ASSIGNOR]
 *
 * It commits every poll's offsets synchronously and only then prints the
 * polled values, one line "R value" each, so a value printed is a value
 * committed: a member killed at any moment never leaves a printed record
 * for another member to read again. It also prints "A p,p,..." with its
 * whole assignment each time the assignment changes. ASSIGNOR is
 * group.remote.assignor (consumer protocol only). TOPIC "re2:REGEX"
 * subscribes to a SubscriptionPattern: the broker resolves the regex
 * (consumer protocol only). A classic member uses a
 * six-second session timeout.
 */
final class GroupMember {
    private GroupMember() {}

    static void run(String[] a) throws Exception {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, a[1]);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, a[3]);
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, a[4]);
        if (a.length > 5) {
            p.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, a[5]);
        }
        if (a[4].equals("classic")) {
            // The consumer protocol takes these from the broker.
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
        }
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        Thread stdin = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // drain until closed
                }
            } catch (Exception ignored) {
                // closed
            }
        });
        stdin.setDaemon(true);
        stdin.start();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            TreeSet<Integer> owned = new TreeSet<>();
            ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> parts) {
                    parts.forEach(tp -> owned.remove(tp.partition()));
                    report(owned);
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> parts) {
                    parts.forEach(tp -> owned.add(tp.partition()));
                    report(owned);
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> parts) {
                    onPartitionsRevoked(parts);
                }
            };
            if (a[2].startsWith("re2:")) {
                // The broker resolves the regex (KIP-848, consumer protocol only).
                consumer.subscribe(new SubscriptionPattern(a[2].substring(4)), listener);
            } else {
                consumer.subscribe(List.of(a[2]), listener);
            }
            while (stdin.isAlive()) {
                ConsumerRecords<byte[], byte[]> recs = consumer.poll(Duration.ofMillis(200));
                if (recs.isEmpty()) {
                    continue;
                }
                consumer.commitSync();
                StringBuilder out = new StringBuilder();
                for (ConsumerRecord<byte[], byte[]> r : recs) {
                    out.append("R ").append(new String(r.value(), StandardCharsets.UTF_8)).append('\n');
                }
                System.out.print(out);
                System.out.flush();
            }
        }
        System.out.println("LEFT");
        System.out.flush();
    }

    static void report(TreeSet<Integer> owned) {
        StringBuilder s = new StringBuilder("A ");
        for (int part : owned) {
            if (s.length() > 2) {
                s.append(',');
            }
            s.append(part);
        }
        System.out.println(s);
        System.out.flush();
    }
}
