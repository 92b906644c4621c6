package io.samsa.interop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Share groups (KIP-932) with Java's KafkaShareConsumer.
 *
 * Usage: java -cp ... io.samsa.interop.ShareGroups MODE BOOTSTRAP TOPIC GROUP [N]
 *
 * Every mode but cluster, join and admin first sets the group's share.auto.offset.reset to earliest
 * (IncrementalAlterConfigs on the GROUP resource), so records produced
 * before the consumers join are theirs. Prints a line starting OK when
 * the mode's checks hold, else throws.
 *
 *   all N      produce N records (values r0..), three consumers of GROUP
 *              with implicit acknowledgement read until N distinct
 *              records are in; every record must arrive exactly once.
 *              The group's share.record.lock.duration.ms is 30 s (the
 *              broker's may be short for the timeout mode): a record
 *              comes back, and so twice, only when its lock runs out
 *              before the consumer's acknowledgement arrives, which a
 *              slow machine may take a second for.
 *   release    produce one record; a consumer releases it, gets it again
 *              with delivery count 2 and accepts it.
 *   timeout    produce one record; consumer A takes it and acknowledges
 *              nothing; consumer B gets it once A's lock ran out
 *              (delivery count 2) and accepts it.
 *   limit      produce two records; the first is rejected, the second
 *              released twice (group.share.delivery.count.limit=2): then
 *              neither comes back.
 *   accept N   produce N records and accept them all (explicitly).
 *   after N    produce 2 more records; a consumer must get exactly those
 *              two (offsets N, N+1): what was accepted before stays so.
 *   cluster N  (a cluster's bootstrap; group configs are not set) the
 *              test produces the N records r0.. once the group's share
 *              partitions started; three consumers of GROUP accept
 *              explicitly and commit, until every record is acknowledged
 *              (90 s at most), printing "PROGRESS k" as k records'
 *              acknowledgements succeed, so a test can kill a broker
 *              mid-run. A record whose acknowledgement succeeded twice
 *              fails the mode. A failed acknowledgement is in doubt (the
 *              broker writing it died: it may have landed unanswered):
 *              its record either comes back (the redelivery Kafka allows)
 *              and is acknowledged again, or stays acknowledged, which
 *              the group's durable state must then show (its share
 *              partitions' start offsets at the partitions' ends). A
 *              record neither acknowledged nor in doubt fails the mode.
 *   join       one consumer joins GROUP, polls for 2 s expecting nothing
 *              (every record is acknowledged) and leaves.
 *   admin N    on the empty GROUP whose partition 0 of TOPIC starts at N:
 *              listGroups for share groups (GROUP, type share,
 *              Empty) and for consumer groups (not GROUP),
 *              describeShareGroups (Empty, no members),
 *              listShareGroupOffsets (N), alterShareGroupOffsets to 1 and
 *              list again (1), deleteShareGroupOffsets (then no offsets),
 *              deleteShareGroups (then not listed).
 */
public final class ShareGroups {
    private ShareGroups() {}

    public static void main(String[] args) throws Exception {
        String mode = args[0], bootstrap = args[1], topic = args[2], group = args[3];
        int n = args.length > 4 ? Integer.parseInt(args[4]) : 0;
        if (!mode.equals("cluster") && !mode.equals("admin") && !mode.equals("join")) {
            earliest(bootstrap, group); // group configs: KRaft only in Kafka, a broker alone in samsa
        }
        switch (mode) {
            case "all" -> all(bootstrap, topic, group, n);
            case "release" -> release(bootstrap, topic, group);
            case "timeout" -> timeout(bootstrap, topic, group);
            case "limit" -> limit(bootstrap, topic, group);
            case "accept" -> accept(bootstrap, topic, group, n);
            case "after" -> after(bootstrap, topic, group, n);
            case "admin" -> admin(bootstrap, topic, group, n);
            case "cluster" -> cluster(bootstrap, topic, group, n);
            case "join" -> join(bootstrap, topic, group);
            default -> throw new IllegalArgumentException("unknown mode " + mode);
        }
    }

