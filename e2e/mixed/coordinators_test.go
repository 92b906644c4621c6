package mixed

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// coordinatedBy finds a name with prefix whose coordinator (a group's or
// a transactional id's, as find says) is a broker that want accepts: the
// leader of its __consumer_offsets or __transaction_state partition.
func coordinatedBy(t *testing.T, c *testkit.Cluster, want func(*testkit.ClusterBroker) bool, prefix string,
	find func(context.Context, ...string) kadm.FindCoordinatorResponses) (string, *testkit.ClusterBroker) {
	t.Helper()
	var names []string
	for i := range 30 {
		names = append(names, fmt.Sprintf("%s-%d", prefix, i))
	}
	var name string
	var b *testkit.ClusterBroker
	// The first FindCoordinator creates the internal topic; until its
	// partitions have leaders the answer is COORDINATOR_NOT_AVAILABLE.
	eventually(t, time.Minute, "a coordinator for "+prefix, func() error {
		resps := find(deadline(t, 10*time.Second), names...)
		for _, n := range names {
			r, ok := resps[n]
			if !ok || r.Err != nil {
				return fmt.Errorf("%s: %v", n, r.Err)
			}
			if o := c.BrokerByID(r.NodeID); o != nil && want(o) {
				name, b = n, o
				return nil
			}
		}
		return fmt.Errorf("none of %d names has the coordinator wanted", len(names))
	})
	return name, b
}

// txnBatch writes values in one transaction through p and commits it,
// or aborts it when abort is set.
func txnBatch(t *testing.T, ctx context.Context, p *kgo.Client, values []string, abort bool) {
	t.Helper()
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("transactional produce: %v", err)
		}
	}
	end := kgo.TryCommit
	if abort {
		end = kgo.TryAbort
	}
	if err := p.EndTransaction(ctx, end); err != nil {
		t.Fatalf("ending the transaction (abort %v): %v", abort, err)
	}
}

func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return out
}

// consumeCommitted joins group with a read_committed member, reads until
// it has exactly want (in any order; failing t on anything else, such as
// an aborted record or one already committed by the group), commits its
// offsets and leaves.
func consumeCommitted(t *testing.T, ctx context.Context, c *testkit.Cluster, group, topic string, want []string) {
	t.Helper()
	// The coordinator is killed right after a member leaves: the record of
	// its leaving may die unreplicated with it (Kafka answers LeaveGroup
	// before that write is committed), and the next coordinator then
	// waits out the departed member's session. The least session Kafka
	// allows (group.min.session.timeout.ms) keeps that wait short.
	m := client(t, c, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.SessionTimeout(6*time.Second))
	var got []string
	for len(got) < len(want) && ctx.Err() == nil {
		fs := m.PollFetches(ctx)
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s-%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("group %s read %d records %v..., want the %d committed ones %v...", group, len(got),
			got[:min(3, len(got))], len(want), want[:min(3, len(want))])
	}
	if err := m.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit of group %s: %v", group, err)
	}
	m.Close()
}

// coordinatedByKind checks a consumer group and a transactional producer
// both coordinated by one broker of kind, and their hand-over when that
// broker is killed: the new coordinator (another broker, of either kind)
// reads what the old one wrote into __consumer_offsets and
// __transaction_state, replicated across kinds.
func coordinatedByKind(t *testing.T, c *testkit.Cluster, kind testkit.ClusterKind) {
	ctx := deadline(t, 3*time.Minute)
	adm := admin(t, c)
	prefix := strings.ToLower(kind.String()[:5])
	topic := "coordinated-" + prefix
	createTopic(t, c, topic, nil)
	txnID, coord := coordinatedBy(t, c, func(b *testkit.ClusterBroker) bool { return b.Kind() == kind },
		"txn-"+prefix, adm.FindTxnCoordinators)
	group, _ := coordinatedBy(t, c, func(b *testkit.ClusterBroker) bool { return b == coord },
		"group-"+prefix, adm.FindGroupCoordinators)
	t.Logf("group %s and transactional id %s coordinated by broker %d (%s)", group, txnID, coord.ID(), kind)

	p := client(t, c, kgo.TransactionalID(txnID), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	first, aborted := numbered(prefix+"-first", 30), numbered(prefix+"-aborted", 30)
	txnBatch(t, ctx, p, first[:15], false)
	txnBatch(t, ctx, p, aborted, true)
	txnBatch(t, ctx, p, first[15:], false)
	consumeCommitted(t, ctx, c, group, topic, first)
	p.Close()

	t.Logf("kill -9 coordinator broker %d (%s)", coord.ID(), coord.Kind())
	coord.Kill()
	defer func() {
		if err := coord.Start(); err != nil {
			t.Error(err)
		}
	}()
	p2 := client(t, c, kgo.TransactionalID(txnID), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	second := numbered(prefix+"-second", 20)
	txnBatch(t, ctx, p2, second, false)
	consumeCommitted(t, ctx, c, group, topic, second) // from the commits: only the new records
	p2.Close()
	checkKafkaLogs(t, c)
}

// TestCoordinators: in a cluster of two Kafka brokers and one samsa, a
// group and a transactional id coordinated by a Kafka broker, then by
// the samsa broker, each surviving its coordinator's death.
func TestCoordinators(t *testing.T) {
	c := mixedCluster(t, 1, 2)
	t.Run("kafka", func(t *testing.T) { coordinatedByKind(t, c, testkit.Kafka39) })
	t.Run("samsa", func(t *testing.T) { coordinatedByKind(t, c, testkit.Samsa) })
}
