package testkit

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// InProcessCluster is N cluster-mode brokers inside the test's process
// on one real ZooKeeper (a child JVM): real storage, real coordination,
// a real controller, real replication; what a user's Go test starts to
// try a client against a cluster without building processes.
type InProcessCluster struct {
	Brokers []*InProcess
	ZK      *ZooKeeper
}

// StartInProcessCluster starts n in-process brokers (ids 1..n) on a new
// ZooKeeper, each configured by kv as StartInProcess is (plus
// zookeeper.connect, broker.id and a short session timeout), and waits
// until every broker sees all n in its metadata. It stops them all when
// t ends. Without java and ZooKeeper it skips t (fails it in CI).
func StartInProcessCluster(t testing.TB, n int, kv ...string) *InProcessCluster {
	t.Helper()
	zk := StartZooKeeper(t, ZooKeeperConfig{})
	c := &InProcessCluster{ZK: zk}
	for i := 1; i <= n; i++ {
		args := append([]string{
			"broker.id", strconv.Itoa(i), "zookeeper.connect", zk.Addr() + "/samsa", "zookeeper.session.timeout.ms", "6000",
			"offsets.topic.replication.factor", strconv.Itoa(min(n, 3)), "controlled.shutdown.retry.backoff.ms", "200",
		}, kv...)
		c.Brokers = append(c.Brokers, StartInProcess(t, args...))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm, _ := c.Admin(t)
	for {
		if m, err := adm.Metadata(ctx); err == nil && len(m.Brokers) == n && m.Controller >= 1 {
			return c
		}
		select {
		case <-ctx.Done():
			t.Fatalf("in-process cluster: %d brokers never all registered", n)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Bootstrap is every broker's address, comma-joined.
func (c *InProcessCluster) Bootstrap() string {
	return strings.Join(c.Addrs(), ",")
}

// Addrs are the brokers' addresses.
func (c *InProcessCluster) Addrs() []string {
	out := make([]string, len(c.Brokers))
	for i, b := range c.Brokers {
		out[i] = b.Addr
	}
	return out
}

// Client returns a franz-go client seeded with every broker, closed when
// t ends.
func (c *InProcessCluster) Client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return NewClient(t, append([]kgo.Opt{kgo.SeedBrokers(c.Addrs()...)}, opts...)...)
}

// Admin returns an admin client on a Client(t, opts...), and that client.
func (c *InProcessCluster) Admin(t testing.TB, opts ...kgo.Opt) (*kadm.Client, *kgo.Client) {
	t.Helper()
	cl := c.Client(t, opts...)
	return kadm.NewClient(cl), cl
}

// Broker returns the broker with id (1..n).
func (c *InProcessCluster) Broker(id int) *InProcess {
	if id < 1 || id > len(c.Brokers) {
		panic(fmt.Sprintf("testkit: no in-process broker %d", id))
	}
	return c.Brokers[id-1]
}
