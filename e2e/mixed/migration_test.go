package mixed

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// groupReader reads a topic as one consumer group, one member at a time:
// each member polls until it has n new records, commits what it read and
// leaves, and the next member resumes from those commits. Across members
// every record must then be read exactly once.
type groupReader struct {
	group, topic string
	seen         map[string]int
}

// read runs one member until it has read n records (or, with n < 0,
// until it has read every value of want).
func (g *groupReader) read(t *testing.T, ctx context.Context, c *testkit.Cluster, n int, want []string) {
	t.Helper()
	m := client(t, c, kgo.ConsumerGroup(g.group), kgo.ConsumeTopics(g.topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer m.Close()
	missing := func() int {
		k := 0
		for _, v := range want {
			if g.seen[v] == 0 {
				k++
			}
		}
		return k
	}
	got := 0
	for ctx.Err() == nil && ((n >= 0 && got < n) || (n < 0 && missing() > 0)) {
		fs := m.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			g.seen[string(r.Value)]++
			got++
		})
		if err := m.CommitUncommittedOffsets(ctx); err != nil {
			t.Fatalf("group %s: commit: %v", g.group, err)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("group %s: %d of %d records read when time ran out", g.group, got, n)
	}
}

// exactlyOnce fails t unless each value of want was read once.
func (g *groupReader) exactlyOnce(t *testing.T, want []string) {
	t.Helper()
	lost, twice := 0, 0
	for _, v := range want {
		switch g.seen[v] {
		case 0:
			lost++
		case 1:
		default:
			twice++
		}
	}
	if lost > 0 || twice > 0 {
		t.Errorf("group %s: of %d acknowledged records %d never read and %d read more than once "+
			"(members resume from the group's commits)", g.group, len(want), lost, twice)
	}
}

// TestRollingMigration is the migration issue #21 promises: three Kafka
// 3.9.1 brokers with an RF 3 topic under an acks=all producer and a
// consumer group; each broker in turn is stopped with a controlled
// shutdown (SIGTERM) and started again as samsa on the same
// server.properties and log.dirs; then one is rolled back to Kafka.
// Nothing acknowledged is lost, the producer sees no error it cannot
// retry, and the group continues from its commits.
func TestRollingMigration(t *testing.T) {
	c := mixedCluster(t, 1, 2, 3)
	ctx := deadline(t, 6*time.Minute)
	const topic = "migrating"
	createTopic(t, c, topic, nil)
	l := startLoad(t, ctx, c, topic)
	g := &groupReader{group: "migrating-group", topic: topic, seen: map[string]int{}}
	g.read(t, ctx, c, 500, nil)

	roll := func(b *testkit.ClusterBroker, to testkit.ClusterKind) {
		t.Helper()
		ctrl, _ := c.Controller()
		from := b.Kind()
		began := time.Now()
		if err := b.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := b.SetKind(to); err != nil {
			t.Fatal(err)
		}
		if err := b.Start(); err != nil {
			t.Fatal(err)
		}
		waitFullISR(t, c, topic, 3, 3, 2*time.Minute)
		t.Logf("broker %d: %s -> %s in %v (controller was %d); cluster %s", b.ID(), from, to,
			time.Since(began).Round(time.Millisecond), ctrl, describe(c))
		l.waitProgress(t, 300, time.Minute, "after broker "+b.Kind().String()+" took over")
		g.read(t, ctx, c, 500, nil)
	}
	for _, b := range c.Brokers() {
		roll(b, testkit.Samsa)
	}
	roll(c.Broker(1), testkit.Kafka39)

	acked := l.finish(t, ctx)
	readAll(t, ctx, c, topic, acked)
	g.read(t, ctx, c, -1, acked)
	g.exactlyOnce(t, acked)
	checkKafkaLogs(t, c)
}
