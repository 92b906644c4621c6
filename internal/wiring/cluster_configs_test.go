package wiring_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/wiring"
	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/wire/kerr"
)

// testCluster is n in-process brokers on one ZooKeeper, ids 1..n, and a
// client that knows them all.
type testCluster struct {
	nodes []*wiring.Node
	dirs  []string
	cl    *kgo.Client
	adm   *kadm.Client
}

func startTestCluster(t *testing.T, ctx context.Context, n int) *testCluster {
	t.Helper()
	zk := testkit.StartZooKeeper(t, testkit.ZooKeeperConfig{})
	tc := &testCluster{}
	for i := 1; i <= n; i++ {
		dir := t.TempDir()
		tc.dirs = append(tc.dirs, dir)
		tc.nodes = append(tc.nodes, startNode(t, zk.Addr(), i, dir))
	}
	t.Cleanup(func() {
		for _, n := range tc.nodes {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := n.Stop(ctx); err != nil {
				t.Logf("stop: %v", err)
			}
			cancel()
		}
	})
	var seeds []string
	for _, n := range tc.nodes {
		seeds = append(seeds, fmt.Sprintf("%s:%d", n.Host, n.Port))
	}
	tc.cl = testkit.NewClient(t, kgo.SeedBrokers(seeds...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	tc.adm = kadm.NewClient(tc.cl)
	for ctx.Err() == nil {
		m, err := tc.adm.Metadata(ctx)
		if err == nil && len(m.Brokers) == n && m.Controller >= 1 {
			return tc
		}
		tick(ctx)
	}
	t.Fatal("the cluster did not form")
	return nil
}

// on sends req to broker id and fails the test on a transport error.
func (tc *testCluster) on(t *testing.T, ctx context.Context, id int32, req kmsg.Request) kmsg.Response {
	t.Helper()
	resp, err := tc.cl.Broker(int(id)).Request(ctx, req)
	if err != nil {
		t.Fatalf("broker %d: %v", id, err)
	}
	return resp
}

func incrementalAlter(typ kmsg.ConfigResourceType, name string, validateOnly bool, kv ...string) *kmsg.IncrementalAlterConfigsRequest {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly = validateOnly
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = typ, name
	for i := 0; i+1 < len(kv); i += 2 {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = kv[i], kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr(kv[i+1])
		r.Configs = append(r.Configs, c)
	}
	req.Resources = append(req.Resources, r)
	return req
}

// expectAlter sends an IncrementalAlterConfigs of one resource to
// broker id and fails the test unless its code is want.
func (tc *testCluster) expectAlter(t *testing.T, ctx context.Context, id int32, want kerr.Code, req *kmsg.IncrementalAlterConfigsRequest) {
	t.Helper()
	resp := tc.on(t, ctx, id, req).(*kmsg.IncrementalAlterConfigsResponse)
	if len(resp.Resources) != 1 || kerr.Code(resp.Resources[0].ErrorCode) != want {
		t.Fatalf("%+v on broker %d: %+v, want %v", req.Resources, id, resp.Resources, want)
	}
}

// described is one config as DescribeConfigs on broker id gives it.
type described struct {
	value  string
	source kmsg.ConfigSource
}

func (tc *testCluster) describe(t *testing.T, ctx context.Context, id int32, typ kmsg.ConfigResourceType, name string, keys ...string) (map[string]described, kerr.Code) {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.ConfigNames = typ, name, keys
	req.Resources = append(req.Resources, r)
	resp := tc.on(t, ctx, id, req).(*kmsg.DescribeConfigsResponse)
	out := map[string]described{}
	for _, c := range resp.Resources[0].Configs {
		d := described{source: c.Source}
		if c.Value != nil {
			d.value = *c.Value
		}
		out[c.Name] = d
	}
	return out, kerr.Code(resp.Resources[0].ErrorCode)
}

// segments counts the segment files of topic's partitions in dir.
func segments(t *testing.T, dir, topic string, partitions int) (held, total int) {
	t.Helper()
	for p := range partitions {
		logs, err := filepath.Glob(filepath.Join(dir, fmt.Sprintf("%s-%d", topic, p), "*.log"))
		if err != nil {
			t.Fatal(err)
		}
		if len(logs) > 0 {
			held++
		}
		total += len(logs)
	}
	return held, total
}

// rollsEverywhere produces to every partition of topic until each
// broker's logs of it have rolled (more segments than partitions held),
// which a segment.bytes of a few KiB makes happen within a few records
// and the 1 GiB default never: the config reached every broker's logs.
func (tc *testCluster) rollsEverywhere(t *testing.T, ctx context.Context, topic string, partitions int) {
	t.Helper()
	value := make([]byte, 600)
	for ctx.Err() == nil {
		for p := range partitions {
			if err := tc.cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: int32(p), Value: value}).FirstErr(); err != nil {
				t.Fatalf("produce to %s-%d: %v", topic, p, err)
			}
		}
		rolled := 0
		for _, dir := range tc.dirs {
			if held, total := segments(t, dir, topic, partitions); held > 0 && total > held {
				rolled++
			}
		}
		if rolled == len(tc.dirs) {
			return
		}
		tick(ctx)
	}
	t.Fatalf("the logs of %s did not roll on every broker", topic)
}

