package wiring_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/internal/wiring"
	"github.com/samsa-io/samsa/testkit"
)

// startNode starts one in-process cluster-mode broker on zk.
func startNode(t *testing.T, zk string, id int, dir string) *wiring.Node {
	t.Helper()
	cfg, err := config.Load(config.Input{Origin: "test", Values: map[string]string{
		"broker.id": fmt.Sprint(id), "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": dir,
		"zookeeper.connect": zk + "/samsa", "zookeeper.session.timeout.ms": "6000",
		"offsets.topic.replication.factor": "3", "offsets.topic.num.partitions": "6", "samsa.shutdown.timeout.ms": "20000",
		"controlled.shutdown.retry.backoff.ms": "200",
	}})
	if err != nil {
		t.Fatal(err)
	}
	w := io.Discard
	if os.Getenv("CLUSTER_LOG") != "" {
		w = os.Stderr
	}
	n, err := wiring.Start(cfg, slog.New(slog.NewTextHandler(w, nil)).With("broker", id))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Three in-process brokers on one ZooKeeper form one cluster: a topic
// created on one is placed over all three, every broker describes the
// whole cluster, records produced through any broker land on the
// leaders and come back.
func TestThreeBrokersFormACluster(t *testing.T) {
	zk := testkit.StartZooKeeper(t, testkit.ZooKeeperConfig{})
	var nodes []*wiring.Node
	for i := 1; i <= 3; i++ {
		nodes = append(nodes, startNode(t, zk.Addr(), i, t.TempDir()))
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := n.Stop(ctx); err != nil {
				t.Logf("stop: %v", err)
			}
			cancel()
		}
	})
	var seeds []string
	for _, n := range nodes {
		seeds = append(seeds, fmt.Sprintf("%s:%d", n.Host, n.Port))
	}
	cl := testkit.NewClient(t, kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("t"), kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var brokers kadm.BrokerDetails
	for ctx.Err() == nil {
		m, err := adm.Metadata(ctx)
		if err == nil && len(m.Brokers) == 3 && m.Controller >= 1 {
			brokers = m.Brokers
			break
		}
		tick(ctx)
	}
	if len(brokers) != 3 {
		t.Fatalf("brokers in metadata: %v", brokers)
	}
	resp, err := adm.CreateTopic(ctx, 6, 3, nil, "t")
	if err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	// Every broker hears of the topic from the controller in its own
	// time; a client asking one that has not yet is told to retry.
	var td kadm.TopicDetails
	for ctx.Err() == nil {
		td, err = adm.ListTopics(ctx, "t")
		if err == nil && len(td["t"].Partitions) == 6 {
			break
		}
		tick(ctx)
	}
	leaders := map[int32]int{}
	for _, p := range td["t"].Partitions {
		if len(p.Replicas) != 3 || len(p.ISR) != 3 {
			t.Fatalf("partition %d: replicas %v isr %v", p.Partition, p.Replicas, p.ISR)
		}
		leaders[p.Leader]++
	}
	if len(leaders) != 3 {
		t.Fatalf("leaders not spread: %v", leaders)
	}
	for i := range 60 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	got := 0
	for got < 60 && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil && ctx.Err() == nil {
			t.Fatalf("fetch: %v", err)
		}
		got += fs.NumRecords()
	}
	if got != 60 {
		t.Fatalf("consumed %d of 60", got)
	}
	if _, err := adm.DeleteTopics(ctx, "t"); err != nil {
		t.Fatal(err)
	}
}

// tick waits for the next poll of a remote view (the cluster as a client
// sees it has no event to wait on), or ctx's end.
func tick(ctx context.Context) {
	t := time.NewTimer(20 * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// Records acknowledged with acks=all survive their leader: with RF 3 the
// followers have them, and after a broker stops every record is read back
// from the new leaders.
func TestAcknowledgedRecordsSurviveALeader(t *testing.T) {
	zk := testkit.StartZooKeeper(t, testkit.ZooKeeperConfig{})
	var nodes []*wiring.Node
	for i := 1; i <= 3; i++ {
		nodes = append(nodes, startNode(t, zk.Addr(), i, t.TempDir()))
	}
	stopped := map[int]bool{}
	t.Cleanup(func() {
		for i, n := range nodes {
			if !stopped[i] {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				if err := n.Stop(ctx); err != nil {
					t.Errorf("stop broker %d: %v", i+1, err)
				}
				cancel()
			}
		}
	})
	var seeds []string
	for _, n := range nodes {
		seeds = append(seeds, fmt.Sprintf("%s:%d", n.Host, n.Port))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	prod := testkit.NewClient(t, kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("r"), kgo.RequiredAcks(kgo.AllISRAcks()))
	adm := kadm.NewClient(prod)
	for ctx.Err() == nil {
		if m, err := adm.Metadata(ctx); err == nil && len(m.Brokers) == 3 {
			break
		}
		tick(ctx)
	}
	if resp, err := adm.CreateTopic(ctx, 3, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}, "r"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	const n = 300
	for i := range n {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
	if err := nodes[0].Stop(sctx); err != nil {
		t.Fatalf("stop broker 1: %v", err)
	}
	scancel()
	stopped[0] = true
	cons := testkit.NewClient(t, kgo.SeedBrokers(seeds[1:]...), kgo.ConsumeTopics("r"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]bool{}
	for len(seen) < n && ctx.Err() == nil {
		fs := cons.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
	if len(seen) != n {
		t.Fatalf("read back %d of %d acknowledged records after broker 1 stopped", len(seen), n)
	}
}
