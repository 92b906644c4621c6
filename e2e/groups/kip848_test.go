package groups

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// kip848Args make consumer group (KIP-848) members quick to reconcile and
// quick to fence: heartbeats every half second, fenced after six seconds
// of silence.
var kip848Args = append([]string{"--group.consumer.heartbeat.interval.ms", "500",
	"--group.consumer.session.timeout.ms", "6000"}, fastGroups...)

// interopJava is the classpath of interop/java's harness and Kafka's
// jars, built first if need be.
func interopJava(t *testing.T) string {
	t.Helper()
	return testkit.InteropJava(t)
}

// librdkafkaPython is the interpreter of interop/python's venv with
// confluent-kafka (librdkafka 2.10+ speaks the consumer protocol), made
// first if need be.
func librdkafkaPython(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	return testkit.InteropPython(ctx, t)
}

// memberProcess is one group member process (interop/java's GroupMember
// or interop/python's group_member.py); every value it prints (after
// committing it) goes into the tally.
type memberProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{} // closed when its output ends
}

func startJavaMember(t *testing.T, cp, addr, topic, group, protocol string, c *tally) *memberProcess {
	t.Helper()
	return startMemberProcess(t, c, "java", "-Xmx128m", "-cp", cp, "io.samsa.interop.Main", "group-member", addr, topic, group, protocol)
}

func startLibrdkafkaMember(t *testing.T, py, addr, topic, group, protocol string, c *tally) *memberProcess {
	t.Helper()
	script, err := filepath.Abs("../../interop/python/group_member.py")
	if err != nil {
		t.Fatal(err)
	}
	return startMemberProcess(t, c, py, script, addr, topic, group, protocol)
}

func startMemberProcess(t *testing.T, c *tally, argv ...string) *memberProcess {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	// The output pipe closes when the process has exited (Wait below),
	// which ends the reader.
	pr, pw := io.Pipe()
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = pw, &stderr
	stdin, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		t.Fatal(err)
	}
	go func() { pw.CloseWithError(cmd.Wait()) }()
	m := &memberProcess{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for sc := bufio.NewScanner(pr); sc.Scan(); {
			if v, ok := strings.CutPrefix(sc.Text(), "R "); ok {
				c.add(v)
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-m.done
		if t.Failed() {
			t.Logf("member %s (pid %d) stderr:\n%s", filepath.Base(argv[0]), cmd.Process.Pid, stderr.String())
		}
	})
	return m
}

// leave closes the member's stdin: it leaves the group and exits.
func (m *memberProcess) leave(t *testing.T) {
	t.Helper()
	_ = m.stdin.Close()
	select {
	case <-m.done:
	case <-time.After(60 * time.Second):
		t.Fatal("member did not leave")
	}
}

// waitConsumerGroup polls ConsumerGroupDescribe until ok accepts the group.
func waitConsumerGroup(t *testing.T, adm *kadm.Client, group string, d time.Duration, ok func(kadm.DescribedConsumerGroup) bool) kadm.DescribedConsumerGroup {
	t.Helper()
	var g kadm.DescribedConsumerGroup
	deadlineC := time.After(d)
	for {
		if ds, err := adm.DescribeConsumerGroups(deadline(t, 10*time.Second), group); err == nil {
			if g = ds[group]; ok(g) {
				return g
			}
		}
		select {
		case <-deadlineC:
			t.Fatalf("consumer group %s never got there: state %q, %d members", group, g.State, len(g.Members))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// reconciledWith accepts a Stable consumer group of n members that
// together own every one of topic's partitions.
func reconciledWith(topic string, n, partitions int) func(kadm.DescribedConsumerGroup) bool {
	return func(g kadm.DescribedConsumerGroup) bool {
		return testkit.ConsumerGroupReconciled(g, topic, n, partitions)
	}
}

// Java's KafkaConsumer with group.protocol=consumer (Kafka 4.1 clients):
// members join one at a time and in a burst, leave, and one is killed
// with SIGKILL; the broker fences it after group.consumer.session.timeout.ms
// and the others take its partitions over. Each member commits before it
// reports a record, so every record is reported exactly once.
func TestJavaConsumerProtocolMembersComeAndGo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four JVMs")
	}
	cp := interopJava(t)
	membersComeAndGo(t, func(_ int, addr, topic, group string, c *tally) *memberProcess {
		return startJavaMember(t, cp, addr, topic, group, "consumer", c)
	})
}

// The same with librdkafka (confluent-kafka 2.16, group.protocol=consumer)
// and Java members in one group: the SIGKILLed member is a librdkafka one.
func TestLibrdkafkaConsumerProtocolWithJava(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM and three Python processes")
	}
	cp := interopJava(t)
	py := librdkafkaPython(t)
	membersComeAndGo(t, func(i int, addr, topic, group string, c *tally) *memberProcess {
		if i == 2 {
			return startJavaMember(t, cp, addr, topic, group, "consumer", c)
		}
		return startLibrdkafkaMember(t, py, addr, topic, group, "consumer", c)
	})
}