func (tc *testCluster) createTopic(t *testing.T, ctx context.Context, topic string, partitions int32, rf int16) {
	t.Helper()
	resp, err := tc.adm.CreateTopic(ctx, partitions, rf, nil, topic)
	if err != nil || resp.Err != nil {
		t.Fatalf("create %s: %v %v", topic, err, resp.Err)
	}
	// Every broker learns of the topic in its own time.
	for id := int32(1); id <= int32(len(tc.nodes)); id++ {
		for ctx.Err() == nil {
			if _, code := tc.describe(t, ctx, id, kmsg.ConfigResourceTypeTopic, topic, "segment.bytes"); code == kerr.None {
				break
			}
			tick(ctx)
		}
	}
}

// A topic config altered through one broker is in ZooKeeper, described
// alike by every broker, and applied to the logs on every broker that
// holds a partition of the topic; validate_only changes nothing, and
// bad requests are refused as Kafka refuses them.
func TestClusterTopicConfigs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	tc := startTestCluster(t, ctx, 3)
	// RF 1 over three partitions: each broker holds (and leads) one.
	tc.createTopic(t, ctx, "cfg", 3, 1)

	tc.expectAlter(t, ctx, 2, kerr.None, incrementalAlter(kmsg.ConfigResourceTypeTopic, "cfg", true, "segment.bytes", "2048"))
	tc.expectAlter(t, ctx, 2, kerr.InvalidConfig, incrementalAlter(kmsg.ConfigResourceTypeTopic, "cfg", false, "segment.bytes", "1"))
	tc.expectAlter(t, ctx, 2, kerr.UnknownTopicOrPartition, incrementalAlter(kmsg.ConfigResourceTypeTopic, "nope", false, "segment.bytes", "2048"))
	if _, code := tc.describe(t, ctx, 3, kmsg.ConfigResourceTypeTopic, "nope"); code != kerr.UnknownTopicOrPartition {
		t.Fatalf("describe unknown topic: %v", code)
	}
	for id := int32(1); id <= 3; id++ {
		got, code := tc.describe(t, ctx, id, kmsg.ConfigResourceTypeTopic, "cfg", "segment.bytes")
		if code != kerr.None || got["segment.bytes"].source != kmsg.ConfigSourceDefaultConfig {
			t.Fatalf("broker %d after validate_only: %v %+v", id, code, got)
		}
	}

	tc.expectAlter(t, ctx, 1, kerr.None, incrementalAlter(kmsg.ConfigResourceTypeTopic, "cfg", false, "segment.bytes", "2048", "retention.ms", "3600000"))
	for id := int32(1); id <= 3; id++ {
		got, code := tc.describe(t, ctx, id, kmsg.ConfigResourceTypeTopic, "cfg", "segment.bytes", "retention.ms")
		want := map[string]described{"segment.bytes": {"2048", kmsg.ConfigSourceDynamicTopicConfig}, "retention.ms": {"3600000", kmsg.ConfigSourceDynamicTopicConfig}}
		if code != kerr.None || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("broker %d describes %v %+v, want %+v", id, code, got, want)
		}
	}
	tc.rollsEverywhere(t, ctx, "cfg", 3)

	// The legacy AlterConfigs replaces the topic's whole set.
	legacy := kmsg.NewPtrAlterConfigsRequest()
	lr := kmsg.NewAlterConfigsRequestResource()
	lr.ResourceType, lr.ResourceName = kmsg.ConfigResourceTypeTopic, "cfg"
	lr.Configs = []kmsg.AlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: kmsg.StringPtr("7200000")}}
	legacy.Resources = append(legacy.Resources, lr)
	if r := tc.on(t, ctx, 3, legacy).(*kmsg.AlterConfigsResponse); r.Resources[0].ErrorCode != 0 {
		t.Fatalf("legacy alter: %+v", r.Resources)
	}
	got, _ := tc.describe(t, ctx, 2, kmsg.ConfigResourceTypeTopic, "cfg", "segment.bytes", "retention.ms")
	if got["segment.bytes"].source != kmsg.ConfigSourceDefaultConfig || got["retention.ms"] != (described{"7200000", kmsg.ConfigSourceDynamicTopicConfig}) {
		t.Fatalf("after the legacy alter: %+v", got)
	}
	// Group configs are KRaft-only in Kafka 3.9.
	tc.expectAlter(t, ctx, 1, kerr.InvalidRequest, incrementalAlter(kmsg.ConfigResourceTypeGroupConfig, "g", false, "consumer.session.timeout.ms", "50000"))
	if _, code := tc.describe(t, ctx, 1, kmsg.ConfigResourceTypeGroupConfig, "g"); code != kerr.InvalidRequest {
		t.Fatalf("describe a group: %v", code)
	}
}

