package testkit

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterConfigsKafka39 is the reference for TestClusterConfigsSamsa.
func TestClusterConfigsKafka39(t *testing.T) { testClusterConfigs(t, Kafka39) }

// TestClusterConfigsSamsa: a topic config altered through the cluster
// reaches the logs on every broker, also on a broker whose ZooKeeper
// session expired in between (its config watch is armed again in the
// new session), as in Kafka.
func TestClusterConfigsSamsa(t *testing.T) { testClusterConfigs(t, Samsa) }

func testClusterConfigs(t *testing.T, kind ClusterKind) {
	c := StartCluster(t, ClusterConfig{Kind: kind, Brokers: 3, Chroot: "/configs"})
	if _, err := c.WaitForBrokers(3); err != nil {
		t.Fatal(err)
	}
	cl := NewClient(t, kgo.SeedBrokers(c.Addrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// RF 1 over three partitions: each broker holds one.
	if r, err := adm.CreateTopic(ctx, 3, 1, nil, "cfg"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	b := c.BrokerByID(2)
	if err := b.ExpireSession(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitForBrokers(3); err != nil {
		t.Fatal(err)
	}
	seg := "2048"
	for ctx.Err() == nil {
		// The alter may reach a broker before it has the topic.
		rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "segment.bytes", Value: &seg}}, "cfg")
		if err == nil && len(rs) == 1 && rs[0].Err == nil {
			break
		}
		tick(ctx)
	}
	value := make([]byte, 600)
	for ctx.Err() == nil {
		for p := range int32(3) {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "cfg", Partition: p, Value: value}).FirstErr(); err != nil {
				t.Logf("produce to cfg-%d: %v", p, err) // a leader moving after the expiry
			}
		}
		rolled := 0
		for _, br := range c.Brokers() {
			held, total := 0, 0
			for p := range 3 {
				logs, _ := filepath.Glob(filepath.Join(br.DataDir(), fmt.Sprintf("cfg-%d", p), "*.log"))
				if len(logs) > 0 {
					held++
				}
				total += len(logs)
			}
			if held > 0 && total > held {
				rolled++
			}
		}
		if rolled == 3 {
			return
		}
		tick(ctx)
	}
	t.Fatalf("%s: the logs of cfg did not roll on every broker after segment.bytes=%s", kind, seg)
}

// tick waits for the next poll of the cluster (a remote view: nothing to
// wait on), or ctx's end.
func tick(ctx context.Context) {
	t := time.NewTimer(50 * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
