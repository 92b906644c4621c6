package cluster

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// Client quotas in a cluster live in ZooKeeper as Kafka 3.9 keeps them:
// Kafka 3.9.1's kafka-configs.sh sets them through one broker, the
// znodes and change notifications are Kafka's (a user's quota next to
// its SCRAM credential in one znode), every broker describes the same
// quotas, a producer is throttled by a broker that did not take the
// change, and a removal made through a third broker reaches them all.
func TestClientQuotasAcrossCluster(t *testing.T) {
	c := sharedCluster(t)
	app, user := name(t, "app"), name(t, "user")
	configs := func(b *testkit.ClusterBroker, args ...string) {
		t.Helper()
		runKafka39(t, testkit.Kafka39ConfigCommand, append([]string{"--bootstrap-server", b.Addr(), "--alter"}, args...)...)
	}
	one, two, three := c.BrokerByID(1), c.BrokerByID(2), c.BrokerByID(3)
	configs(one, "--entity-type", "clients", "--entity-name", app, "--add-config", "producer_byte_rate=1024,request_percentage=200")
	configs(one, "--entity-type", "users", "--entity-default", "--entity-type", "clients", "--entity-name", app, "--add-config", "consumer_byte_rate=2048")
	// An address no test connects from: its connection rate is only
	// stored and described here.
	ip := "127.0.0.99"
	configs(three, "--entity-type", "ips", "--entity-name", ip, "--add-config", "connection_creation_rate=5")
	// AlterUserScramCredentials through 3, then AlterClientQuotas through
	// 2 (the tool takes one or the other at a time), both into
	// /config/users/<user>.
	configs(three, "--entity-type", "users", "--entity-name", user, "--add-config", "SCRAM-SHA-256=[iterations=4096,password=secret]")
	configs(two, "--entity-type", "users", "--entity-name", user, "--add-config", "consumer_byte_rate=4096")

	znode := func(path string) map[string]string {
		t.Helper()
		data, _, err := c.ZooKeeperConn().Get(c.ZKPath(path))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var node struct {
			Version *int              `json:"version"`
			Config  map[string]string `json:"config"`
		}
		if err := json.Unmarshal(data, &node); err != nil || node.Version == nil || *node.Version != 1 || node.Config == nil {
			t.Fatalf("%s = %s, not Kafka's {\"version\":1,\"config\":{...}} (%v)", path, data, err)
		}
		return node.Config
	}
	if got, want := znode("/config/clients/"+app), map[string]string{"producer_byte_rate": "1024", "request_percentage": "200.0"}; !maps.Equal(got, want) {
		t.Errorf("/config/clients/%s config %v, want %v", app, got, want)
	}
	if got, want := znode("/config/users/<default>/clients/"+app), map[string]string{"consumer_byte_rate": "2048"}; !maps.Equal(got, want) {
		t.Errorf("/config/users/<default>/clients/%s config %v, want %v", app, got, want)
	}
	userCfg := znode("/config/users/" + user)
	if userCfg["consumer_byte_rate"] != "4096" || !strings.HasSuffix(userCfg["SCRAM-SHA-256"], ",iterations=4096") || len(userCfg) != 2 {
		t.Errorf("/config/users/%s config %v: want the quota next to the SCRAM credential", user, userCfg)
	}
	if got, want := znode("/config/ips/"+ip), map[string]string{"connection_creation_rate": "5"}; !maps.Equal(got, want) {
		t.Errorf("/config/ips/%s config %v, want %v", ip, got, want)
	}
	checkNotified(t, c, "clients/"+app, "users/<default>/clients/"+app, "users/"+user, "ips/"+ip)

	// Every broker has heard: the same answer from each.
	want := []string{
		"client-id=" + app + " producer_byte_rate=1024 request_percentage=200",
		"user=" + user + " consumer_byte_rate=4096",
		"user=<default>,client-id=" + app + " consumer_byte_rate=2048",
		"ip=" + ip + " connection_creation_rate=5",
	}
	waitDescribed(t, c, []string{app, user, ip}, want)

	// The address's rate, set through 3, refuses its connections at 2
	// past about 50 at once (5/s over the 10 s a new rate spans), once
	// 2 has heard of it through the change notification (a description
	// reads ZooKeeper itself, so it does not say when).
	served := 0
	for served < 200 && testkit.Answered(t, two.Addr(), ip) {
		served++
	}
	if served == 200 {
		t.Errorf("broker 2 served 200 connections from %s at once, over its connection_creation_rate of 5/s", ip)
	}
	if !testkit.Answered(t, two.Addr(), "127.0.0.98") {
		t.Error("broker 2 refused an address without a connection quota")
	}

	// Broker 2 leads the topic; the client's quota went through 1.
	// 1024 B/s over an 11 s window admits about 10 KiB before the first
	// throttle: the third 5000-byte record is over it, or a later one
	// if 2 hears of the quota late.
	topic := name(t, "topic")
	createAssigned(t, c, topic, 2)
	h := &throttleSeen{by: map[int32]time.Duration{}}
	cl := client(t, []string{two.Addr()}, kgo.ClientID(app), kgo.WithHooks(h),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.DefaultProduceTopic(topic))
	ctx := deadline(t, 60*time.Second)
	for i := 0; i < 20 && h.seen(2) <= 0; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: make([]byte, 5000)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if d := h.seen(2); d <= 0 {
		t.Fatalf("broker 2 did not throttle %s's produce of 100 kB (throttles seen: %v)", app, h.all())
	}

	// Removed through broker 3: the znode stays with an empty config, as
	// Kafka leaves it, and no broker describes the entity any more.
	configs(three, "--entity-type", "clients", "--entity-name", app, "--delete-config", "producer_byte_rate,request_percentage")
	if got := znode("/config/clients/" + app); len(got) != 0 {
		t.Errorf("/config/clients/%s after the removal: %v", app, got)
	}
	waitDescribed(t, c, []string{app, user, ip}, want[1:])
}

