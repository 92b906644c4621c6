package io.samsa.interop;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * kafka-clients over SASL_SSL: TLS trusting a CA given as a PEM file
 * (KIP-651's PEM truststore), then SCRAM.
 *
 * Usage:
 *   sasl-ssl BOOTSTRAP TOPIC COUNT CA_PEM MECHANISM USER PASSWORD
 *     the interop matrix's sasl_ssl step: produce COUNT records
 *     "sasl-i", consume them back in group TOPIC-g and commit; prints
 *     "RESULT sasl_ssl PASS|FAIL detail".
 *   sasl-ssl-acl BOOTSTRAP ALLOWED DENIED COUNT GROUP CA_PEM MECHANISM USER PASSWORD
 *     the scenario under ACLs: the sasl-ssl round trip on
 *     ALLOWED in GROUP, then producing to DENIED must fail with
 *     TopicAuthorizationException and logging in with a wrong password
 *     with SaslAuthenticationException; prints "OK ..." or exits non-zero.
 */
final class SaslSsl {
    private SaslSsl() {}

    static Properties props(String bootstrap, String ca, String mech, String user, String pass) {
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_SSL");
        p.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
        p.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, ca);
        p.put(SaslConfigs.SASL_MECHANISM, mech);
        p.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
                + user + "\" password=\"" + pass + "\";");
        return p;
    }

    static KafkaProducer<byte[], byte[]> producer(Properties base) {
        Properties p = new Properties();
        p.putAll(base);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    /** Produces "sasl-0".."sasl-(n-1)" to topic and reads them back in group, committing. */
    static void roundTrip(Properties base, String topic, String group, int n) throws Exception {
        try (KafkaProducer<byte[], byte[]> prod = producer(base)) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                sent.add(prod.send(new ProducerRecord<>(topic, ("sasl-" + i).getBytes(StandardCharsets.UTF_8))));
            }
            for (var f : sent) {
                f.get();
            }
        }
        Properties c = new Properties();
        c.putAll(base);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        List<String> got = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> cons = new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            cons.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + 60_000;
            while (got.size() < n && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : cons.poll(Duration.ofMillis(500))) {
                    got.add(new String(r.value(), StandardCharsets.UTF_8));
                }
            }
            cons.commitSync();
        }
        List<String> want = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            want.add("sasl-" + i);
        }
        Collections.sort(got);
        Collections.sort(want);
        if (!got.equals(want)) {
            throw new IllegalStateException("read " + got.size() + " records, want the " + n + " sent");
        }
    }

    /** The matrix step; a failure is a FAIL result, not an exit status. */
    static void matrix(String[] a) {
        int n = Integer.parseInt(a[3]);
        try {
            roundTrip(props(a[1], a[4], a[5], a[6], a[7]), a[2], a[2] + "-g", n);
            System.out.println("RESULT sasl_ssl PASS " + a[5] + " over TLS trusting the run's CA (PEM truststore), "
                    + n + " records produced and consumed in a group (committed)");
        } catch (Exception e) {
            System.out.println("RESULT sasl_ssl FAIL " + String.valueOf(e).replace('\n', ' '));
        }
    }

    /** The scenario under ACLs. */
    static void acl(String[] a) throws Exception {
        String bootstrap = a[1], allowed = a[2], denied = a[3], group = a[5], ca = a[6], mech = a[7], user = a[8], pass = a[9];
        int n = Integer.parseInt(a[4]);
        Properties base = props(bootstrap, ca, mech, user, pass);
        roundTrip(base, allowed, group, n);

        try (KafkaProducer<byte[], byte[]> prod = producer(base)) {
            prod.send(new ProducerRecord<>(denied, "x".getBytes(StandardCharsets.UTF_8))).get();
            throw new IllegalStateException("producing to " + denied + " succeeded; want TopicAuthorizationException");
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicAuthorizationException)) {
                throw new IllegalStateException("producing to " + denied + ": " + e.getCause() + "; want TopicAuthorizationException");
            }
        } catch (TopicAuthorizationException e) {
            // send itself may throw it, from the metadata wait
        }

        try (KafkaProducer<byte[], byte[]> prod = producer(props(bootstrap, ca, mech, user, pass + "-wrong"))) {
            prod.send(new ProducerRecord<>(allowed, "x".getBytes(StandardCharsets.UTF_8))).get();
            throw new IllegalStateException("a wrong password produced; want SaslAuthenticationException");
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof SaslAuthenticationException)) {
                throw new IllegalStateException("wrong password: " + e.getCause() + "; want SaslAuthenticationException");
            }
        } catch (SaslAuthenticationException e) {
            // from the metadata wait in send
        }
        System.out.println("OK " + n + " records produced and consumed in group " + group + " on " + allowed
                + "; " + denied + ": TopicAuthorizationException; wrong password: SaslAuthenticationException");
    }
}
