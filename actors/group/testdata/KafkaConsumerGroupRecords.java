// KafkaConsumerGroupRecords checks samsa's KIP-848 consumer group records
// in __consumer_offsets against Apache Kafka's own code (the
// kafka-group-coordinator jar's GroupCoordinatorRecordSerde and generated
// JSON converters), run by consumer_records_kafka_test.go with
// "java -cp <jars> KafkaConsumerGroupRecords.java". It
//
//   1. prints records of every consumer group type (3-8) built with
//      Kafka's generated classes, and a tombstone, as "E hexKey hexValue"
//      lines (value "-" = tombstone);
//   2. reads lines "hexKey hexValue" from stdin, decodes each with Kafka's
//      serde and prints "D <key json>\t<value json or null>".
import java.io.*;
import java.nio.ByteBuffer;
import java.util.*;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde;
import org.apache.kafka.coordinator.group.generated.*;
import org.apache.kafka.server.common.ApiMessageAndVersion;

public class KafkaConsumerGroupRecords {
    static final GroupCoordinatorRecordSerde SERDE = new GroupCoordinatorRecordSerde();
    static final Uuid TOPIC = Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAQ");

    public static void main(String[] args) throws Exception {
        encode();
        decode();
    }

    static void emit(CoordinatorRecord r) {
        String k = HexFormat.of().formatHex(SERDE.serializeKey(r));
        byte[] v = SERDE.serializeValue(r);
        System.out.println("E " + k + " " + (v == null ? "-" : HexFormat.of().formatHex(v)));
    }

    static CoordinatorRecord rec(org.apache.kafka.common.protocol.ApiMessage key, org.apache.kafka.common.protocol.ApiMessage value) {
        return CoordinatorRecord.record(key, new ApiMessageAndVersion(value, (short) 0));
    }

    static void encode() {
        String g = "kgroup";
        emit(rec(new ConsumerGroupMemberMetadataKey().setGroupId(g).setMemberId("km-1"),
            new ConsumerGroupMemberMetadataValue().setInstanceId("kinst").setRackId(null).setClientId("kclient")
                .setClientHost("/10.0.0.9").setSubscribedTopicNames(List.of("ktopic")).setSubscribedTopicRegex(null)
                .setRebalanceTimeoutMs(30000).setServerAssignor("range")));
        emit(rec(new ConsumerGroupPartitionMetadataKey().setGroupId(g),
            new ConsumerGroupPartitionMetadataValue().setTopics(List.of(new ConsumerGroupPartitionMetadataValue.TopicMetadata()
                .setTopicId(TOPIC).setTopicName("ktopic").setNumPartitions(3)))));
        emit(rec(new ConsumerGroupMetadataKey().setGroupId(g), new ConsumerGroupMetadataValue().setEpoch(7).setMetadataHash(42)));
        emit(rec(new ConsumerGroupTargetAssignmentMemberKey().setGroupId(g).setMemberId("km-1"),
            new ConsumerGroupTargetAssignmentMemberValue().setTopicPartitions(List.of(
                new ConsumerGroupTargetAssignmentMemberValue.TopicPartition().setTopicId(TOPIC).setPartitions(List.of(0, 1, 2))))));
        emit(rec(new ConsumerGroupTargetAssignmentMetadataKey().setGroupId(g),
            new ConsumerGroupTargetAssignmentMetadataValue().setAssignmentEpoch(7)));
        emit(rec(new ConsumerGroupCurrentMemberAssignmentKey().setGroupId(g).setMemberId("km-1"),
            new ConsumerGroupCurrentMemberAssignmentValue().setMemberEpoch(7).setPreviousMemberEpoch(6).setState((byte) 2)
                .setAssignedPartitions(List.of(new ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions()
                    .setTopicId(TOPIC).setPartitions(List.of(0, 2))))
                .setPartitionsPendingRevocation(List.of())));
        emit(CoordinatorRecord.tombstone(new ConsumerGroupMemberMetadataKey().setGroupId(g).setMemberId("gone")));
    }

    static void decode() throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] kv = line.trim().split(" ");
            ByteBuffer key = ByteBuffer.wrap(HexFormat.of().parseHex(kv[0]));
            ByteBuffer value = kv[1].equals("-") ? null : ByteBuffer.wrap(HexFormat.of().parseHex(kv[1]));
            CoordinatorRecord r = SERDE.deserialize(key, value);
            String v = r.value() == null ? "null"
                : CoordinatorRecordJsonConverters.writeRecordValueAsJson(r.value().message(), r.value().version()).toString();
            System.out.println("D " + CoordinatorRecordJsonConverters.writeRecordKeyAsJson(r.key()) + "\t" + v);
        }
    }
}