// kip848Parts is the partition count of the topic the KIP-848 scenarios share.
const kip848Parts = 6

// kip848Setup starts a broker with kip848Args and makes a topic of kip848Parts
// partitions, a group name and a tally for one scenario.
func kip848Setup(t *testing.T) (b *testkit.BrokerProcess, topic, group string, adm *kadm.Client, c *tally) {
	t.Helper()
	b = testkit.StartBroker(t, testkit.BrokerConfig{Args: kip848Args})
	topic, group = name(t, "t"), name(t, "g")
	createTopic(t, b.Addr(), topic, kip848Parts)
	return b, topic, group, admin(t, b.Addr()), newTally()
}

// membersComeAndGo is the scenario: member 0 consumes alone, members 1
// and 2 join together, member 0 leaves, member 3 joins, member 1 is
// SIGKILLed while the group is idle (everything produced so far is
// consumed and committed) and fenced after its session; 800 records, each
// reported once.
func membersComeAndGo(t *testing.T, start func(i int, addr, topic, group string, c *tally) *memberProcess) {
	b, topic, group, adm, c := kip848Setup(t)
	began := time.Now()
	member := func(i int) *memberProcess { return start(i, b.Addr(), topic, group, c) }

	produce(t, b.Addr(), topic, 0, 200)
	m0 := member(0)
	c.waitDistinct(t, 200, 60*time.Second)
	t.Logf("one member consumed the first 200 after %v", time.Since(began))

	m1 := member(1)
	member(2)
	waitConsumerGroup(t, adm, group, 60*time.Second, reconciledWith(topic, 3, kip848Parts))
	produce(t, b.Addr(), topic, 200, 200)
	c.waitDistinct(t, 400, 60*time.Second)
	t.Logf("three members after a burst of two; 400 consumed after %v", time.Since(began))

	m0.leave(t)
	waitConsumerGroup(t, adm, group, 60*time.Second, reconciledWith(topic, 2, kip848Parts))
	member(3)
	waitConsumerGroup(t, adm, group, 60*time.Second, reconciledWith(topic, 3, kip848Parts))
	produce(t, b.Addr(), topic, 400, 200)
	c.waitDistinct(t, 600, 60*time.Second)
	t.Logf("one left, one joined; 600 consumed after %v", time.Since(began))

	// Killed without leaving: the broker still counts it, and its
	// partitions wait, until its session runs out.
	if err := m1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	produce(t, b.Addr(), topic, 600, 200)
	g := waitConsumerGroup(t, adm, group, 10*time.Second, func(g kadm.DescribedConsumerGroup) bool { return g.Err == nil })
	if time.Since(killed) < 5*time.Second && len(g.Members) != 3 {
		t.Errorf("the killed member was gone %v after the kill, before its 6 s session ended", time.Since(killed))
	}
	waitConsumerGroup(t, adm, group, 60*time.Second, reconciledWith(topic, 2, kip848Parts))
	t.Logf("the killed member was fenced %v after SIGKILL", time.Since(killed).Round(100*time.Millisecond))
	c.waitDistinct(t, 800, 60*time.Second)
	c.check(t, 800, true)

	offs, err := adm.FetchOffsets(deadline(t, 10*time.Second), group)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	offs.Each(func(o kadm.OffsetResponse) { sum += o.At })
	if sum != 800 {
		t.Errorf("committed offsets add up to %d, want 800", sum)
	}
}

