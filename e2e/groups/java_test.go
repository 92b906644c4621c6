package groups

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/testkit"
)

// kafkaJars is the classpath of Apache Kafka's own jars that the Java
// interop harness pulls in (interop/java, built by testkit.InteropJava
// when it is not yet).
func kafkaJars(t *testing.T) string {
	t.Helper()
	testkit.InteropJava(t) // builds interop/java if need be
	dir, err := filepath.Abs("../../interop/java")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "target", "lib", "*")
}

// kafkaToolsSetup is what a test running Kafka's tools on a group needs:
// their classpath, the shared broker, a topic and a group name. Skipped
// with -short (each tool is a JVM start).
func kafkaToolsSetup(t *testing.T) (cp string, b *testkit.BrokerProcess, topic, group string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts JVMs")
	}
	return kafkaJars(t), sharedBroker(t), name(t, "t"), name(t, "g")
}

// consumeAndCommit makes topic (partitions partitions), produces 20
// records, consumes them in group with a franz-go member (opts added)
// and commits; the member stays in the group until closed.
func consumeAndCommit(t *testing.T, addr, topic, group string, partitions int32, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	createTopic(t, addr, topic, partitions)
	produce(t, addr, topic, 0, 20)
	cl := client(t, addr, append([]kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit()}, opts...)...)
	for got := 0; got < 20; {
		fs := cl.PollFetches(deadline(t, 10*time.Second))
		if fs.IsClientClosed() {
			t.Fatal("client closed")
		}
		got += fs.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(deadline(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	return cl
}

func runKafkaTool(t *testing.T, cp string, class string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", append([]string{"-cp", cp, class}, args...)...)
	cmd.Env = append(os.Environ(), "KAFKA_HEAP_OPTS=-Xmx256m")
	began := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("%s took %v", class[strings.LastIndex(class, ".")+1:], time.Since(began).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", class, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Apache Kafka's kafka-consumer-groups (ConsumerGroupCommand) describes a
// samsa group, and Kafka's own record formatters read what samsa wrote to
// __consumer_offsets.
func TestKafkaToolsReadGroups(t *testing.T) {
	cp, b, topic, groupID := kafkaToolsSetup(t)
	consumeAndCommit(t, b.Addr(), topic, groupID, 1).Close()
	t.Logf("consumed and committed 20 records")

	out := runKafkaTool(t, cp, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
		"--bootstrap-server", b.Addr(), "--describe", "--group", groupID)
	found := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && f[0] == groupID && f[1] == topic {
			found = true
			if f[2] != "0" || f[3] != "20" || f[4] != "20" || f[5] != "0" {
				t.Errorf("kafka-consumer-groups row %q, want partition 0 at 20 of 20, lag 0", line)
			}
		}
	}
	if !found {
		t.Errorf("kafka-consumer-groups --describe shows no row for %s/%s:\n%s", groupID, topic, out)
	}

	// Kafka's formatters decode every record of ours they are given;
	// one that did not parse would end the tool with an exception.
	part := group.PartitionFor(groupID, 50)
	ends, err := admin(t, b.Addr()).ListEndOffsets(deadline(t, 10*time.Second), "__consumer_offsets")
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup("__consumer_offsets", part)
	if end.Offset <= 0 {
		t.Fatalf("__consumer_offsets-%d is empty (%+v)", part, end)
	}
	for _, f := range []struct{ class, want string }{
		{"org.apache.kafka.tools.consumer.OffsetsMessageFormatter", `"group":"` + groupID + `","topic":"` + topic + `","partition":0}},"value":{"version":3,"data":{"offset":20`},
		{"org.apache.kafka.tools.consumer.GroupMetadataMessageFormatter", `"group":"` + groupID + `"`},
	} {
		// Read the group's own partition without a group of its own, so
		// the tool's join cannot eat its timeout.
		out := runKafkaTool(t, cp, "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", b.Addr(),
			"--topic", "__consumer_offsets", "--partition", strconv.Itoa(int(part)), "--offset", "earliest",
			"--max-messages", strconv.FormatInt(end.Offset, 10), "--formatter", f.class, "--timeout-ms", "30000")
		if !strings.Contains(out, f.want) || strings.Contains(out, "Exception") {
			t.Errorf("%s output lacks %s or reports an exception:\n%s", f.class, f.want, out)
		}
	}
}