// Dynamic broker configs live in /config/brokers/<id> and
// /config/brokers/<default>; every broker applies the cluster default
// (here log.segment.bytes, which topics without their own segment.bytes
// inherit: the logs roll) and describes it with its source, and a
// broker's own config is set through that broker only.
func TestClusterBrokerConfigs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	tc := startTestCluster(t, ctx, 3)
	tc.createTopic(t, ctx, "inherit", 3, 1)

	tc.expectAlter(t, ctx, 1, kerr.InvalidRequest, incrementalAlter(kmsg.ConfigResourceTypeBroker, "2", false, "log.cleaner.threads", "2"))
	tc.expectAlter(t, ctx, 1, kerr.InvalidRequest, incrementalAlter(kmsg.ConfigResourceTypeBroker, "", false, "log.dirs", "/tmp/x"))
	tc.expectAlter(t, ctx, 2, kerr.None, incrementalAlter(kmsg.ConfigResourceTypeBroker, "2", false, "log.cleaner.threads", "2"))
	tc.expectAlter(t, ctx, 3, kerr.None, incrementalAlter(kmsg.ConfigResourceTypeBroker, "", false, "log.segment.bytes", "2048"))
	// Brokers apply the change when its notification reaches them: poll.
	for id := int32(1); id <= 3; id++ {
		want := map[string]described{"log.segment.bytes": {"2048", kmsg.ConfigSourceDynamicDefaultBrokerConfig}}
		if id == 2 {
			want["log.cleaner.threads"] = described{"2", kmsg.ConfigSourceDynamicBrokerConfig}
		}
		var got map[string]described
		for ctx.Err() == nil {
			got, _ = tc.describe(t, ctx, id, kmsg.ConfigResourceTypeBroker, fmt.Sprint(id), "log.segment.bytes", "log.cleaner.threads")
			if got["log.segment.bytes"] == want["log.segment.bytes"] && (id != 2 || got["log.cleaner.threads"] == want["log.cleaner.threads"]) {
				break
			}
			tick(ctx)
		}
		if ctx.Err() != nil {
			t.Fatalf("broker %d describes %+v, want %+v", id, got, want)
		}
		def, code := tc.describe(t, ctx, id, kmsg.ConfigResourceTypeBroker, "")
		if code != kerr.None || def["log.segment.bytes"] != want["log.segment.bytes"] || len(def) != 1 {
			t.Fatalf("broker %d cluster default: %v %+v", id, code, def)
		}
	}
	tc.rollsEverywhere(t, ctx, "inherit", 3)
	if _, err := os.Stat(tc.dirs[0]); err != nil {
		t.Fatal(err)
	}
}

// Producer ids come from blocks the controller allocates cluster-wide
// (AllocateProducerIds): idempotent producers on different brokers never
// share an id, and a broker's block lasts for many producers.
func TestClusterProducerIDsAreUnique(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	tc := startTestCluster(t, ctx, 3)
	seen := map[int64]int32{}
	for round := range 30 {
		for id := int32(1); id <= 3; id++ {
			for ctx.Err() == nil {
				resp := tc.on(t, ctx, id, kmsg.NewPtrInitProducerIDRequest()).(*kmsg.InitProducerIDResponse)
				if resp.ErrorCode == kerr.CoordinatorLoadInProgress.Int16() {
					tick(ctx) // the first block is on its way
					continue
				}
				if resp.ErrorCode != 0 || resp.ProducerEpoch != 0 {
					t.Fatalf("round %d broker %d: %v epoch %d", round, id, kerr.Code(resp.ErrorCode), resp.ProducerEpoch)
				}
				if other, dup := seen[resp.ProducerID]; dup {
					t.Fatalf("producer id %d from broker %d and broker %d", resp.ProducerID, other, id)
				}
				seen[resp.ProducerID] = id
				break
			}
		}
	}
	// Each broker has one block of 1000: its ids lie in it.
	blocks := map[int32]map[int64]bool{}
	for pid, id := range seen {
		if blocks[id] == nil {
			blocks[id] = map[int64]bool{}
		}
		blocks[id][pid/1000] = true
	}
	for id, b := range blocks {
		if len(b) != 1 {
			t.Errorf("broker %d's ids span blocks %v", id, b)
		}
	}
	if len(blocks) != 3 {
		t.Fatalf("ids by broker: %v", blocks)
	}
}