// Kafka 4's online upgrade with Java clients: two classic members
// (group.protocol=classic, the default range assignor: eager) consume as
// a classic group; a member with group.protocol=consumer joins and the
// group becomes a consumer group in which the classic members stay,
// reconciling through rejoins; a classic member leaves, a second consumer
// member joins, the other classic member is SIGKILLed and fenced after
// its own session timeout; a classic member joins and both consumer
// members leave, and the group is classic again (Kafka's downgrade). Every
// record is reported exactly once.
func TestJavaClassicToConsumerUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four JVMs")
	}
	cp := interopJava(t)
	b, topic, group, adm, c := kip848Setup(t)
	member := func(protocol string) *memberProcess {
		return startJavaMember(t, cp, b.Addr(), topic, group, protocol, c)
	}

	produce(t, b.Addr(), topic, 0, 200)
	classic0, classic1 := member("classic"), member("classic")
	waitGroup(t, adm, group, 60*time.Second, stableWith(topic, 2, kip848Parts))
	c.waitDistinct(t, 200, 60*time.Second)

	consumer0 := member("consumer")
	waitConsumerGroup(t, adm, group, 60*time.Second, reconciledWith(topic, 3, kip848Parts))
	produce(t, b.Addr(), topic, 200, 200)
	c.waitDistinct(t, 400, 60*time.Second)
	t.Logf("upgraded: two classic members and a consumer one share the topic")

	classic0.leave(t)
	waitConsumerGroup(t, adm, group, 60*time.Second, reconciledWith(topic, 2, kip848Parts))
	consumer1 := member("consumer")
	waitConsumerGroup(t, adm, group, 60*time.Second, reconciledWith(topic, 3, kip848Parts))
	produce(t, b.Addr(), topic, 400, 200)
	c.waitDistinct(t, 600, 60*time.Second)

	if err := classic1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	produce(t, b.Addr(), topic, 600, 200)
	waitConsumerGroup(t, adm, group, 60*time.Second, reconciledWith(topic, 2, kip848Parts))
	t.Logf("the killed classic member was fenced %v after SIGKILL", time.Since(killed).Round(100*time.Millisecond))
	c.waitDistinct(t, 800, 60*time.Second)

	// Downgrade: a classic member joins, the consumer members leave, and
	// the group is a classic one again.
	member("classic")
	waitConsumerGroup(t, adm, group, 60*time.Second, reconciledWith(topic, 3, kip848Parts))
	consumer0.leave(t)
	consumer1.leave(t)
	waitGroup(t, adm, group, 60*time.Second, stableWith(topic, 1, kip848Parts))
	produce(t, b.Addr(), topic, 800, 200)
	c.waitDistinct(t, 1000, 60*time.Second)
	c.check(t, 1000, true)
}

// Apache Kafka 4.1's kafka-consumer-groups describes a live KIP-848 group
// (its members through ConsumerGroupDescribe, its offsets and lag) and
// lists it by type.
func TestKafkaToolsDescribeConsumerGroup(t *testing.T) {
	cp, b, topic, groupID := kafkaToolsSetup(t)
	consumeAndCommit(t, b.Addr(), topic, groupID, 2,
		kgo.ServerSideBalancer(), kgo.Balancers(kgo.StickyBalancer()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	const tool = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
	out := runKafkaTool(t, cp, tool, "--bootstrap-server", b.Addr(), "--describe", "--group", groupID)
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 7 && f[0] == groupID && f[1] == topic {
			rows++
			if f[5] != "0" || f[6] == "-" {
				t.Errorf("kafka-consumer-groups row %q: want lag 0 and the member's id", line)
			}
		}
	}
	if rows != 2 {
		t.Errorf("kafka-consumer-groups --describe shows %d rows for %s, want 2:\n%s", rows, topic, out)
	}
	out = runKafkaTool(t, cp, tool, "--bootstrap-server", b.Addr(), "--list", "--type", "consumer")
	if !strings.Contains(out, groupID) {
		t.Errorf("kafka-consumer-groups --list --type consumer lacks %s:\n%s", groupID, out)
	}
	out = runKafkaTool(t, cp, tool, "--bootstrap-server", b.Addr(), "--describe", "--members", "--group", groupID)
	members := 0
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 5 && f[0] == groupID && slices.Contains(f, "kgo") {
			members++
		}
	}
	if members != 1 {
		t.Errorf("kafka-consumer-groups --describe --members shows %d franz-go members, want 1:\n%s", members, out)
	}
}

