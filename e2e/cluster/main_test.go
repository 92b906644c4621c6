package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// sessionTimeout is zookeeper.session.timeout.ms of every cluster here
// (testkit's default, spelled out because the failover bounds use it).
const sessionTimeout = 6 * time.Second

// clusterConfig is the configuration of every cluster here: three samsa
// brokers, one ZooKeeper. The last broker of a cluster to stop has no one
// to hand its leaderships to, so its controlled shutdown is retried
// controlled.shutdown.max.retries times before it gives up, as Kafka's
// is; a pause of 1 s between tries instead of 5 keeps each cluster's
// teardown to a few seconds.
func clusterConfig() testkit.ClusterConfig {
	return testkit.ClusterConfig{Kind: testkit.Samsa, Brokers: 3, SessionTimeout: sessionTimeout,
		Properties: map[string]string{"controlled.shutdown.retry.backoff.ms": "1000"}}
}

// shared is the cluster of the tests that do not kill, stop or expire a
// broker.
var shared struct {
	once sync.Once
	c    *testkit.Cluster
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.c != nil {
		if err := shared.c.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "the shared cluster did not stop cleanly: %v\n", err)
			for _, b := range shared.c.Brokers() {
				fmt.Fprintf(os.Stderr, "broker %d output:\n%s\n", b.ID(), testkit.LastLines(b.Output(), 60))
			}
			code = 1
		}
	}
	os.Exit(code)
}

// sharedCluster returns the shared cluster, starting it on first use;
// if t fails, the end of every broker's output goes to its log.
func sharedCluster(t *testing.T) *testkit.Cluster {
	t.Helper()
	testkit.Require(t, testkit.ZooKeeperAvailable(), "ZooKeeper is not installed (run `make deps`)")
	shared.once.Do(func() { shared.c, shared.err = testkit.LaunchCluster(clusterConfig()) })
	if shared.err != nil {
		t.Fatalf("starting the shared cluster: %v", shared.err)
	}
	c := shared.c
	for _, b := range c.Brokers() {
		if !b.Running() {
			t.Fatalf("broker %d of the shared cluster is not running; output:\n%s", b.ID(), testkit.LastLines(b.Output(), 80))
		}
	}
	logOnFailure(t, c)
	return c
}

// ownCluster starts a cluster for t alone (tests that kill, stop or
// expire brokers); StartCluster logs the brokers' output if t fails.
func ownCluster(t *testing.T) *testkit.Cluster {
	t.Helper()
	began := time.Now()
	c := testkit.StartCluster(t, clusterConfig())
	t.Logf("3-broker cluster ready in %v", time.Since(began).Round(time.Millisecond))
	return c
}

func logOnFailure(t *testing.T, c *testkit.Cluster) {
	t.Cleanup(func() {
		if t.Failed() {
			for _, b := range c.Brokers() {
				t.Logf("broker %d (%s) output:\n%s", b.ID(), b.Addr(), testkit.LastLines(b.Output(), 100))
			}
		}
	})
}

func deadline(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

var seq atomic.Int64

// name makes a topic or group name unique to this run and test.
func name(t testing.TB, kind string) string {
	base := strings.NewReplacer("/", "-", "_", "-").Replace(strings.ToLower(t.Name()))
	return fmt.Sprintf("%s-%s-%d", base, kind, seq.Add(1))
}

// client returns a franz-go client seeded with addrs, closed when t ends.
func client(t testing.TB, addrs []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return testkit.NewClient(t, append([]kgo.Opt{kgo.SeedBrokers(addrs...), kgo.ClientID("samsa-e2e-cluster"),
		kgo.RetryTimeout(30 * time.Second)}, opts...)...)
}

func admin(t testing.TB, addrs []string) *kadm.Client { return kadm.NewClient(client(t, addrs)) }

// liveAddrs is the address of every running broker of c.
func liveAddrs(c *testkit.Cluster) []string {
	var addrs []string
	for _, b := range c.Brokers() {
		if b.Running() {
			addrs = append(addrs, b.Addr())
		}
	}
	return addrs
}

// createTopic creates topic through adm and waits until every live
// broker's metadata has all its partitions with a leader (the controller
// publishes a new topic to the brokers asynchronously, as Kafka's does).
func createTopic(t testing.TB, c *testkit.Cluster, topic string, partitions int32, rf int16) {
	t.Helper()
	resp, err := admin(t, liveAddrs(c)).CreateTopic(deadline(t, 30*time.Second), partitions, rf, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("creating %s (%d partitions, RF %d): %v", topic, partitions, rf, err)
	}
	waitMetadata(t, c, 30*time.Second, func(id int32, m *kmsg.MetadataResponse) error {
		return ledEverywhere(m, topic, int(partitions))
	})
}

// ledEverywhere checks that m describes topic with n partitions, each led.
func ledEverywhere(m *kmsg.MetadataResponse, topic string, n int) error {
	tm := findTopic(m, topic)
	if tm == nil {
		return fmt.Errorf("%s not in metadata", topic)
	}
	if err := kerr.ErrorForCode(tm.ErrorCode); err != nil {
		return fmt.Errorf("%s: %w", topic, err)
	}
	if len(tm.Partitions) != n {
		return fmt.Errorf("%s has %d partitions, want %d", topic, len(tm.Partitions), n)
	}
	for _, p := range tm.Partitions {
		if p.Leader < 0 || p.ErrorCode != 0 {
			return fmt.Errorf("%s-%d: leader %d, error %v", topic, p.Partition, p.Leader, kerr.ErrorForCode(p.ErrorCode))
		}
	}
	return nil
}

func findTopic(m *kmsg.MetadataResponse, topic string) *kmsg.MetadataResponseTopic {
	for i := range m.Topics {
		if t := &m.Topics[i]; t.Topic != nil && *t.Topic == topic {
			return t
		}
	}
	return nil
}

// metadataFrom asks the broker at addr itself (not any broker a client
// picks) for the metadata of topics (nil: all), through a new client so
// no cached metadata answers.
func metadataFrom(ctx context.Context, addr string, topics ...string) (*kmsg.MetadataResponse, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("samsa-e2e-cluster-md"), kgo.RetryTimeout(time.Second))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	for _, topic := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
	}
	return req.RequestWith(ctx, cl.SeedBrokers()[0])
}

