package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// rackSelector is Kafka's rack-aware replica selector (KIP-392).
const rackSelector = "org.apache.kafka.common.replica.RackAwareReplicaSelector"

// rackCluster is a 3-broker cluster with broker N in rack-N and the
// rack-aware replica selector, for KIP-392.
func rackCluster(t *testing.T) *testkit.Cluster {
	t.Helper()
	cfg := clusterConfig()
	cfg.Properties["replica.selector.class"] = rackSelector
	cfg.BrokerProperties = map[int32]map[string]string{}
	for id := int32(1); id <= 3; id++ {
		cfg.BrokerProperties[id] = map[string]string{"broker.rack": "rack-" + strconv.Itoa(int(id))}
	}
	return testkit.StartCluster(t, cfg)
}

// produceN writes n records to topic partition 0 with acks=all.
func produceN(t *testing.T, c *testkit.Cluster, topic string, n int) {
	t.Helper()
	cl := client(t, c.Addrs(), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic(topic))
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Value: []byte("v" + strconv.Itoa(i))})
	}
	if err := cl.ProduceSync(deadline(t, 30*time.Second), recs...).FirstErr(); err != nil {
		t.Fatalf("producing to %s: %v", topic, err)
	}
}

// consumerFetch sends one Fetch v17 as a consumer in rack to the broker
// at addr, for topic id's partition 0 from offset.
func consumerFetch(ctx context.Context, t *testing.T, addr string, id [16]byte, rack string, offset int64) (kmsg.FetchResponseTopicPartition, []kmsg.FetchResponseBroker, error) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("samsa-e2e-rack"), kgo.RetryTimeout(time.Second))
	if err != nil {
		return kmsg.FetchResponseTopicPartition{}, nil, err
	}
	defer cl.Close()
	req := kmsg.NewPtrFetchRequest()
	req.Version = 17
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.Rack = 100, 1, 1<<20, rack
	ft := kmsg.NewFetchRequestTopic()
	ft.TopicID = id
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = 0, offset, 1<<20, -1
	ft.Partitions = append(ft.Partitions, fp)
	req.Topics = append(req.Topics, ft)
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return kmsg.FetchResponseTopicPartition{}, nil, err
	}
	if resp.Version != 17 {
		t.Fatalf("the broker answered Fetch v%d, want 17", resp.Version)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return kmsg.FetchResponseTopicPartition{}, nil, fmt.Errorf("fetch answer %+v", resp)
	}
	return resp.Topics[0].Partitions[0], resp.Brokers, nil
}

// topicID reads topic's id from a broker's metadata.
func topicID(t *testing.T, c *testkit.Cluster, topic string) [16]byte {
	t.Helper()
	m, err := metadataFrom(deadline(t, 10*time.Second), c.Broker(0).Addr(), topic)
	if err != nil {
		t.Fatal(err)
	}
	tm := findTopic(m, topic)
	if tm == nil {
		t.Fatalf("%s not in metadata", topic)
	}
	return tm.TopicID
}

// eventually retries check every 100 ms until it passes, failing t
// with its last complaint after 30 s.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	end := time.Now().Add(30 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// replicatedTopic creates a topic on brokers 1 (the leader), 2 and 3,
// writes n records and waits until both followers serve them (their
// high watermark, which they learn from the leader's fetch answers, is
// n).
func replicatedTopic(t *testing.T, c *testkit.Cluster, n int) (string, [16]byte) {
	t.Helper()
	topic := name(t, "topic")
	createAssigned(t, c, topic, 1, 2, 3)
	produceN(t, c, topic, n)
	id := topicID(t, c, topic)
	for _, b := range []int32{2, 3} {
		addr := c.BrokerByID(b).Addr()
		eventually(t, fmt.Sprintf("follower %d at high watermark %d", b, n), func() error {
			p, _, err := consumerFetch(deadline(t, 10*time.Second), t, addr, id, "", int64(n))
			if err == nil && (p.ErrorCode != 0 || p.HighWatermark != int64(n)) {
				err = fmt.Errorf("answered %+v", p)
			}
			return err
		})
	}
	return topic, id
}