    static void earliest(String bootstrap, String group) throws Exception {
        groupConfig(bootstrap, group, "share.auto.offset.reset", "earliest");
    }

    /** Sets one of GROUP's configs (IncrementalAlterConfigs on the GROUP resource). */
    static void groupConfig(String bootstrap, String group, String name, String value) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            ConfigResource r = new ConfigResource(ConfigResource.Type.GROUP, group);
            Map<ConfigResource, Collection<AlterConfigOp>> ops = Map.of(r,
                List.of(new AlterConfigOp(new ConfigEntry(name, value), AlterConfigOp.OpType.SET)));
            admin.incrementalAlterConfigs(ops).all().get();
        }
    }

    static void produce(String bootstrap, String topic, int from, int count) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> prod = new KafkaProducer<>(p)) {
            for (int i = from; i < from + count; i++) {
                prod.send(new ProducerRecord<>(topic, "r" + i)).get();
            }
        }
    }

    static KafkaShareConsumer<String, String> consumer(String bootstrap, String topic, String group, boolean explicit) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put("share.acknowledgement.mode", explicit ? "explicit" : "implicit");
        KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(p);
        c.subscribe(List.of(topic));
        return c;
    }

    /** Polls until a record arrives or 30 s pass. */
    static ConsumerRecords<String, String> pollSome(KafkaShareConsumer<String, String> c) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            ConsumerRecords<String, String> rs = c.poll(Duration.ofMillis(200));
            if (!rs.isEmpty()) {
                return rs;
            }
        }
        throw new IllegalStateException("no record within 30 s");
    }

    static int deliveries(ConsumerRecord<String, String> r) {
        Optional<Short> d = r.deliveryCount();
        return d.map(Short::intValue).orElse(-1);
    }

    static void all(String bootstrap, String topic, String group, int n) throws Exception {
        groupConfig(bootstrap, group, "share.record.lock.duration.ms", "30000");
        produce(bootstrap, topic, 0, n);
        Map<String, AtomicInteger> seen = new ConcurrentHashMap<>();
        AtomicInteger distinct = new AtomicInteger();
        int[] per = new int[3];
        together(3, me -> {
            try (KafkaShareConsumer<String, String> c = consumer(bootstrap, topic, group, false)) {
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (distinct.get() < n && System.nanoTime() < deadline) {
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                        if (seen.computeIfAbsent(r.value(), v -> new AtomicInteger()).incrementAndGet() == 1) {
                            distinct.incrementAndGet();
                        }
                        per[me]++;
                    }
                }
                c.commitSync();
            }
        });
        for (int i = 0; i < n; i++) {
            AtomicInteger c = seen.get("r" + i);
            if (c == null || c.get() != 1) {
                throw new IllegalStateException("record r" + i + " consumed " + (c == null ? 0 : c.get()) + " times");
            }
        }
        System.out.println("OK all " + n + " records once; per consumer " + per[0] + "," + per[1] + "," + per[2]);
    }

    interface Consumer {
        void run(int me) throws Exception;
    }

    /** Runs k consumers on threads of their own and throws the first failure. */
    static void together(int k, Consumer body) throws Exception {
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            final int me = i;
            Thread t = new Thread(() -> {
                try {
                    body.run(me);
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("a consumer failed", failures.get(0));
        }
    }

    static void release(String bootstrap, String topic, String group) throws Exception {
        produce(bootstrap, topic, 0, 1);
        try (KafkaShareConsumer<String, String> c = consumer(bootstrap, topic, group, true)) {
            ConsumerRecord<String, String> first = pollSome(c).iterator().next();
            if (deliveries(first) != 1) {
                throw new IllegalStateException("first delivery count " + deliveries(first));
            }
            c.acknowledge(first, AcknowledgeType.RELEASE);
            c.commitSync();
            ConsumerRecord<String, String> again = pollSome(c).iterator().next();
            if (again.offset() != first.offset() || deliveries(again) != 2) {
                throw new IllegalStateException("after release got offset " + again.offset() + " count " + deliveries(again));
            }
            c.acknowledge(again, AcknowledgeType.ACCEPT);
            c.commitSync();
        }
        System.out.println("OK released record redelivered with delivery count 2");
    }

    static void timeout(String bootstrap, String topic, String group) throws Exception {
        produce(bootstrap, topic, 0, 1);
        KafkaShareConsumer<String, String> a = consumer(bootstrap, topic, group, true);
        ConsumerRecord<String, String> held = pollSome(a).iterator().next();
        try (KafkaShareConsumer<String, String> b = consumer(bootstrap, topic, group, true)) {
            ConsumerRecord<String, String> got = pollSome(b).iterator().next();
            if (got.offset() != held.offset() || deliveries(got) != 2) {
                throw new IllegalStateException("after the lock ran out got offset " + got.offset() + " count " + deliveries(got));
            }
            b.acknowledge(got, AcknowledgeType.ACCEPT);
            b.commitSync();
        }
        a.close(Duration.ofSeconds(5));
        System.out.println("OK record redelivered after its acquisition lock timed out");
    }

    static void limit(String bootstrap, String topic, String group) throws Exception {
        produce(bootstrap, topic, 0, 2);
        try (KafkaShareConsumer<String, String> c = consumer(bootstrap, topic, group, true)) {
            Map<Long, Integer> counts = new HashMap<>();
            int rounds = 0;
            while (counts.getOrDefault(1L, 0) < 2) {
                if (++rounds > 10) {
                    throw new IllegalStateException("record 1 not delivered twice: " + counts);
                }
                for (ConsumerRecord<String, String> r : pollSome(c)) {
                    counts.merge(r.offset(), 1, Integer::sum);
                    c.acknowledge(r, r.offset() == 0 ? AcknowledgeType.REJECT : AcknowledgeType.RELEASE);
                }
                c.commitSync();
            }
            if (counts.get(0L) != 1) {
                throw new IllegalStateException("rejected record delivered " + counts.get(0L) + " times");
            }
            // Both are archived now: polls for 3 s must bring nothing.
            expectNothing(c, Duration.ofSeconds(3), "archived record delivered again");
        }
        System.out.println("OK rejected and over-limit records archived");
    }

    static void accept(String bootstrap, String topic, String group, int n) throws Exception {
        produce(bootstrap, topic, 0, n);
        int got = 0;
        try (KafkaShareConsumer<String, String> c = consumer(bootstrap, topic, group, true)) {
            while (got < n) {
                for (ConsumerRecord<String, String> r : pollSome(c)) {
                    c.acknowledge(r, AcknowledgeType.ACCEPT);
                    got++;
                }
                c.commitSync();
            }
        }
        System.out.println("OK accepted " + got);
    }

    static void after(String bootstrap, String topic, String group, int n) throws Exception {
        produce(bootstrap, topic, n, 2);
        List<Long> offsets = new ArrayList<>();
        try (KafkaShareConsumer<String, String> c = consumer(bootstrap, topic, group, true)) {
            while (offsets.size() < 2) {
                for (ConsumerRecord<String, String> r : pollSome(c)) {
                    offsets.add(r.offset());
                    c.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                c.commitSync();
            }
        }
        if (!offsets.equals(List.of((long) n, (long) n + 1))) {
            throw new IllegalStateException("after the restart got offsets " + offsets + ", want " + n + " and " + (n + 1));
        }
        System.out.println("OK after the restart only the new records " + offsets);
    }

    static void join(String bootstrap, String topic, String group) throws Exception {
        try (KafkaShareConsumer<String, String> c = consumer(bootstrap, topic, group, true)) {
            expectNothing(c, Duration.ofSeconds(2), "an acknowledged record came back");
        }
        System.out.println("OK joined and left; nothing delivered");
    }

    /** Polls for d and throws what if a record arrives. */
    static void expectNothing(KafkaShareConsumer<String, String> c, Duration d, String what) {
        long end = System.nanoTime() + d.toNanos();
        while (System.nanoTime() < end) {
            ConsumerRecords<String, String> rs = c.poll(Duration.ofMillis(200));
            if (!rs.isEmpty()) {
                throw new IllegalStateException(what + ": offset " + rs.iterator().next().offset());
            }
        }
    }

    static void admin(String bootstrap, String topic, String group, int n) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = Admin.create(p)) {
            boolean listed = false;
            for (GroupListing g : admin.listGroups(ListGroupsOptions.forShareGroups()).all().get()) {
                if (g.groupId().equals(group)) {
                    if (g.type().orElse(null) != GroupType.SHARE || g.groupState().orElse(null) != GroupState.EMPTY) {
                        throw new IllegalStateException("listGroups: " + g);
                    }
                    listed = true;
                }
            }
            if (!listed) {
                throw new IllegalStateException("listGroups(forShareGroups) does not list " + group);
            }
            for (GroupListing g : admin.listGroups(ListGroupsOptions.forConsumerGroups()).all().get()) {
                if (g.groupId().equals(group)) {
                    throw new IllegalStateException("listGroups(forConsumerGroups) lists the share group: " + g);
                }
            }
            ShareGroupDescription d = admin.describeShareGroups(List.of(group)).describedGroups().get(group).get();
            if (d.groupState() != GroupState.EMPTY || !d.members().isEmpty()) {
                throw new IllegalStateException("describe: state " + d.groupState() + ", members " + d.members());
            }
            Map<TopicPartition, OffsetAndMetadata> offsets = list(admin, group);
            if (offsets.get(tp) == null || offsets.get(tp).offset() != n) {
                throw new IllegalStateException("listShareGroupOffsets: " + offsets + ", want " + n);
            }
            admin.alterShareGroupOffsets(group, Map.of(tp, 1L)).all().get();
            offsets = list(admin, group);
            if (offsets.get(tp) == null || offsets.get(tp).offset() != 1) {
                throw new IllegalStateException("after alterShareGroupOffsets: " + offsets + ", want 1");
            }
            admin.deleteShareGroupOffsets(group, Set.of(topic)).all().get();
            offsets = list(admin, group);
            if (offsets.get(tp) != null) {
                throw new IllegalStateException("after deleteShareGroupOffsets: " + offsets);
            }
            admin.deleteShareGroups(List.of(group)).all().get();
            for (GroupListing g : admin.listGroups(ListGroupsOptions.forShareGroups()).all().get()) {
                if (g.groupId().equals(group)) {
                    throw new IllegalStateException("deleteShareGroups: still listed " + g);
                }
            }
        }
        System.out.println("OK listGroups, describeShareGroups, listShareGroupOffsets (" + n + "), alter, delete, deleteShareGroups");
    }

    static void cluster(String bootstrap, String topic, String group, int n) throws Exception {
        Map<String, AtomicInteger> acked = new ConcurrentHashMap<>();
        // inDoubt: records whose acknowledgement failed and has not
        // succeeded since. A failed acknowledgement is in doubt, not
        // undone: when the broker that was writing it died, the write may
        // have landed (on the state partition's followers) though no
        // answer came back, and then the record is acknowledged for good
        // and never delivered again. Such records count only once the
        // group's durable state says every record is acknowledged.
        Set<String> inDoubt = ConcurrentHashMap.newKeySet();
        AtomicInteger done = new AtomicInteger(), failedAcks = new AtomicInteger(), redelivered = new AtomicInteger();
        AtomicBoolean complete = new AtomicBoolean();
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        together(3, me -> {
            Admin admin = null;
            long nextCheck = 0;
            try (KafkaShareConsumer<String, String> c = consumer(bootstrap, topic, group, true)) {
                while (done.get() < n && !complete.get() && System.nanoTime() < deadline) {
                    if (me == 0 && done.get() + inDoubt.size() >= n && System.nanoTime() >= nextCheck) {
                        if (admin == null) {
                            Properties p = new Properties();
                            p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
                            // Short: this consumer does not poll meanwhile.
                            p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "5000");
                            p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
                            admin = Admin.create(p);
                        }
                        nextCheck = System.nanoTime() + Duration.ofSeconds(1).toNanos();
                        try {
                            if (allAcknowledged(admin, group, topic, n)) {
                                complete.set(true);
                                break;
                            }
                        } catch (Exception e) {
                            // The group's coordinator may be the broker
                            // killed, not yet replaced: ask again later.
                        }
                    }
                    ConsumerRecords<String, String> rs = c.poll(Duration.ofMillis(200));
                    if (rs.isEmpty()) {
                        continue;
                    }
                    Map<TopicPartition, List<String>> values = new HashMap<>();
                    for (ConsumerRecord<String, String> r : rs) {
                        if (deliveries(r) > 1) {
                            redelivered.incrementAndGet();
                        }
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                        values.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), x -> new ArrayList<>()).add(r.value());
                    }
                    Map<TopicIdPartition, Optional<KafkaException>> results;
                    try {
                        results = c.commitSync(Duration.ofSeconds(15));
                    } catch (KafkaException e) {
                        failedAcks.addAndGet(rs.count());
                        values.values().forEach(vs -> doubt(vs, acked, inDoubt));
                        continue;
                    }
                    for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : results.entrySet()) {
                        List<String> vs = values.remove(e.getKey().topicPartition());
                        if (vs == null) {
                            continue;
                        }
                        if (e.getValue().isPresent()) {
                            failedAcks.addAndGet(vs.size());
                            doubt(vs, acked, inDoubt);
                            continue;
                        }
                        for (String v : vs) {
                            inDoubt.remove(v);
                            if (acked.computeIfAbsent(v, x -> new AtomicInteger()).incrementAndGet() == 1) {
                                if (done.incrementAndGet() % 100 == 0) {
                                    System.out.println("PROGRESS " + done.get());
                                    System.out.flush();
                                }
                            } else {
                                throw new IllegalStateException("record " + v + " acknowledged twice");
                            }
                        }
                    }
                    // Partitions the commit had no result for: their
                    // acknowledgements are not known to have landed.
                    values.values().forEach(vs -> {
                        failedAcks.addAndGet(vs.size());
                        doubt(vs, acked, inDoubt);
                    });
                }
            } finally {
                if (admin != null) {
                    admin.close();
                }
            }
        });
        if (done.get() == n) {
            complete.set(true);
        }
        List<String> missing = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (!acked.containsKey("r" + i) && !inDoubt.contains("r" + i)) {
                missing.add("r" + i);
            }
        }
        if (!missing.isEmpty()) {
            throw new IllegalStateException(missing.size() + " records never acknowledged, e.g. " + missing.subList(0, Math.min(10, missing.size())));
        }
        if (!complete.get()) {
            List<String> some = new ArrayList<>(inDoubt);
            throw new IllegalStateException(inDoubt.size() + " records whose acknowledgement failed were neither delivered again nor acknowledged in the group's state, e.g. "
                + some.subList(0, Math.min(10, some.size())));
        }
        System.out.println("OK cluster: " + n + " records acknowledged once each (" + inDoubt.size() + " of them by an acknowledgement that failed but landed); "
            + failedAcks.get() + " acknowledgements failed and " + redelivered.get() + " records were redelivered");
    }

    /** Marks records whose acknowledgement failed as in doubt (unless one of theirs succeeded before). */
    static void doubt(List<String> vs, Map<String, AtomicInteger> acked, Set<String> inDoubt) {
        for (String v : vs) {
            if (!acked.containsKey(v)) {
                inDoubt.add(v);
            }
        }
    }

    /**
     * Whether the group's durable state has every one of the n records of
     * topic acknowledged: the start offsets of its share partitions add up
     * to n (each is at most its partition's end, and the partitions hold
     * n records in all).
     */
    static boolean allAcknowledged(Admin admin, String group, String topic, int n) throws Exception {
        long sum = 0;
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : list(admin, group).entrySet()) {
            if (e.getKey().topic().equals(topic) && e.getValue() != null) {
                sum += e.getValue().offset();
            }
        }
        return sum == n;
    }

    static Map<TopicPartition, OffsetAndMetadata> list(Admin admin, String group) throws Exception {
        return admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec())).partitionsToOffsetAndMetadata(group).get();
    }
}
