package mixed

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/samsa-io/samsa/testkit"
)

// killRestart kills broker b with SIGKILL under l's load, waits until
// writes are acknowledged without it, starts it again and waits until it
// is back in every partition's ISR.
func killRestart(t *testing.T, c *testkit.Cluster, l *ackedLoad, b *testkit.ClusterBroker) {
	t.Helper()
	ctrl, _ := c.Controller()
	t.Logf("kill -9 broker %d (%s; controller %d)", b.ID(), b.Kind(), ctrl)
	b.Kill()
	l.waitProgress(t, 300, 2*time.Minute, "with broker "+b.Kind().String()+" dead")
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	waitFullISR(t, c, l.topic, 3, 3, 2*time.Minute)
	l.waitProgress(t, 300, time.Minute, "after the restart")
}

// controlledShutdownDone is what each kind logs when the controller
// answered its ControlledShutdown with every leadership moved away.
var controlledShutdownDone = map[testkit.ClusterKind]string{
	testkit.Samsa:   "controlled shutdown: the controller moved every leadership away",
	testkit.Kafka39: "Controlled shutdown request returned successfully",
}

// stopRestart stops broker b with SIGTERM under l's load, which makes it
// ask the controller (of the other kind, in these tests) to move its
// leaderships away before it exits, checks that the controller did, and
// starts it again.
func stopRestart(t *testing.T, c *testkit.Cluster, l *ackedLoad, b *testkit.ClusterBroker) {
	t.Helper()
	ctrl, _ := controllerOf(c)
	t.Logf("SIGTERM broker %d (%s; controller %d, %s)", b.ID(), b.Kind(), ctrl.ID(), ctrl.Kind())
	mark := b.OutputMark()
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	if want := controlledShutdownDone[b.Kind()]; !strings.Contains(b.OutputSince(mark), want) {
		t.Errorf("broker %d (%s) stopped without the controller (%s) moving its leaderships: no %q in its output",
			b.ID(), b.Kind(), ctrl.Kind(), want)
	}
	l.waitProgress(t, 300, time.Minute, "with broker "+b.Kind().String()+" stopped")
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	waitFullISR(t, c, l.topic, 3, 3, 2*time.Minute)
}

// electPreferred asks the controller to give each partition of topic
// back to its preferred leader and waits until partition p is led by
// broker id.
func electPreferred(t *testing.T, ctx context.Context, c *testkit.Cluster, topic string, p, id int32) {
	t.Helper()
	set := kadm.TopicsSet{}
	set.Add(topic, 0, 1, 2)
	if _, err := admin(t, c).ElectLeaders(ctx, kadm.ElectPreferredReplica, set); err != nil {
		t.Fatalf("preferred leader election: %v", err)
	}
	eventually(t, time.Minute, "the preferred leader back", func() error {
		st, err := partitionState(c, topic, p)
		if err == nil && st.Leader != id {
			err = errorf("partition %d led by %d", p, st.Leader)
		}
		return err
	})
}

// leaderKills is the test of one mixed cluster: acks=all load on an RF 3
// topic whose three partitions each broker leads one of, while leaders of
// both kinds are killed with SIGKILL and restarted, or stopped with a
// controlled shutdown the other kind's controller runs, first under a
// Kafka controller, then under a samsa one; every acknowledged record
// must be read back.
func leaderKills(t *testing.T, c *testkit.Cluster) {
	ctx := deadline(t, 6*time.Minute)
	const topic = "acked"
	ctrl := moveControllerTo(t, c, testkit.Kafka39)
	createTopic(t, c, topic, nil)
	l := startLoad(t, ctx, c, topic)
	l.waitProgress(t, 300, time.Minute, "at start")

	// Under the Kafka controller: a samsa leader dies, then, leading
	// again, stops with a controlled shutdown; then the controller itself
	// (leading a partition too) dies.
	samsaP := samsaPartition(c)
	killRestart(t, c, l, c.BrokerByID(leaderOf(t, c, topic, samsaP)))
	electPreferred(t, ctx, c, topic, samsaP, samsaP+1)
	stopRestart(t, c, l, c.BrokerByID(samsaP+1))
	killRestart(t, c, l, ctrl)

	// Under a samsa controller: a Kafka leader dies (made leader again by
	// a preferred election the samsa controller runs) and then stops with
	// a controlled shutdown; then the samsa controller dies.
	ctrl = moveControllerTo(t, c, testkit.Samsa)
	kafkaP := kafkaPartition(c)
	electPreferred(t, ctx, c, topic, kafkaP, kafkaP+1)
	killRestart(t, c, l, c.BrokerByID(kafkaP+1))
	electPreferred(t, ctx, c, topic, kafkaP, kafkaP+1)
	stopRestart(t, c, l, c.BrokerByID(kafkaP+1))
	killRestart(t, c, l, ctrl)

	readAll(t, ctx, c, topic, l.finish(t, ctx))
	checkKafkaLogs(t, c)
}

// samsaPartition is a partition whose preferred leader is a samsa
// broker; createTopic makes broker p+1 the preferred leader of p.
func samsaPartition(c *testkit.Cluster) int32 { return firstOfKind(c, testkit.Samsa) }

// kafkaPartition is a partition whose preferred leader is a Kafka broker.
func kafkaPartition(c *testkit.Cluster) int32 { return firstOfKind(c, testkit.Kafka39) }

func firstOfKind(c *testkit.Cluster, kind testkit.ClusterKind) int32 {
	for _, b := range c.Brokers() {
		if b.Kind() == kind {
			return b.ID() - 1
		}
	}
	return -1
}

// TestOneKafkaTwoSamsa: broker 1 Kafka 3.9.1, brokers 2 and 3 samsa.
func TestOneKafkaTwoSamsa(t *testing.T) { leaderKills(t, mixedCluster(t, 1)) }

// TestTwoKafkaOneSamsa: brokers 1 and 2 Kafka 3.9.1, broker 3 samsa.
func TestTwoKafkaOneSamsa(t *testing.T) { leaderKills(t, mixedCluster(t, 1, 2)) }
