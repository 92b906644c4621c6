package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// partInfo is one partition as a tool showed it.
type partInfo struct {
	partition int32
	leader    int32
	replicas  []int32
	isr       []int32
}

// checkSpread fails t unless parts are n partitions, each with three
// distinct replicas among brokers 1..3 and its leader one of them, and
// the leaders are on at least two brokers: what Kafka's replica
// assignment (round robin from a random start) gives a 3-broker cluster.
func checkSpread(t *testing.T, tool string, parts []partInfo, n int) {
	t.Helper()
	if len(parts) != n {
		t.Errorf("%s shows %d partitions, want %d: %+v", tool, len(parts), n, parts)
		return
	}
	leaders := map[int32]bool{}
	for _, p := range parts {
		distinct := slices.Compact(slices.Sorted(slices.Values(p.replicas)))
		if len(p.replicas) != 3 || !slices.Equal(distinct, []int32{1, 2, 3}) {
			t.Errorf("%s: partition %d has replicas %v, want three distinct of brokers 1..3", tool, p.partition, p.replicas)
		}
		if !slices.Contains(p.replicas, p.leader) {
			t.Errorf("%s: partition %d is led by %d, not one of its replicas %v", tool, p.partition, p.leader, p.replicas)
		}
		if !slices.Contains(p.isr, p.leader) {
			t.Errorf("%s: partition %d's leader %d is not in its ISR %v", tool, p.partition, p.leader, p.isr)
		}
		leaders[p.leader] = true
	}
	if len(leaders) < 2 {
		t.Errorf("%s: every partition is led by the same broker %v", tool, leaders)
	}
}

// kcatMetadata is the part of `kcat -L -J` the test reads.
type kcatMetadata struct {
	ControllerID int32 `json:"controllerid"`
	Brokers      []struct {
		ID   int32  `json:"id"`
		Name string `json:"name"`
	} `json:"brokers"`
	Topics []struct {
		Topic      string `json:"topic"`
		Partitions []struct {
			Partition int32 `json:"partition"`
			Leader    int32 `json:"leader"`
			Replicas  []struct {
				ID int32 `json:"id"`
			} `json:"replicas"`
			ISRs []struct {
				ID int32 `json:"id"`
			} `json:"isrs"`
		} `json:"partitions"`
	} `json:"topics"`
}

func runKcat(t *testing.T, args ...string) string {
	t.Helper()
	kcat := testkit.RequireTool(t, "kcat")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, kcat, args...).Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("kcat %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr)
	}
	return string(out)
}

// topicCommandRow is a partition line of kafka-topics --describe (3.9
// and 4.x): "Topic: t	Partition: 0	Leader: 2	Replicas: 2,3,1	Isr: 2,3,1	...".
var topicCommandRow = regexp.MustCompile(`Topic: (\S+)\s+Partition: (\d+)\s+Leader: (-?\d+|none)\s+Replicas: ([\d,]*)\s+Isr: ([\d,]*)`)

// topicCommandHeader is its topic line.
var topicCommandHeader = regexp.MustCompile(`Topic: (\S+)\s+TopicId: (\S+)\s+PartitionCount: (\d+)\s+ReplicationFactor: (\d+)`)

func parseTopicCommand(t *testing.T, out, topic string) []partInfo {
	t.Helper()
	var parts []partInfo
	header := false
	for _, line := range strings.Split(out, "\n") {
		if m := topicCommandHeader.FindStringSubmatch(line); m != nil && m[1] == topic {
			header = true
			if m[3] != "6" || m[4] != "3" {
				t.Errorf("kafka-topics --describe: %q, want PartitionCount: 6, ReplicationFactor: 3", line)
			}
			if len(m[2]) != 22 {
				t.Errorf("kafka-topics --describe: TopicId %q is not a 22-character base64 UUID", m[2])
			}
			continue
		}
		m := topicCommandRow.FindStringSubmatch(line)
		if m == nil || m[1] != topic {
			continue
		}
		p, _ := strconv.ParseInt(m[2], 10, 32)
		leader := int64(-1)
		if m[3] != "none" {
			leader, _ = strconv.ParseInt(m[3], 10, 32)
		}
		parts = append(parts, partInfo{partition: int32(p), leader: int32(leader), replicas: ids(m[4]), isr: ids(m[5])})
	}
	if !header {
		t.Errorf("kafka-topics --describe shows no topic line for %s:\n%s", topic, out)
	}
	return parts
}

func ids(list string) []int32 {
	var out []int32
	for _, f := range strings.Split(list, ",") {
		if n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32); err == nil {
			out = append(out, int32(n))
		}
	}
	return out
}

// apiVersionsBroker is a broker's line of kafka-broker-api-versions:
// "127.0.0.1:9092 (id: 1 rack: null) -> (" (4.x adds "isFenced: false").
var apiVersionsBroker = regexp.MustCompile(`(?m)^(\S+) \(id: (\d+) rack: `)

func checkAPIVersionsBrokers(t *testing.T, c *testkit.Cluster, tool, out string) {
	t.Helper()
	got := map[string]string{}
	for _, m := range apiVersionsBroker.FindAllStringSubmatch(out, -1) {
		got[m[2]] = m[1]
	}
	want := map[string]string{}
	for _, b := range c.Brokers() {
		want[strconv.Itoa(int(b.ID()))] = b.Addr()
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s shows brokers %v, want %v:\n%s", tool, got, want, testkit.LastLines(out, 40))
	}
	if !strings.Contains(out, "Produce(0):") || !strings.Contains(out, "Metadata(3):") {
		t.Errorf("%s lists no Produce or Metadata versions:\n%s", tool, testkit.LastLines(out, 40))
	}
}

