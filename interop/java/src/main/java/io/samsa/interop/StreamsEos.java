package io.samsa.interop;

import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Produced;

/**
 * A Kafka Streams application with processing.guarantee=exactly_once_v2,
 * for the test that kills the broker under it.
 *
 * Usage: streams-eos BOOTSTRAP APPLICATION_ID IN OUT COUNTS STATE_DIR
 *
 * Every record of IN (String key and value) goes to OUT with its value
 * suffixed "|done" (stateless: each input must appear in OUT exactly
 * once), and its key is counted (a state store with its changelog): COUNTS
 * gets the key's running count, so once IN is consumed the last COUNTS
 * record of each key is the number of IN records with it. Both outputs,
 * the changelog and the input offsets commit in one transaction per
 * commit interval.
 *
 * The application runs until SIGTERM (it then closes cleanly). It prints
 * each state change ("STATE RUNNING", ...) and a stream thread's uncaught
 * error (the thread is then replaced, as an operator would configure it)
 * to stdout.
 */
final class StreamsEos {
    private StreamsEos() {}

    static void run(String[] args) throws Exception {
        String bootstrap = args[1], appID = args[2], in = args[3], out = args[4], counts = args[5], stateDir = args[6];
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appID);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "2");
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, System.getProperty("samsa.rf", "1"));
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        // The broker is down for some seconds: clients keep retrying
        // rather than give a task up.
        p.put(StreamsConfig.producerPrefix(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG), "300000");
        p.put(StreamsConfig.producerPrefix(ProducerConfig.MAX_BLOCK_MS_CONFIG), "300000");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        // A killed instance's members leave the group after 10 s rather
        // than 45, so its replacement gets the tasks sooner.
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), "10000");

        StreamsBuilder b = new StreamsBuilder();
        KStream<String, String> s = b.stream(in, Consumed.with(Serdes.String(), Serdes.String()));
        s.mapValues(v -> v + "|done").to(out, Produced.with(Serdes.String(), Serdes.String()));
        s.groupByKey().count().toStream().mapValues(n -> Long.toString(n))
            .to(counts, Produced.with(Serdes.String(), Serdes.String()));

        KafkaStreams streams = new KafkaStreams(b.build(), p);
        streams.setStateListener((now, before) -> System.out.println("STATE " + now + " (was " + before + ")"));
        streams.setUncaughtExceptionHandler(e -> {
            System.out.println("UNCAUGHT " + e);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
        });
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close();
            stopped.countDown();
        }));
        streams.start();
        stopped.await();
    }
}
