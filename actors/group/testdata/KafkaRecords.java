// KafkaRecords checks samsa's __consumer_offsets records against Apache
// Kafka's own code (kafka-tools, kafka-group-coordinator jars), run by
// records_kafka_test.go with "java -cp <jars> KafkaRecords.java". It
//
//   1. prints records built with Kafka's generated classes (newest value
//      versions, a tagged field, a tombstone) as "E hexKey hexValue" lines;
//   2. reads lines "hexKey hexValue" (value "-" = tombstone) from stdin and
//      prints what kafka-console-consumer's OffsetsMessageFormatter and
//      GroupMetadataMessageFormatter print for each record, one line per
//      formatter that accepts it, prefixed "O " or "G ".
import java.io.*;
import java.nio.ByteBuffer;
import java.util.*;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.MessageFormatter;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.coordinator.group.generated.*;
import org.apache.kafka.tools.consumer.GroupMetadataMessageFormatter;
import org.apache.kafka.tools.consumer.OffsetsMessageFormatter;

public class KafkaRecords {
    public static void main(String[] args) throws Exception {
        encode();
        format();
    }

    static void format() throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        MessageFormatter offsets = new OffsetsMessageFormatter();
        MessageFormatter groups = new GroupMetadataMessageFormatter();
        String line;
        long n = 0;
        while ((line = in.readLine()) != null) {
            String[] kv = line.trim().split(" ");
            byte[] key = HexFormat.of().parseHex(kv[0]);
            byte[] value = kv[1].equals("-") ? null : HexFormat.of().parseHex(kv[1]);
            ConsumerRecord<byte[], byte[]> rec = new ConsumerRecord<>("__consumer_offsets", 0, n++, key, value);
            print("O ", offsets, rec);
            print("G ", groups, rec);
        }
    }

    static void print(String prefix, MessageFormatter f, ConsumerRecord<byte[], byte[]> rec) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        f.writeTo(rec, new PrintStream(out, true));
        String s = out.toString().trim();
        if (!s.isEmpty()) {
            System.out.println(prefix + s.replace("\n", " "));
        }
    }

    static void emit(short keyVersion, ApiMessage key, short valueVersion, ApiMessage value) {
        String k = HexFormat.of().formatHex(bytes(keyVersion, key));
        String v = value == null ? "-" : HexFormat.of().formatHex(bytes(valueVersion, value));
        System.out.println("E " + k + " " + v);
    }

    static byte[] bytes(short version, ApiMessage m) {
        ByteBuffer b = MessageUtil.toVersionPrefixedByteBuffer(version, m);
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    static void encode() {
        emit((short) 1, new OffsetCommitKey().setGroup("kgroup").setTopic("ktopic").setPartition(3),
             (short) 4, new OffsetCommitValue().setOffset(1234).setLeaderEpoch(7).setMetadata("kmeta")
                 .setCommitTimestamp(1111).setTopicId(Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAQ")));
        emit((short) 1, new OffsetCommitKey().setGroup("kgroup").setTopic("gone").setPartition(0), (short) 0, null);
        List<GroupMetadataValue.MemberMetadata> members = new ArrayList<>();
        members.add(new GroupMetadataValue.MemberMetadata().setMemberId("m-1").setGroupInstanceId("inst")
            .setClientId("cid").setClientHost("/10.0.0.1").setRebalanceTimeout(60000).setSessionTimeout(45000)
            .setSubscription(new byte[] {1, 2, 3}).setAssignment(new byte[] {4, 5}));
        members.add(new GroupMetadataValue.MemberMetadata().setMemberId("m-2").setClientId("cid2")
            .setClientHost("/10.0.0.2").setRebalanceTimeout(30000).setSessionTimeout(10000)
            .setSubscription(new byte[0]).setAssignment(new byte[0]));
        emit((short) 2, new GroupMetadataKey().setGroup("kgroup"),
             (short) 4, new GroupMetadataValue().setProtocolType("consumer").setGeneration(9)
                 .setProtocol("range").setLeader("m-1").setCurrentStateTimestamp(2222).setMembers(members));
        emit((short) 2, new GroupMetadataKey().setGroup("kgroup"),
             (short) 3, new GroupMetadataValue().setProtocolType("consumer").setGeneration(10)
                 .setProtocol(null).setLeader(null).setCurrentStateTimestamp(3333).setMembers(new ArrayList<>()));
    }
}
