package testkit

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterKafka39 runs the launcher's whole contract against Apache
// Kafka 3.9.1, the reference: three brokers register, a replicated topic
// is created and described, the controller is killed and another takes
// over, the dead broker comes back, one broker restarts cleanly, and one
// has its ZooKeeper session expired and registers again.
func TestClusterKafka39(t *testing.T) { testCluster(t, Kafka39) }

// TestClusterSamsa is the same against samsa.
func TestClusterSamsa(t *testing.T) { testCluster(t, Samsa) }

func testCluster(t *testing.T, kind ClusterKind) {
	began := time.Now()

	c := StartCluster(t, ClusterConfig{Kind: kind, Brokers: 3, Chroot: "/testkit"})
	t.Logf("%s: 3 brokers ready in %v", kind, time.Since(began).Round(time.Millisecond))
	ids, err := c.WaitForBrokers(3)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []int32{1, 2, 3}) {
		t.Fatalf("registered brokers = %v, want [1 2 3]", ids)
	}
	if got := strings.Count(c.Bootstrap(), ","); got != 2 {
		t.Errorf("Bootstrap() = %q, want three addresses", c.Bootstrap())
	}
	props, err := os.ReadFile(c.Broker(1).PropertiesFile())
	if err != nil {
		t.Fatal(err)
	}
	if data := string(props); !strings.Contains(data, "zookeeper.connect="+c.Broker(1).ZooKeeperProxy().Addr()+"/testkit\n") {
		t.Errorf("broker 2's server.properties does not reach ZooKeeper through its proxy:\n%s", data)
	}

	cl := NewClient(t, kgo.SeedBrokers(c.Addrs()...))
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, 3, 3, map[string]*string{"retention.ms": kadm.StringPtr("3600000")}, "rf3")
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("creating rf3: %v", err)
	}
	replicatedOn(t, ctx, adm, "rf3", []int32{1, 2, 3})

	ctl, err := c.WaitForController()
	if err != nil {
		t.Fatal(err)
	}
	c.BrokerByID(ctl).Kill()
	next, err := c.WaitForController(ctl)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("controller %d killed, %d elected", ctl, next)
	if _, err := c.WaitForBrokers(2); err != nil {
		t.Fatal(err)
	}
	var live []int32
	for _, id := range ids {
		if id != ctl {
			live = append(live, id)
		}
	}
	replicatedOn(t, ctx, adm, "rf3", live)

	if err := c.BrokerByID(ctl).Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitForBrokers(3); err != nil {
		t.Fatal(err)
	}
	replicatedOn(t, ctx, adm, "rf3", ids)

	other := c.BrokerByID(next%3 + 1)
	if err := other.Restart(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitForBrokers(3); err != nil {
		t.Fatal(err)
	}

	b := c.Broker(0)
	before, err := b.Epoch()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ExpireSession(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitForBrokers(3); err != nil {
		t.Fatalf("broker %d did not register again after its session expired: %v", b.ID(), err)
	}
	after, err := b.Epoch()
	if err != nil {
		t.Fatal(err)
	}
	if after == before {
		t.Errorf("broker %d's epoch (registration czxid) is still %d after its session expired", b.ID(), before)
	}
	replicatedOn(t, ctx, adm, "rf3", ids)
	t.Logf("%s: whole scenario in %v", kind, time.Since(began).Round(time.Millisecond))
}

// replicatedOn waits until every partition of the 3-partition topic has
// a leader among want and exactly want in its ISR.
func replicatedOn(t *testing.T, ctx context.Context, adm *kadm.Client, topic string, want []int32) {
	t.Helper()
	replicatedOnN(t, ctx, adm, topic, 3, want)
}

// replicatedOnN waits until topic has n partitions, each with a leader
// among want and exactly want in its ISR (a broker's death or return
// reaches the metadata a little after ZooKeeper sees it), polling with a
// deadline.
func replicatedOnN(t *testing.T, ctx context.Context, adm *kadm.Client, topic string, n int, want []int32) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		last := checkReplicated(ctx, adm, topic, n, want)
		if last == "" {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("%s never replicated on %v: %s", topic, want, last)
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
		}
	}
}

func checkReplicated(ctx context.Context, adm *kadm.Client, topic string, n int, want []int32) string {
	topics, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return err.Error()
	}
	td, ok := topics[topic]
	if !ok || td.Err != nil {
		return fmt.Sprintf("not described: %v", td.Err)
	}
	if len(td.Partitions) != n {
		return fmt.Sprintf("%d partitions", len(td.Partitions))
	}
	for _, p := range td.Partitions.Sorted() {
		isr := slices.Sorted(slices.Values(p.ISR))
		if len(p.Replicas) != 3 || !slices.Contains(want, p.Leader) || !slices.Equal(isr, want) {
			return fmt.Sprintf("partition %d: leader %d, replicas %v, isr %v", p.Partition, p.Leader, p.Replicas, p.ISR)
		}
	}
	return ""
}