// `samsa group describe` shows a live KIP-848 group (state, member,
// assignment, lag) through ConsumerGroupDescribe, and reset-offsets
// refuses it while it has members.
func TestSamsaGroupCommandConsumerGroup(t *testing.T) {
	b := sharedBroker(t)
	topic, group := name(t, "t"), name(t, "g")
	consumeAndCommit(t, b.Addr(), topic, group, 2,
		kgo.ServerSideBalancer(), kgo.Balancers(kgo.StickyBalancer()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	d := describeJSON(t, b.Addr(), group)
	if d.State != "Stable" || len(d.Members) != 1 || len(d.Members[0].Assignment) != 1 || len(d.Members[0].Assignment[0].Partitions) != 2 || d.TotalLag != 0 {
		t.Fatalf("samsa group describe of a consumer group: %+v", d)
	}
	bin, err := testkit.SamsaBinary()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "group", "reset-offsets", group, "--to-earliest", "--execute", "--bootstrap-server", b.Addr()).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "stop its consumers first") {
		t.Fatalf("reset-offsets of a live consumer group: %v\n%s", err, out)
	}
}

// Java's SubscriptionPattern (group.protocol=consumer): the broker
// resolves the RE2 regex against the topics, including one created while
// the member runs, and the member asks for the assigned topics' names by
// topic id (Metadata v12 with an empty name).
func TestJavaServerSideRegexSubscription(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM")
	}
	cp := interopJava(t)
	b := testkit.StartBroker(t, testkit.BrokerConfig{Args: kip848Args})
	prefix, group := name(t, "re"), name(t, "g")
	adm := admin(t, b.Addr())
	c := newTally()
	createTopic(t, b.Addr(), prefix+"-a", 2)
	createTopic(t, b.Addr(), prefix+"-b", 3)
	createTopic(t, b.Addr(), name(t, "other"), 1) // does not match
	produce(t, b.Addr(), prefix+"-a", 0, 100)
	produce(t, b.Addr(), prefix+"-b", 100, 100)
	startJavaMember(t, cp, b.Addr(), "re2:"+prefix+"-.*", group, "consumer", c)
	c.waitDistinct(t, 200, 60*time.Second)

	createTopic(t, b.Addr(), prefix+"-c", 1)
	produce(t, b.Addr(), prefix+"-c", 200, 100)
	c.waitDistinct(t, 300, 60*time.Second)
	c.check(t, 300, true)
	g := waitConsumerGroup(t, adm, group, 30*time.Second, func(g kadm.DescribedConsumerGroup) bool {
		return g.Err == nil && len(g.Members) == 1 && len(g.Members[0].Assignment) == 3
	})
	if r := g.Members[0].SubscribedTopicRegex; r == nil || *r != prefix+"-.*" {
		t.Errorf("the member's regex as ConsumerGroupDescribe shows it: %v", r)
	}
}

