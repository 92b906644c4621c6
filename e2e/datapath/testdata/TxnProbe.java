import java.util.Properties;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A Java transactional producer against samsa (run as a single source
 * file on the interop harness's classpath): initTransactions must fail
 * with a fatal error at once, not wait for a transaction coordinator.
 * Prints "FAILED <exception class>: <message>" when it fails, "OK" if the
 * broker accepted the transactional id.
 *
 * Usage: TxnProbe BOOTSTRAP TRANSACTIONAL_ID
 */
public final class TxnProbe {
    public static void main(String[] args) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, args[1]);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            System.out.println("OK");
        } catch (Exception e) {
            System.out.println("FAILED " + e.getClass().getName() + ": " + e.getMessage());
        }
    }
}