// TestToolsSeeTheCluster: kcat -L, Kafka's kafka-topics --describe and
// kafka-broker-api-versions (of 3.9.1 and of the 4.x the interop matrix
// uses) see the three brokers and the controller, and an RF 3 topic of 6
// partitions has its replicas on all three brokers and its leaders on
// more than one.
func TestToolsSeeTheCluster(t *testing.T) {
	c := sharedCluster(t)
	topic := name(t, "rf3")
	createTopic(t, c, topic, 6, 3)
	ctl, err := c.WaitForController()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("kcat", func(t *testing.T) {
		var md kcatMetadata
		if err := json.Unmarshal([]byte(runKcat(t, "-L", "-J", "-b", c.Bootstrap(), "-t", topic)), &md); err != nil {
			t.Fatal(err)
		}
		var brokers []string
		for _, b := range md.Brokers {
			brokers = append(brokers, fmt.Sprintf("%d=%s", b.ID, b.Name))
		}
		slices.Sort(brokers)
		var want []string
		for _, b := range c.Brokers() {
			want = append(want, fmt.Sprintf("%d=%s", b.ID(), b.Addr()))
		}
		if !slices.Equal(brokers, want) {
			t.Errorf("kcat -L -J brokers %v, want %v", brokers, want)
		}
		if md.ControllerID != ctl {
			t.Errorf("kcat -L -J controllerid %d, /controller names %d", md.ControllerID, ctl)
		}
		if len(md.Topics) != 1 || md.Topics[0].Topic != topic {
			t.Fatalf("kcat -L -J -t %s topics: %+v", topic, md.Topics)
		}
		var parts []partInfo
		for _, p := range md.Topics[0].Partitions {
			pi := partInfo{partition: p.Partition, leader: p.Leader}
			for _, r := range p.Replicas {
				pi.replicas = append(pi.replicas, r.ID)
			}
			for _, r := range p.ISRs {
				pi.isr = append(pi.isr, r.ID)
			}
			parts = append(parts, pi)
		}
		checkSpread(t, "kcat -L -J", parts, 6)

		text := runKcat(t, "-L", "-b", c.Bootstrap(), "-t", topic)
		if !strings.Contains(text, " 3 brokers:\n") {
			t.Errorf("kcat -L does not list 3 brokers:\n%s", text)
		}
		if want := fmt.Sprintf("broker %d at %s (controller)", ctl, c.BrokerByID(ctl).Addr()); !strings.Contains(text, want) {
			t.Errorf("kcat -L lacks %q:\n%s", want, text)
		}
	})

	t.Run("kafka-topics-3.9.1", func(t *testing.T) {
		out := runKafka39(t, testkit.Kafka39TopicCommand, "--bootstrap-server", c.Bootstrap(), "--describe", "--topic", topic)
		checkSpread(t, "kafka-topics 3.9.1 --describe", parseTopicCommand(t, out, topic), 6)
	})

	t.Run("kafka-topics-4", func(t *testing.T) {
		version, _ := kafka4Tools(t)
		out := runKafka4(t, kafka4TopicCommand, "--bootstrap-server", c.Bootstrap(), "--describe", "--topic", topic)
		checkSpread(t, "kafka-topics "+version+" --describe", parseTopicCommand(t, out, topic), 6)
	})

	t.Run("kafka-broker-api-versions-3.9.1", func(t *testing.T) {
		out := runKafka39(t, kafka39BrokerApiVersions, "--bootstrap-server", c.Bootstrap())
		checkAPIVersionsBrokers(t, c, "kafka-broker-api-versions 3.9.1", out)
	})

	t.Run("kafka-broker-api-versions-4", func(t *testing.T) {
		version, _ := kafka4Tools(t)
		out := runKafka4(t, kafka4BrokerApiVersions, "--bootstrap-server", c.Bootstrap())
		checkAPIVersionsBrokers(t, c, "kafka-broker-api-versions "+version, out)
	})

	t.Run("DescribeCluster", func(t *testing.T) {
		// Every broker answers for the whole cluster, with the same
		// controller ZooKeeper names.
		for _, b := range c.Brokers() {
			adm := admin(t, []string{b.Addr()})
			meta, err := adm.BrokerMetadata(deadline(t, 10*time.Second))
			if err != nil {
				t.Fatalf("broker %d: %v", b.ID(), err)
			}
			if got := meta.Brokers.NodeIDs(); !slices.Equal(got, []int32{1, 2, 3}) {
				t.Errorf("broker %d: Metadata brokers %v, want [1 2 3]", b.ID(), got)
			}
			if meta.Controller != ctl {
				t.Errorf("broker %d: Metadata controller %d, /controller names %d", b.ID(), meta.Controller, ctl)
			}
			dc, err := describeClusterFrom(deadline(t, 10*time.Second), b.Addr())
			if err != nil {
				t.Fatalf("broker %d: DescribeCluster: %v", b.ID(), err)
			}
			var got []int32
			for _, br := range dc.Brokers {
				got = append(got, br.NodeID)
			}
			slices.Sort(got)
			if !slices.Equal(got, []int32{1, 2, 3}) || dc.ControllerID != ctl {
				t.Errorf("broker %d: DescribeCluster brokers %v controller %d, want [1 2 3] and %d", b.ID(), got, dc.ControllerID, ctl)
			}
			if dc.ClusterID == "" || dc.ClusterID != meta.Cluster {
				t.Errorf("broker %d: DescribeCluster cluster id %q, Metadata's %q", b.ID(), dc.ClusterID, meta.Cluster)
			}
		}
	})
}

// describeClusterFrom sends DescribeCluster to the broker at addr itself.
func describeClusterFrom(ctx context.Context, addr string) (*kmsg.DescribeClusterResponse, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("samsa-e2e-cluster-dc"))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	resp, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, cl.SeedBrokers()[0])
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	return resp, err
}
