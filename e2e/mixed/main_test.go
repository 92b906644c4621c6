package mixed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// sessionTimeout is every cluster's zookeeper.session.timeout.ms.
const sessionTimeout = 6 * time.Second

// mixedCluster starts a cluster of three brokers, those of kafkaIDs
// Kafka 3.9.1 and the others samsa, and logs every broker's output if t
// fails. Every property is one both kinds read.
func mixedCluster(t *testing.T, kafkaIDs ...int32) *testkit.Cluster {
	t.Helper()
	kinds := map[int32]testkit.ClusterKind{}
	for _, id := range kafkaIDs {
		kinds[id] = testkit.Kafka39
	}
	began := time.Now()
	c := testkit.StartCluster(t, testkit.ClusterConfig{Kind: testkit.Samsa, Brokers: 3, BrokerKinds: kinds,
		SessionTimeout: sessionTimeout, Properties: map[string]string{
			"offsets.topic.num.partitions":         "3",
			"transaction.state.log.num.partitions": "3",
			"replica.lag.time.max.ms":              "5000",
			"controlled.shutdown.retry.backoff.ms": "1000",
			"min.insync.replicas":                  "2",
			"unclean.leader.election.enable":       "false",
		}})
	t.Logf("cluster ready in %v: %s", time.Since(began).Round(time.Millisecond), describe(c))
	keepLogs(t, c)
	return c
}

// logsEnv (not SAMSA_*, which samsa reads as its configuration) names
// a directory where each test leaves every broker's whole
// output (broker-<id>.log), for reading Kafka's view of samsa after a
// run that passed.
const logsEnv = "E2E_MIXED_LOGS"

func keepLogs(t *testing.T, c *testkit.Cluster) {
	dir := os.Getenv(logsEnv)
	if dir == "" {
		return
	}
	t.Cleanup(func() {
		dir := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "-"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Error(err)
			return
		}
		for _, b := range c.Brokers() {
			name := filepath.Join(dir, fmt.Sprintf("broker-%d.log", b.ID()))
			if err := os.WriteFile(name, []byte(b.Output()), 0o644); err != nil {
				t.Error(err)
			}
		}
	})
}

// describe names each broker's kind: "1=kafka-3.9.1 2=samsa 3=samsa".
func describe(c *testkit.Cluster) string {
	var parts []string
	for _, b := range c.Brokers() {
		parts = append(parts, fmt.Sprintf("%d=%s", b.ID(), b.Kind()))
	}
	return strings.Join(parts, " ")
}

func deadline(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// client returns a franz-go client of the cluster, closed when t ends.
func client(t testing.TB, c *testkit.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return testkit.NewClient(t, append([]kgo.Opt{kgo.SeedBrokers(c.Addrs()...), kgo.ClientID("samsa-e2e-mixed"),
		kgo.RetryTimeout(60 * time.Second)}, opts...)...)
}

func admin(t testing.TB, c *testkit.Cluster) *kadm.Client { return kadm.NewClient(client(t, c)) }

// eventually calls check until it returns nil, failing t with its last
// error after d.
func eventually(t testing.TB, d time.Duration, what string, check func() error) {
	t.Helper()
	end := time.Now().Add(d)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s: not within %v: %v", what, d, err)
		}
		time.Sleep(100 * time.Millisecond) // polling with a deadline, not ordering
	}
}