// cgHeartbeat sends one ConsumerGroupHeartbeat (v1) through franz-go's
// client: a join when epoch is 0.
func cgHeartbeat(t *testing.T, cl *kgo.Client, group, member, topic string, epoch int32) *kmsg.ConsumerGroupHeartbeatResponse {
	t.Helper()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.MemberEpoch = 1, group, member, epoch
	if epoch == 0 {
		req.RebalanceTimeoutMillis = 30000
		req.SubscribedTopicNames = []string{topic}
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	}
	resp, err := req.RequestWith(deadline(t, 30*time.Second), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// group.consumer.migration.policy=disabled: a franz-go classic consumer
// forms a group; a consumer protocol member asking to join it gets
// GROUP_ID_NOT_FOUND with Kafka's message, and the classic group carries
// on untouched.
func TestConsumerMigrationPolicyDisabled(t *testing.T) {
	b := testkit.StartBroker(t, testkit.BrokerConfig{Args: append([]string{"--group.consumer.migration.policy", "disabled"}, kip848Args...)})
	topic, group := name(t, "t"), name(t, "g")
	createTopic(t, b.Addr(), topic, kip848Parts)
	adm := admin(t, b.Addr())
	classic := client(t, b.Addr(), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.DisableAutoCommit())
	go func() {
		for !classic.PollFetches(deadline(t, 60*time.Second)).IsClientClosed() {
		}
	}()
	before := waitGroup(t, adm, group, 60*time.Second, stableWith(topic, 1, kip848Parts))

	r := cgHeartbeat(t, client(t, b.Addr()), group, "new-member", topic, 0)
	want := "Cannot upgrade classic group " + group + " to consumer group because online upgrade is disabled."
	if kerr.ErrorForCode(r.ErrorCode) != kerr.GroupIDNotFound || r.ErrorMessage == nil || *r.ErrorMessage != want {
		t.Fatalf("consumer protocol member joining the classic group: %v %v, want GROUP_ID_NOT_FOUND %q", kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage, want)
	}
	after := waitGroup(t, adm, group, 10*time.Second, stableWith(topic, 1, kip848Parts))
	if after.Members[0].MemberID != before.Members[0].MemberID {
		t.Fatalf("the classic group changed: %+v then %+v", before.Members, after.Members)
	}
}

// A group's own consumer.heartbeat.interval.ms and consumer.session.
// timeout.ms (IncrementalAlterConfigs on its GROUP resource) apply to its
// members: values outside the broker's bounds are INVALID_CONFIG, the
// answer to a heartbeat carries the group's interval, and a member that
// goes silent is fenced after the group's 2 s session timeout, long
// before the broker's 45 s.
func TestConsumerGroupConfigsApply(t *testing.T) {
	b := testkit.StartBroker(t, testkit.BrokerConfig{Args: append([]string{
		"--group.consumer.min.session.timeout.ms", "1000", "--group.consumer.min.heartbeat.interval.ms", "100"}, fastGroups...)})
	topic, group := name(t, "t"), name(t, "g")
	createTopic(t, b.Addr(), topic, kip848Parts)
	cl := client(t, b.Addr())
	alter := func(key, value string) error {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = key, kmsg.StringPtr(value)
		res.Configs = append(res.Configs, c)
		req.Resources = append(req.Resources, res)
		resp, err := req.RequestWith(deadline(t, 30*time.Second), cl)
		if err != nil {
			t.Fatal(err)
		}
		return kerr.ErrorForCode(resp.Resources[0].ErrorCode)
	}
	if code := alter("consumer.session.timeout.ms", "500"); code != kerr.InvalidConfig {
		t.Fatalf("session timeout under group.consumer.min.session.timeout.ms: %v", code)
	}
	if code := alter("consumer.heartbeat.interval.ms", "20000"); code != kerr.InvalidConfig {
		t.Fatalf("heartbeat interval over group.consumer.max.heartbeat.interval.ms: %v", code)
	}
	if code := alter("consumer.heartbeat.interval.ms", "300"); code != nil {
		t.Fatalf("heartbeat interval 300: %v", code)
	}
	if code := alter("consumer.session.timeout.ms", "2000"); code != nil {
		t.Fatalf("session timeout 2000: %v", code)
	}

	r := cgHeartbeat(t, cl, group, "silent-member", topic, 0)
	if r.ErrorCode != 0 || r.HeartbeatIntervalMillis != 300 {
		t.Fatalf("join: %v, heartbeat interval %d ms, want the group's 300", kerr.ErrorForCode(r.ErrorCode), r.HeartbeatIntervalMillis)
	}
	adm := admin(t, b.Addr())
	waitConsumerGroup(t, adm, group, 10*time.Second, func(g kadm.DescribedConsumerGroup) bool { return len(g.Members) == 1 })
	waitConsumerGroup(t, adm, group, 20*time.Second, func(g kadm.DescribedConsumerGroup) bool { return g.State == "Empty" })
}
