package wiring_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// clusterFigure sums a metric over every running broker of c but the
// one at index skip (-1: none).
func clusterFigure(t *testing.T, c *testkit.InProcessCluster, name string, skip int) float64 {
	t.Helper()
	var total float64
	for i, b := range c.Brokers {
		if i == skip {
			continue
		}
		v, _ := sum(gather(t, b.Broker), name, nil)
		total += v
	}
	return total
}

// clusterFigureOf sums the series of a metric with labels over every
// broker of c.
func clusterFigureOf(t *testing.T, c *testkit.InProcessCluster, name string, labels map[string]string) float64 {
	t.Helper()
	var total float64
	for _, b := range c.Brokers {
		v, _ := sum(gather(t, b.Broker), name, labels)
		total += v
	}
	return total
}

// waitFor polls cond until it holds, failing t after a deadline: the
// figures change as the cluster reacts (sessions expire, followers catch
// up), and there is no event to wait on but the figures themselves.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}

// TestClusterMetricsAndReadiness runs three brokers on ZooKeeper, stops
// one and starts it again, and checks what the metrics and the readiness
// check say: one active controller, leaders adding up, under-replicated
// partitions and ISR shrinks while a broker is down, expansions and
// caught-up readiness once it is back.
func TestClusterMetricsAndReadiness(t *testing.T) {
	c := testkit.StartInProcessCluster(t, 3, "replica.lag.time.max.ms", "2000", "offsets.topic.num.partitions", "3")
	adm, _ := c.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const partitions = 3
	if _, err := adm.CreateTopic(ctx, partitions, 3, nil, "replicated"); err != nil {
		t.Fatal(err)
	}
	// Spread over every partition, so that the group commits each.
	cl := c.Client(t, kgo.DefaultProduceTopic("replicated"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce := func(n int) {
		for i := range n {
			if err := cl.ProduceSync(ctx, &kgo.Record{Partition: int32(i % partitions), Value: []byte{byte(i)}}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(30)
	all := -1
	waitFor(t, "every broker caught up", func() bool {
		for _, b := range c.Brokers {
			if b.Broker.CaughtUp() != nil {
				return false
			}
		}
		return true
	})
	if v := clusterFigure(t, c, "kafka_controller_kafkacontroller_activecontrollercount", all); v != 1 {
		t.Errorf("active controllers over the cluster = %v, want 1", v)
	}
	// Every partition has one leader: the topic's and __consumer_offsets'
	// if it exists yet (ProduceSync does not create it).
	leaders := clusterFigure(t, c, "kafka_server_replicamanager_leadercount", all)
	hosted := clusterFigure(t, c, "kafka_server_replicamanager_partitioncount", all)
	if leaders < partitions || hosted != 3*leaders {
		t.Errorf("leaders %v and hosted partitions %v over the cluster, want at least %d leaders, each on 3 brokers", leaders, hosted, partitions)
	}
	if v := clusterFigure(t, c, "kafka_server_replicamanager_underreplicatedpartitions", all); v != 0 {
		t.Errorf("under-replicated partitions with every broker up = %v", v)
	}
	if v := clusterFigureOf(t, c, "kafka_network_requestmetrics_requests_total", map[string]string{"request": "FetchFollower"}); v < 1 {
		t.Errorf("no follower fetch counted in a replicating cluster")
	}

	// A group reads everything and commits: its coordinator reports each
	// partition's lag once, 0; more records make it exactly that many.
	group := c.Client(t, kgo.ConsumeTopics("replicated"), kgo.ConsumerGroup("lagging"), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for got := 0; got < 30; {
		fs := group.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of 30: %v", got, ctx.Err())
		}
		got += fs.NumRecords()
	}
	if err := group.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	group.Close()
	lag := map[string]string{"consumergroup": "lagging", "topic": "replicated"}
	lagIs := func(want float64) func() bool {
		return func() bool {
			var total, series float64
			for _, b := range c.Brokers {
				v, n := sum(gather(t, b.Broker), "kafka_consumergroup_lag", lag)
				total, series = total+v, series+float64(n)
			}
			return total == want && series == partitions
		}
	}
	waitFor(t, "the group's lag at 0 on every partition", lagIs(0))
	produce(5)
	waitFor(t, "the group's lag at the 5 records produced since", lagIs(5))

	down := 2
	c.Brokers[down].Close()
	waitFor(t, "the partitions under-replicated without broker 3", func() bool {
		return clusterFigure(t, c, "kafka_server_replicamanager_underreplicatedpartitions", down) >= partitions
	})
	if v := clusterFigure(t, c, "kafka_server_replicamanager_isrshrinks_total", down); v < 1 {
		t.Errorf("ISR shrinks while a broker is down = %v", v)
	}

	c.Brokers[down].Restart()
	waitFor(t, "broker 3 caught up after its restart", func() bool { return c.Brokers[down].Broker.CaughtUp() == nil })
	waitFor(t, "no partition under-replicated once broker 3 is back", func() bool {
		return clusterFigure(t, c, "kafka_server_replicamanager_underreplicatedpartitions", all) == 0
	})
	if v := clusterFigure(t, c, "kafka_server_replicamanager_isrexpands_total", all); v < partitions {
		t.Errorf("ISR expansions once the broker is back = %v, want at least %d", v, partitions)
	}
}