// waitMetadata polls every running broker's own metadata until check
// accepts each one's, failing t after d with the last complaint.
func waitMetadata(t testing.TB, c *testkit.Cluster, d time.Duration, check func(id int32, m *kmsg.MetadataResponse) error) {
	t.Helper()
	end := time.Now().Add(d)
	for {
		err := checkMetadata(c, check)
		if err == nil {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("metadata not as expected within %v: %v", d, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func checkMetadata(c *testkit.Cluster, check func(id int32, m *kmsg.MetadataResponse) error) error {
	for _, b := range c.Brokers() {
		if !b.Running() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		m, err := metadataFrom(ctx, b.Addr())
		cancel()
		if err != nil {
			return fmt.Errorf("broker %d: metadata: %w", b.ID(), err)
		}
		if err := check(b.ID(), m); err != nil {
			return fmt.Errorf("broker %d: %w", b.ID(), err)
		}
	}
	return nil
}

// leaders returns topic's partition -> leader from m.
func leaders(m *kmsg.MetadataResponse, topic string) map[int32]int32 {
	out := map[int32]int32{}
	if tm := findTopic(m, topic); tm != nil {
		for _, p := range tm.Partitions {
			out[p.Partition] = p.Leader
		}
	}
	return out
}

// partitionDirs lists the directories of topic's partitions in a
// broker's data directory: "<topic>-<p>", and Kafka's
// "<topic>-<p>.<id>-delete" of a deletion still under way.
func partitionDirs(t testing.TB, dataDir, topic string) []string {
	t.Helper()
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		t.Fatalf("reading %s: %v", dataDir, err)
	}
	var dirs []string
	for _, e := range entries {
		n := e.Name()
		rest, ok := strings.CutPrefix(n, topic+"-")
		if !ok || !e.IsDir() {
			continue
		}
		num, _, _ := strings.Cut(rest, ".")
		if num != "" && strings.Trim(num, "0123456789") == "" {
			dirs = append(dirs, n)
		}
	}
	slices.Sort(dirs)
	return dirs
}

// waitNoPartitionDirs waits until no broker of c has a directory of
// topic's partitions, failing t after d.
func waitNoPartitionDirs(t testing.TB, c *testkit.Cluster, topic string, d time.Duration) {
	t.Helper()
	end := time.Now().Add(d)
	for {
		var left []string
		for _, b := range c.Brokers() {
			for _, dir := range partitionDirs(t, b.DataDir(), topic) {
				left = append(left, fmt.Sprintf("broker %d: %s", b.ID(), filepath.Join(b.DataDir(), dir)))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s deleted, but within %v its partitions are still on disk:\n%s", topic, d, strings.Join(left, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// produceValues writes one record per value to topic, round robin over
// its partitions, acks=all, and fails t on any error.
func produceValues(t testing.TB, addrs []string, topic string, values []string) {
	t.Helper()
	cl := client(t, addrs, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	rs := make([]*kgo.Record, len(values))
	for i, v := range values {
		rs[i] = &kgo.Record{Value: []byte(v)}
	}
	if err := cl.ProduceSync(deadline(t, 60*time.Second), rs...).FirstErr(); err != nil {
		t.Fatalf("producing %d records to %s: %v", len(values), topic, err)
	}
}

// deleteTopic deletes topic through any live broker.
func deleteTopic(t testing.TB, c *testkit.Cluster, topic string) {
	t.Helper()
	resp, err := admin(t, liveAddrs(c)).DeleteTopics(deadline(t, 30*time.Second), topic)
	if err == nil {
		var r kadm.DeleteTopicResponse
		if r, err = resp.On(topic, nil); err == nil {
			err = r.Err
		}
	}
	if err != nil {
		t.Fatalf("deleting %s: %v", topic, err)
	}
}

// waitTopicGone waits until no live broker's metadata has topic.
func waitTopicGone(t testing.TB, c *testkit.Cluster, topic string, d time.Duration) {
	t.Helper()
	waitMetadata(t, c, d, func(_ int32, m *kmsg.MetadataResponse) error {
		if tm := findTopic(m, topic); tm != nil && tm.ErrorCode != kerr.UnknownTopicOrPartition.Code {
			return fmt.Errorf("%s is still in metadata (%d partitions)", topic, len(tm.Partitions))
		}
		return nil
	})
}
