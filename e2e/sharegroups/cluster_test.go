package sharegroups

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// TestJavaShareConsumerCluster: on three samsa brokers with ZooKeeper,
// three KafkaShareConsumers of one group share a topic of 6 partitions
// (replication factor 3); when a third of the records are acknowledged
// the leader of partition 0 is killed with -9. Every record must be
// acknowledged exactly once in the end: none twice (the state written
// before an acknowledgement is answered survives the leader), none lost
// (records acquired on the dead leader come back from the new one). An
// acknowledgement that failed because a broker died while writing it is
// in doubt: it may have landed with its answer lost, and then its records
// never come back; they count only if the group's durable state (its
// start offsets) has every record acknowledged in the end.
func TestJavaShareConsumerCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("runs JVMs and a cluster")
	}
	cp := testkit.InteropJava(t)
	c := shareCluster(t)
	const topic, group, n, partitions = "share-cluster", "g-cluster", 3000, 6
	cl := testkit.NewClient(t, kgo.SeedBrokers(c.Addrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, partitions, 3, nil, topic); err != nil {
		t.Fatal(err)
	}

	java := exec.CommandContext(ctx, "java", "-Xmx256m", "-cp", cp, "io.samsa.interop.ShareGroups", "cluster", c.Bootstrap(), topic, group, strconv.Itoa(n))
	stdout, err := java.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	java.Stderr = &stderr
	if err := java.Start(); err != nil {
		t.Fatal(err)
	}

	// The consumers start the group's share partitions at the end of the
	// (empty) partitions; once all six have durable state, what is
	// produced is theirs.
	waitStarted(ctx, t, cl, group, topic, partitions)
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % partitions), Value: fmt.Appendf(nil, "r%d", i)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	killed := int32(-1)
	var lines []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		done, ok := strings.CutPrefix(line, "PROGRESS ")
		if k, _ := strconv.Atoi(done); ok && killed < 0 && k >= n/3 {
			killed = leaderOf(ctx, t, adm, topic, 0)
			t.Logf("%d records acknowledged: killing broker %d, the leader of partition 0", k, killed)
			c.BrokerByID(killed).Kill()
		}
	}
	err = java.Wait()
	out := strings.Join(lines, "\n")
	if err != nil || !strings.Contains(out, "\nOK ") && !strings.HasPrefix(out, "OK ") {
		t.Fatalf("ShareGroups cluster: %v\nstdout (end):\n%s\nstderr (end):\n%s", err, testkit.LastLines(out, 20), testkit.LastLines(stderr.String(), 80))
	}
	if killed < 0 {
		t.Fatalf("no broker was killed: the consumers reported no progress\n%s", testkit.LastLines(out, 20))
	}
	t.Log(lines[len(lines)-1])
	// Membership is not durable: if the killed broker was the group's
	// coordinator and the consumers finished before they heartbeated to
	// the new one, it has never heard of the group. A member joining and
	// leaving (and finding every record acknowledged) makes it known.
	share(t, cp, "join", c.Bootstrap(), topic, group)
	// kafka-share-groups.sh --list (Kafka 4.1's tool) lists it, from
	// ListGroups of every broker.
	if out := shareGroupsTool(t, cp, "--bootstrap-server", c.Bootstrap(), "--list"); !slices.Contains(strings.Fields(out), group) {
		t.Errorf("kafka-share-groups --list does not list %s:\n%s", group, out)
	}
	// The group is empty now; partition 0 starts after its n/partitions
	// records, all acknowledged: Java's Admin lists the group, describes
	// it, lists, alters and deletes its offsets on its coordinator, and
	// deletes it.
	share(t, cp, "admin", c.Bootstrap(), topic, group, strconv.Itoa(n/partitions))
}

// waitStarted waits until the group's coordinator reports a start offset
// for every partition of topic: every share partition has written its
// state.
func waitStarted(ctx context.Context, t *testing.T, cl *kgo.Client, group, topic string, partitions int) {
	t.Helper()
	var last string
	for ctx.Err() == nil {
		req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
		g := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
		g.GroupID = group
		rt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
		rt.Topic = topic
		for p := range partitions {
			rt.Partitions = append(rt.Partitions, int32(p))
		}
		g.Topics = append(g.Topics, rt)
		req.Groups = append(req.Groups, g)
		resp, err := req.RequestWith(ctx, cl)
		started := 0
		switch {
		case err != nil:
			last = err.Error()
		case len(resp.Groups) != 1:
			last = fmt.Sprintf("%d groups in the answer", len(resp.Groups))
		case resp.Groups[0].ErrorCode != 0:
			last = kerr.ErrorForCode(resp.Groups[0].ErrorCode).Error()
		default:
			for _, t := range resp.Groups[0].Topics {
				for _, p := range t.Partitions {
					if p.ErrorCode == 0 && p.StartOffset >= 0 {
						started++
					}
				}
			}
			last = fmt.Sprintf("%d of %d share partitions started", started, partitions)
		}
		if started == partitions {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Fatalf("the share partitions did not start: %s", last)
}

// leaderOf is the leader of topic/partition.
func leaderOf(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, partition int32) int32 {
	t.Helper()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := md.Topics[topic].Partitions[partition]
	if !ok || p.Leader < 0 {
		t.Fatalf("partition %d of %s has no leader: %+v", partition, topic, md.Topics[topic])
	}
	return p.Leader
}

// shareCluster starts three samsa brokers on one ZooKeeper, with
// __consumer_offsets and __share_group_state of 6 partitions (they are
// made quicker than 50) and heartbeats every second.
func shareCluster(t *testing.T) *testkit.Cluster {
	t.Helper()
	return testkit.StartCluster(t, testkit.ClusterConfig{Kind: testkit.Samsa, Brokers: 3, Properties: map[string]string{
		"controlled.shutdown.retry.backoff.ms":         "1000",
		"offsets.topic.num.partitions":                 "6",
		"share.coordinator.state.topic.num.partitions": "6",
		"group.share.heartbeat.interval.ms":            "1000",
		"group.share.min.heartbeat.interval.ms":        "1000",
	}})
}

// shareGroupsTool runs Kafka 4.1's kafka-share-groups.sh (its main class,
// on the harness's class path) and returns its output.
func shareGroupsTool(t *testing.T, cp string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	argv := append([]string{"-Xmx256m", "-cp", cp, "org.apache.kafka.tools.consumer.group.ShareGroupCommand"}, args...)
	out, err := exec.CommandContext(ctx, "java", argv...).CombinedOutput()
	if err != nil {
		t.Fatalf("kafka-share-groups %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