// KIP-392: with broker.rack and the rack-aware selector, the leader
// points a consumer in another broker's rack at that broker, and a
// franz-go consumer with kgo.Rack reads every record from the follower
// in its rack; the follower refuses what it cannot serve as Kafka's do.
func TestFetchFromClosestReplica(t *testing.T) {
	c := rackCluster(t)
	topic, id := replicatedTopic(t, c, 100)
	leader, follower := c.BrokerByID(1), c.BrokerByID(2)

	// The leader redirects a consumer in rack-2 (no records, the offsets),
	// and keeps one in its own rack or in none.
	p, _, err := consumerFetch(deadline(t, 10*time.Second), t, leader.Addr(), id, "rack-2", 0)
	if err != nil || p.ErrorCode != 0 || p.PreferredReadReplica != 2 || len(p.RecordBatches) != 0 || p.HighWatermark != 100 {
		t.Fatalf("leader's answer to a rack-2 consumer: %+v %v, want preferred read replica 2", p, err)
	}
	for _, rack := range []string{"rack-1", "", "rack-9"} {
		p, _, err := consumerFetch(deadline(t, 10*time.Second), t, leader.Addr(), id, rack, 0)
		if err != nil || p.ErrorCode != 0 || p.PreferredReadReplica != -1 || len(p.RecordBatches) == 0 {
			t.Fatalf("leader's answer to a consumer in %q: %+v %v, want records from the leader", rack, p, err)
		}
	}
	// The follower serves up to its high watermark; past its log end it
	// answers OFFSET_OUT_OF_RANGE.
	if p, _, err := consumerFetch(deadline(t, 10*time.Second), t, follower.Addr(), id, "rack-2", 0); err != nil || p.ErrorCode != 0 || len(p.RecordBatches) == 0 || p.PreferredReadReplica != -1 {
		t.Fatalf("follower's answer: %+v %v, want records", p, err)
	}
	if p, _, err := consumerFetch(deadline(t, 10*time.Second), t, follower.Addr(), id, "rack-2", 500); err != nil || p.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("follower's answer past its end: %+v %v, want OFFSET_OUT_OF_RANGE", p, err)
	}

	// A franz-go consumer in rack-2: every batch comes from broker 2.
	var mu sync.Mutex
	from := map[int32]int{}
	hook := fetchBatchHook(func(node int32) {
		mu.Lock()
		from[node]++
		mu.Unlock()
	})
	cl := client(t, c.Addrs(), kgo.Rack("rack-2"), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.WithHooks(hook))
	got := 0
	ctx := deadline(t, 60*time.Second)
	for got < 100 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of 100 records: %v", got, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Logf("fetch error: %v", err) })
		got += fs.NumRecords()
	}
	mu.Lock()
	defer mu.Unlock()
	if from[2] == 0 || from[1] != 0 || from[3] != 0 {
		t.Fatalf("record batches by broker: %v, want all from broker 2 (rack-2)", from)
	}
	t.Logf("record batches by broker: %v", from)

	// Java's consumer (Kafka 3.9.1's console consumer) with client.rack:
	// the leader never gives a rack-2 consumer records while broker 2 is
	// in sync (it redirects, as checked above), so reading them all means
	// it read them from broker 2.
	t.Run("java", func(t *testing.T) {
		out := runKafka39(t, testkit.Kafka39ConsoleConsumer, "--bootstrap-server", c.Bootstrap(), "--topic", topic, "--partition", "0",
			"--offset", "earliest", "--max-messages", "100", "--timeout-ms", "60000", "--consumer-property", "client.rack=rack-2")
		n := 0
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "v") {
				n++
			}
		}
		if n != 100 {
			t.Fatalf("the Java consumer in rack-2 read %d records, want 100:\n%s", n, out)
		}
	})

	// librdkafka (kcat) with client.rack follows the redirect too: its
	// fetch log shows every record enqueued from broker 2's fetches.
	t.Run("kcat", func(t *testing.T) {
		kcat := testkit.RequireTool(t, "kcat")
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, kcat, "-C", "-b", c.Bootstrap(), "-t", topic, "-p", "0", "-o", "beginning", "-c", "100", "-e",
			"-X", "client.rack=rack-2", "-d", "topic,fetch")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("kcat: %v\n%s", err, testkit.LastLines(stderr.String(), 40))
		}
		if n := strings.Count(string(out), "\n"); n != 100 {
			t.Fatalf("kcat read %d records, want 100", n)
		}
		// librdkafka's debug lines name the broker thread as
		// "host:port/<node id>: Enqueue N message(s)".
		enqueued := 0
		for _, l := range strings.Split(stderr.String(), "\n") {
			if !strings.Contains(l, ": Enqueue ") {
				continue
			}
			if !strings.Contains(l, "/2: Enqueue ") {
				t.Fatalf("kcat got records from a broker other than 2 (rack-2):\n%s", l)
			}
			enqueued++
		}
		if enqueued == 0 {
			t.Fatalf("kcat's fetch log shows no records enqueued:\n%s", testkit.LastLines(stderr.String(), 40))
		}
	})
}

type fetchBatchHook func(node int32)

func (h fetchBatchHook) OnFetchBatchRead(meta kgo.BrokerMetadata, _ string, _ int32, _ kgo.FetchBatchMetrics) {
	h(meta.NodeID)
}