// throttleSeen records the longest throttle each broker asked for.
type throttleSeen struct {
	mu sync.Mutex
	by map[int32]time.Duration
}

func (h *throttleSeen) OnBrokerThrottle(m kgo.BrokerMetadata, d time.Duration, _ bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.by[m.NodeID] = max(h.by[m.NodeID], d)
}

func (h *throttleSeen) seen(id int32) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.by[id]
}

func (h *throttleSeen) all() map[int32]time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.by)
}

// checkNotified checks that a change notification of Kafka's form
// ({"version":2,"entity_path":"<path>"}) names each entity path.
func checkNotified(t *testing.T, c *testkit.Cluster, paths ...string) {
	t.Helper()
	conn := c.ZooKeeperConn()
	nodes, _, err := conn.Children(c.ZKPath("/config/changes"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		if data, _, err := conn.Get(c.ZKPath("/config/changes/" + n)); err == nil {
			seen[string(data)] = true
		}
	}
	for _, p := range paths {
		if note := `{"version":2,"entity_path":"` + p + `"}`; !seen[note] {
			t.Errorf("no change notification %s among %d", note, len(nodes))
		}
	}
}

// waitDescribed asks every broker for all client quotas until each
// answers want for the entities naming one of names.
func waitDescribed(t *testing.T, c *testkit.Cluster, names, want []string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	ctx := deadline(t, 30*time.Second)
	for _, b := range c.Brokers() {
		cl := client(t, []string{b.Addr()})
		var got []string
		for {
			req := kmsg.NewPtrDescribeClientQuotasRequest()
			resp, err := req.RequestWith(ctx, cl)
			if err == nil {
				err = kerr.ErrorForCode(resp.ErrorCode)
			}
			if err != nil {
				t.Fatalf("broker %d: DescribeClientQuotas: %v", b.ID(), err)
			}
			got = describedFor(resp, names)
			if slices.Equal(got, want) {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("broker %d describes %q, want %q", b.ID(), got, want)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// describedFor is resp's entries that name one of names, one line
// each ("user=<default>,client-id=app consumer_byte_rate=2048"), sorted.
func describedFor(resp *kmsg.DescribeClientQuotasResponse, names []string) []string {
	var out []string
	for _, en := range resp.Entries {
		var parts []string
		ours := false
		for _, e := range en.Entity {
			n := "<default>"
			if e.Name != nil {
				n = *e.Name
				ours = ours || slices.Contains(names, n)
			}
			parts = append(parts, e.Type+"="+n)
		}
		if !ours {
			continue
		}
		line := strings.Join(parts, ",")
		for _, v := range en.Values {
			line += fmt.Sprintf(" %s=%v", v.Key, v.Value)
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}
