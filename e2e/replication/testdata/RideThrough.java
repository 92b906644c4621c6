// RideThrough is Apache Kafka's Java client (kafka-clients) riding through
// broker failures, for e2e/replication's TestRealClientsRideThroughLeaderKills,
// run in java's source-file mode on Kafka 3.9.1's class path:
//
//	java -cp <kafka-clients...> RideThrough.java <bootstrap> <topic> <prefix>
//
// It produces "<prefix>-%07d" values (acks=all, idempotent, retrying for as
// long as delivery.timeout.ms allows) at about 2,000 a second until its
// standard input ends, and meanwhile consumes every partition of the topic
// from the start (assigned, no group). Then it flushes, keeps consuming
// until it has read every value it produced (or a minute has passed), and
// prints
//
//	FAILED <value> <error>        for each produce the client gave up on
//	SENT <n> FAILED <f> CONSUMED <c>
//
// where c counts distinct values of its own read back. Exit status 0 only
// when nothing failed and all were read.
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class RideThrough {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], prefix = args[2];
        AtomicBoolean stdinOpen = new AtomicBoolean(true);
        Thread stdin = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                }
            } catch (Exception e) {
                // an error ends it as EOF does
            }
            stdinOpen.set(false);
        });
        stdin.setDaemon(true);
        stdin.start();

        Set<String> seen = ConcurrentHashMap.newKeySet();
        AtomicBoolean consuming = new AtomicBoolean(true);
        Thread consumer = new Thread(() -> consume(bootstrap, topic, prefix, seen, consuming));
        consumer.start();

        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("retries", Integer.toString(Integer.MAX_VALUE));
        p.put("delivery.timeout.ms", "300000");
        p.put("linger.ms", "5");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        AtomicLong failed = new AtomicLong();
        long sent = 0;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            while (stdinOpen.get()) {
                String v = String.format("%s-%07d", prefix, sent);
                producer.send(new ProducerRecord<>(topic, v), (md, err) -> {
                    if (err != null) {
                        failed.incrementAndGet();
                        System.out.println("FAILED " + v + " " + err);
                    }
                });
                sent++;
                if (sent % 100 == 0) {
                    Thread.sleep(50);
                }
            }
            producer.flush();
        }
        long deadline = System.currentTimeMillis() + 60_000;
        while (seen.size() < sent - failed.get() && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        consuming.set(false);
        consumer.join();
        System.out.println("SENT " + sent + " FAILED " + failed.get() + " CONSUMED " + seen.size());
        System.exit(failed.get() == 0 && seen.size() == sent ? 0 : 1);
    }

    static void consume(String bootstrap, String topic, String prefix, Set<String> seen, AtomicBoolean consuming) {
        Properties c = new Properties();
        c.put("bootstrap.servers", bootstrap);
        c.put("key.deserializer", StringDeserializer.class.getName());
        c.put("value.deserializer", StringDeserializer.class.getName());
        c.put("enable.auto.commit", "false");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
            List<TopicPartition> parts = consumer.partitionsFor(topic).stream()
                    .map(i -> new TopicPartition(topic, i.partition())).collect(Collectors.toList());
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            while (consuming.get()) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.value() != null && r.value().startsWith(prefix + "-")) {
                        seen.add(r.value());
                    }
                }
            }
        }
    }
}