// A fetch at a broker that does not lead names the leader (KIP-951,
// Fetch v16+): CurrentLeader plus its endpoint in NodeEndpoints. The
// replica set here leaves broker 3 out, so broker 3 hosts no replica.
func TestFetchNamesTheLeader(t *testing.T) {
	c := sharedCluster(t)
	topic := name(t, "topic")
	createAssigned(t, c, topic, 1, 2)
	id := topicID(t, c, topic)
	// Kafka answers a partition it holds no replica of (but knows from
	// the controller) NOT_LEADER_OR_FOLLOWER, naming the leader.
	p, nodes, err := consumerFetch(deadline(t, 10*time.Second), t, c.BrokerByID(3).Addr(), id, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.ErrorCode != kerr.NotLeaderForPartition.Code || p.CurrentLeader.LeaderID != 1 || p.CurrentLeader.LeaderEpoch < 0 {
		t.Fatalf("broker 3 (no replica) answered %+v, want NOT_LEADER_OR_FOLLOWER naming leader 1", p)
	}
	if len(nodes) != 1 || nodes[0].NodeID != 1 || fmt.Sprintf("%s:%d", nodes[0].Host, nodes[0].Port) != c.BrokerByID(1).Addr() {
		t.Fatalf("node endpoints %+v, want broker 1 at %s", nodes, c.BrokerByID(1).Addr())
	}
}

// DeleteRecords on the leader reaches the followers: their log start
// offset follows the leader's (Kafka's maybeIncrementLogStartOffset) and
// is checkpointed; and DescribeLogDirs answers at every broker for its
// own replicas, leader and followers.
func TestDeleteRecordsReachesFollowers(t *testing.T) {
	c := sharedCluster(t)
	topic, id := replicatedTopic(t, c, 100)
	adm := admin(t, c.Addrs())
	var offsets kadm.Offsets
	offsets.Add(kadm.Offset{Topic: topic, Partition: 0, At: 60})
	res, err := adm.DeleteRecords(deadline(t, 30*time.Second), offsets)
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("DeleteRecords: %v", err)
	}
	for _, b := range []int32{2, 3} {
		addr := c.BrokerByID(b).Addr()
		eventually(t, fmt.Sprintf("follower %d's log start offset follows the leader's 60", b), func() error {
			p, _, err := consumerFetch(deadline(t, 10*time.Second), t, addr, id, "", 80)
			if err == nil && (p.ErrorCode != 0 || p.LogStartOffset != 60) {
				err = fmt.Errorf("answered %+v", p)
			}
			return err
		})
		// Below the new start the follower answers OFFSET_OUT_OF_RANGE.
		if p, _, err := consumerFetch(deadline(t, 10*time.Second), t, addr, id, "", 10); err != nil || p.ErrorCode != kerr.OffsetOutOfRange.Code {
			t.Fatalf("follower %d below its log start: %+v %v", b, p, err)
		}
		raw, _ := os.ReadFile(filepath.Join(c.BrokerByID(b).DataDir(), "log-start-offset-checkpoint"))
		if !strings.Contains(string(raw), topic+" 0 60\n") {
			t.Fatalf("follower %d's log-start-offset-checkpoint:\n%s", b, raw)
		}
	}

	// Every broker describes its own replica of the partition.
	dirs, err := adm.DescribeAllLogDirs(deadline(t, 30*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []int32{1, 2, 3} {
		found := false
		dirs[b].EachPartition(func(p kadm.DescribedLogDirPartition) {
			if p.Topic == topic && p.Partition == 0 && p.Size > 0 {
				found = true
			}
		})
		if !found {
			t.Fatalf("broker %d's DescribeLogDirs lacks %s-0: %+v", b, topic, dirs[b])
		}
	}
	// The high watermark checkpoint names the partition at every replica.
	for _, b := range c.Brokers() {
		eventually(t, fmt.Sprintf("broker %d's replication-offset-checkpoint names %s-0 at 100", b.ID(), topic), func() error {
			raw, _ := os.ReadFile(filepath.Join(b.DataDir(), "replication-offset-checkpoint"))
			if !strings.Contains(string(raw), topic+" 0 100\n") {
				return fmt.Errorf("it says:\n%s", raw)
			}
			return nil
		})
	}
}

// Java's Admin.describeLogDirs (kafka-log-dirs.sh of Kafka 3.9.1) asks
// every broker and gets each one's replicas.
func TestLogDirsToolSeesEveryReplica(t *testing.T) {
	c := sharedCluster(t)
	topic := name(t, "topic")
	createAssigned(t, c, topic, 2, 3)
	produceN(t, c, topic, 10)
	out := runKafka39(t, "org.apache.kafka.tools.LogDirsCommand", "--bootstrap-server", c.Bootstrap(), "--describe", "--broker-list", "1,2,3", "--topic-list", topic)
	var report struct {
		Brokers []struct {
			Broker  int32 `json:"broker"`
			LogDirs []struct {
				Partitions []struct {
					Partition string `json:"partition"`
					Size      int64  `json:"size"`
				} `json:"partitions"`
			} `json:"logDirs"`
		} `json:"brokers"`
	}
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "{") {
			line = l
		}
	}
	if err := json.Unmarshal([]byte(line), &report); err != nil {
		t.Fatalf("kafka-log-dirs output not JSON: %v\n%s", err, out)
	}
	has := map[int32]bool{}
	for _, b := range report.Brokers {
		for _, d := range b.LogDirs {
			for _, p := range d.Partitions {
				if p.Partition == topic+"-0" {
					has[b.Broker] = true
				}
			}
		}
	}
	if len(report.Brokers) != 3 || has[1] || !has[2] || !has[3] {
		t.Fatalf("replicas by broker %v (want 2 and 3 only), report:\n%s", has, out)
	}
}
