package io.samsa.interop;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The interop matrix scenario for kafka-clients (Main's "matrix" command):
 * the same contract as interop/python/check.py. The runner has created
 * PREFIX-&lt;codec&gt;, PREFIX-idem and PREFIX-txn with 3 partitions. Record i: key
 * "key-i" when i is even, null when odd; value "value-i-" padded with
 * 'a'+(i+j)%26 to 100 bytes; headers seq=i, client=java, pad="x"*(i%3);
 * timestamp 1700000000000+i. Codec topics use the client's default
 * producer (idempotent since Kafka 3.0); PREFIX-idem sets it explicitly.
 * Prints "VERSION ..." and "RESULT feature PASS|FAIL|LIMIT detail" lines.
 */
final class Matrix {
    static final long TS0 = 1700000000000L;
    static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};
    static final int PARTITIONS = 3;
    static final String CLIENT = "java";

    static byte[] key(int i) {
        return i % 2 == 0 ? ("key-" + i).getBytes(StandardCharsets.UTF_8) : null;
    }

    static byte[] value(int i) {
        byte[] prefix = ("value-" + i + "-").getBytes(StandardCharsets.UTF_8);
        byte[] v = new byte[Math.max(100, prefix.length)];
        System.arraycopy(prefix, 0, v, 0, prefix.length);
        for (int j = prefix.length; j < v.length; j++) {
            v[j] = (byte) ('a' + (i + j) % 26);
        }
        return v;
    }

    static List<String[]> headers(int i) {
        return List.of(new String[] {"seq", Integer.toString(i)}, new String[] {"client", CLIENT},
                new String[] {"pad", "x".repeat(i % 3)});
    }

    static void result(String feature, String status, String detail) {
        String d = detail == null ? "" : detail.replaceAll("\\s+", " ");
        if (d.length() > 600) {
            d = d.substring(0, 600);
        }
        System.out.println("RESULT " + feature + " " + status + " " + d);
        System.out.flush();
    }

    static String err(Throwable e) {
        Throwable c = e;
        while (c.getCause() != null && (c instanceof java.util.concurrent.ExecutionException
                || c instanceof org.apache.kafka.common.KafkaException && c.getMessage() == null)) {
            c = c.getCause();
        }
        return c.getClass().getSimpleName() + ": " + c.getMessage();
    }

    static Map<Integer, long[]> produce(String bootstrap, String topic, int count, String codec, boolean explicitIdem)
            throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        if (explicitIdem) {
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
            p.put(ProducerConfig.ACKS_CONFIG, "all");
        }
        Map<Integer, long[]> where = new HashMap<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            List<Future<RecordMetadata>> acks = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, null, TS0 + i, key(i), value(i));
                for (String[] h : headers(i)) {
                    r.headers().add(h[0], h[1].getBytes(StandardCharsets.UTF_8));
                }
                acks.add(producer.send(r));
            }
            producer.flush();
            for (int i = 0; i < count; i++) {
                RecordMetadata md = acks.get(i).get();
                where.put(i, new long[] {md.partition(), md.offset()});
            }
        }
        return where;
    }

    static void run(String bootstrap, String prefix, int count) {
        System.out.println("VERSION kafka-clients " + org.apache.kafka.common.utils.AppInfoParser.getVersion());
        Map<String, Map<Integer, long[]>> placed = new HashMap<>();
        Map<String, Integer> counts = new LinkedHashMap<>();
        Map<String, String> produceErr = new HashMap<>();
        for (String codec : CODECS) {
            String topic = prefix + "-" + codec;
            try {
                placed.put(topic, produce(bootstrap, topic, count, codec, false));
                counts.put(topic, count);
            } catch (Exception e) {
                produceErr.put(codec, err(e));
            }
        }
        String idemTopic = prefix + "-idem";
        int idemCount = Math.max(count / 10, 1);
        try {
            placed.put(idemTopic, produce(bootstrap, idemTopic, idemCount, "none", true));
            counts.put(idemTopic, idemCount);
        } catch (Exception e) {
            produceErr.put("idem", err(e));
        }

        Map<String, Set<Integer>> seen = new HashMap<>();
        counts.keySet().forEach(t -> seen.put(t, new HashSet<>()));
        List<String[]> errors = new ArrayList<>(); // {feature, topic, message}
        boolean assigned = false;
        String commitErr = null, consumeErr = null;
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.GROUP_ID_CONFIG, prefix + "-group");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        if (!counts.isEmpty()) {
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
                consumer.subscribe(new ArrayList<>(counts.keySet()));
                long deadline = System.currentTimeMillis() + 90_000;
                while (!done(seen, counts) && System.currentTimeMillis() < deadline) {
                    ConsumerRecords<byte[], byte[]> recs = consumer.poll(Duration.ofMillis(500));
                    if (!consumer.assignment().isEmpty()) {
                        assigned = true;
                    }
                    for (ConsumerRecord<byte[], byte[]> r : recs) {
                        check(r, counts, seen, placed, errors);
                    }
                    if (!recs.isEmpty()) {
                        try {
                            consumer.commitSync();
                        } catch (Exception e) {
                            commitErr = commitErr == null ? err(e) : commitErr;
                        }
                    }
                }
                List<TopicPartition> tps = new ArrayList<>();
                for (String t : counts.keySet()) {
                    for (int q = 0; q < PARTITIONS; q++) {
                        tps.add(new TopicPartition(t, q));
                    }
                }
                Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
                Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(new HashSet<>(tps));
                List<String> bad = new ArrayList<>();
                for (TopicPartition tp : tps) {
                    OffsetAndMetadata c = committed.get(tp);
                    if (c == null || c.offset() != ends.get(tp)) {
                        bad.add(tp + " committed " + (c == null ? null : c.offset()) + " end " + ends.get(tp));
                    }
                }
                if (commitErr == null && !bad.isEmpty()) {
                    commitErr = String.join("; ", bad.subList(0, Math.min(5, bad.size())));
                }
            } catch (Exception e) {
                consumeErr = err(e);
            }
        }
        List<String> consumeErrs = new ArrayList<>();
        if (consumeErr != null) {
            consumeErrs.add(consumeErr);
        }
        errors.stream().filter(e -> e[0].equals("consume")).forEach(e -> consumeErrs.add(e[2]));
        for (Map.Entry<String, Integer> e : counts.entrySet()) {
            int missing = e.getValue() - seen.get(e.getKey()).size();
            if (missing > 0) {
                consumeErrs.add("missing " + missing + " records of " + e.getKey());
            }
        }
        result("produce", produceErr.containsKey("none") ? "FAIL" : "PASS",
                produceErr.getOrDefault("none", count + " records per codec, keyed and unkeyed, default (idempotent) producer"));
        if (counts.isEmpty()) {
            result("consume", "FAIL", "nothing was produced");
        } else if (!consumeErrs.isEmpty()) {
            result("consume", "FAIL", String.join("; ", consumeErrs.subList(0, Math.min(3, consumeErrs.size()))));
        } else {
            result("consume", "PASS", "key, value, headers, timestamp, offset of every record");
        }
        result("group", assigned ? "PASS" : "FAIL", assigned ? "" : String.valueOf(consumeErr));
        if (commitErr != null) {
            result("commit", "FAIL", commitErr);
        } else if (!counts.isEmpty() && consumeErr == null) {
            result("commit", "PASS", "committed offsets equal the partitions' ends");
        } else {
            result("commit", "FAIL", "not reached");
        }
        List<String> hdr = new ArrayList<>();
        errors.stream().filter(e -> e[0].equals("headers")).forEach(e -> hdr.add(e[2]));
        result("headers", hdr.isEmpty() && !counts.isEmpty() ? "PASS" : "FAIL",
                String.join("; ", hdr.subList(0, Math.min(2, hdr.size()))));
        for (String codec : CODECS) {
            String topic = prefix + "-" + codec;
            if (produceErr.containsKey(codec)) {
                result("codec:" + codec, "FAIL", "produce: " + produceErr.get(codec));
            } else if (!topicOK(topic, counts, seen, errors)) {
                result("codec:" + codec, "FAIL", topicErrs(topic, errors));
            } else {
                result("codec:" + codec, "PASS", "");
            }
        }
        if (produceErr.containsKey("idem")) {
            result("idempotence", "FAIL", produceErr.get("idem"));
        } else if (!topicOK(idemTopic, counts, seen, errors)) {
            result("idempotence", "FAIL", topicErrs(idemTopic, errors));
        } else {
            result("idempotence", "PASS", idemCount + " records, enable.idempotence=true (also the default for the codec topics)");
        }
        String a = admin(bootstrap, prefix + "-admin");
        result("admin", a == null ? "PASS" : "FAIL", a == null ? "create, describe, list, describe configs, delete" : a);
        int k = Math.max(count / 10, 1);
        String t = transactions(bootstrap, prefix + "-txn", k);
        result("transactions", t == null ? "PASS" : "FAIL", t == null
            ? "commit, abort, commit of " + k + " records each; read_committed read the committed ones" : t);
    }

    /**
     * The transactions scenario (e2e/interop/transactions.go): three
     * transactions of k records (records 0..3k-1), the middle one aborted
     * after a flush, then a read_committed consumer of every partition
     * must read exactly records [0,k) and [2k,3k). Returns null or what
     * went wrong.
     */
    static String transactions(String bootstrap, String topic, int k) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, topic + "-id");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            for (int t = 0; t < 3; t++) {
                producer.beginTransaction();
                for (int i = t * k; i < (t + 1) * k; i++) {
                    ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, null, TS0 + i, key(i), value(i));
                    for (String[] h : headers(i)) {
                        r.headers().add(h[0], h[1].getBytes(StandardCharsets.UTF_8));
                    }
                    producer.send(r);
                }
                producer.flush();
                if (t == 1) {
                    producer.abortTransaction();
                } else {
                    producer.commitTransaction();
                }
            }
        } catch (Exception e) {
            return "producer: " + err(e);
        }
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        Map<String, Integer> want = new HashMap<>();
        for (int i = 0; i < 3 * k; i++) {
            want.put(new String(value(i), StandardCharsets.UTF_8), i);
        }
        Set<Integer> seen = new HashSet<>();
        List<String> errs = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(cp)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < PARTITIONS; i++) {
                tps.add(new TopicPartition(topic, i));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.currentTimeMillis() + 60_000;
            int quiet = 0;
            while (quiet < 2 && System.currentTimeMillis() < deadline) {
                ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(500));
                if (rs.isEmpty() && seen.size() >= 2 * k) {
                    quiet++;
                }
                for (ConsumerRecord<byte[], byte[]> r : rs) {
                    Integer i = want.get(new String(r.value(), StandardCharsets.UTF_8));
                    if (i == null) {
                        errs.add("a record not sent at " + r.partition() + "/" + r.offset());
                    } else if (i / k == 1) {
                        errs.add("record " + i + " of the aborted transaction");
                    } else if (!seen.add(i)) {
                        errs.add("record " + i + " twice");
                    }
                }
            }
        } catch (Exception e) {
            return "read_committed consumer: " + err(e);
        }
        if (seen.size() != 2 * k) {
            errs.add(seen.size() + " of the " + 2 * k + " committed records read");
        }
        return errs.isEmpty() ? null : "read_committed: " + String.join("; ", errs.subList(0, Math.min(3, errs.size())));
    }

    static boolean done(Map<String, Set<Integer>> seen, Map<String, Integer> counts) {
        return counts.entrySet().stream().allMatch(e -> seen.get(e.getKey()).size() >= e.getValue());
    }

    static boolean topicOK(String t, Map<String, Integer> counts, Map<String, Set<Integer>> seen, List<String[]> errors) {
        return counts.containsKey(t) && seen.get(t).size() == counts.get(t)
                && errors.stream().noneMatch(e -> e[1].equals(t));
    }

    static String topicErrs(String t, List<String[]> errors) {
        List<String> s = new ArrayList<>();
        errors.stream().filter(e -> e[1].equals(t)).limit(2).forEach(e -> s.add(e[2]));
        return s.isEmpty() ? "records missing" : String.join("; ", s);
    }

    static void check(ConsumerRecord<byte[], byte[]> r, Map<String, Integer> counts, Map<String, Set<Integer>> seen,
            Map<String, Map<Integer, long[]>> placed, List<String[]> errors) {
        String t = r.topic();
        String at = t + "[" + r.partition() + "]@" + r.offset();
        List<String[]> got = new ArrayList<>();
        String seq = null;
        int seqs = 0;
        for (Header h : r.headers()) {
            String v = h.value() == null ? "" : new String(h.value(), StandardCharsets.UTF_8);
            got.add(new String[] {h.key(), v});
            if (h.key().equals("seq")) {
                seq = v;
                seqs++;
            }
        }
        if (seqs != 1) {
            add(errors, "headers", t, at + ": no single seq header");
            return;
        }
        int i;
        try {
            i = Integer.parseInt(seq);
        } catch (NumberFormatException e) {
            add(errors, "consume", t, at + ": bad seq " + seq);
            return;
        }
        if (!counts.containsKey(t) || i < 0 || i >= counts.get(t)) {
            add(errors, "consume", t, at + ": unexpected seq " + i);
            return;
        }
        if (!seen.get(t).add(i)) {
            add(errors, "consume", t, at + ": record " + i + " delivered twice");
            return;
        }
        List<String[]> want = headers(i);
        boolean hdrOK = got.size() == want.size();
        for (int k = 0; hdrOK && k < want.size(); k++) {
            hdrOK = Arrays.equals(got.get(k), want.get(k));
        }
        if (!hdrOK) {
            add(errors, "headers", t, at + ": record " + i + " wrong headers");
        }
        if (!Arrays.equals(r.key(), key(i))) {
            add(errors, "consume", t, at + ": record " + i + " wrong key");
        }
        if (!Arrays.equals(r.value(), value(i))) {
            add(errors, "consume", t, at + ": record " + i + " wrong value");
        }
        if (r.timestampType() != TimestampType.CREATE_TIME || r.timestamp() != TS0 + i) {
            add(errors, "consume", t, at + ": record " + i + " timestamp " + r.timestampType() + " " + r.timestamp());
        }
        long[] w = placed.getOrDefault(t, Map.of()).get(i);
        if (w != null && (w[0] != r.partition() || w[1] != r.offset())) {
            add(errors, "consume", t, at + ": record " + i + " was acknowledged at partition " + w[0] + " offset " + w[1]);
        }
    }

    static void add(List<String[]> errors, String feature, String topic, String msg) {
        if (errors.size() < 40) {
            errors.add(new String[] {feature, topic, msg});
        }
    }

    /**
     * Describes and lists a topic just created until both show it, for up to 15 s: in a cluster the brokers other
     * than the one that took CreateTopics learn of the topic from the controller a little later (as
     * Admin.createTopics documents), so a read may reach one that has not, and an application waits as this does.
     * Returns null when both show the topic with 2 partitions, else what the last try saw.
     */
    static String untilVisible(Admin admin, String topic) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (true) {
            String why;
            try {
                int n = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
                if (n != 2) {
                    why = "describeTopics: " + n + " partitions, want 2";
                } else if (!admin.listTopics().names().get().contains(topic)) {
                    why = "listTopics misses " + topic;
                } else {
                    return null;
                }
            } catch (java.util.concurrent.ExecutionException e) {
                if (!(e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException)) {
                    throw e;
                }
                why = "describeTopics: " + err(e);
            }
            if (System.nanoTime() > deadline) {
                return why;
            }
            Thread.sleep(100);
        }
    }

    static String admin(String bootstrap, String topic) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        String step = "createTopics";
        try (Admin admin = Admin.create(p)) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
            step = "describeTopics";
            String visible = untilVisible(admin, topic);
            if (visible != null) {
                return visible;
            }
            step = "describeConfigs";
            ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            Config c = admin.describeConfigs(List.of(res)).all().get().get(res);
            if (c.get("retention.ms") == null) {
                return "describeConfigs: no retention.ms";
            }
            step = "deleteTopics";
            admin.deleteTopics(List.of(topic)).all().get();
            return null;
        } catch (Exception e) {
            return step + ": " + err(e);
        }
    }
}
