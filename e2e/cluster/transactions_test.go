package cluster

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
)

// txnClusterConfig is clusterConfig serving transactions (three
// __transaction_state partitions, RF 3, min ISR 2: Kafka's defaults but
// the partition count).
func txnClusterConfig() testkit.ClusterConfig {
	cfg := clusterConfig()
	cfg.Properties["samsa.transactions.enable"] = "true"
	cfg.Properties["transaction.state.log.num.partitions"] = "3"
	return cfg
}

// TestTransactionCoordinatorFailover: the transaction coordinator and
// the partitions a transaction writes are on different brokers (the
// partitions' leaders verify the transaction's first batches with the
// coordinator over the inter-broker listener, KIP-890, and take its
// markers by WriteTxnMarkers). The coordinator's broker is killed with
// SIGKILL in the middle of a transaction: its __transaction_state
// partition moves to a broker that has its records, the producer finds
// the new coordinator and commits, and read_committed shows exactly the
// committed transactions, before and after the failover and after the
// killed broker is back. SAMSA_TXN_REFERENCE=kafka39 runs the same test
// against Apache Kafka 3.9.1 brokers (the expectations are Kafka's).
func TestTransactionCoordinatorFailover(t *testing.T) {
	cfg := txnClusterConfig()
	if os.Getenv("SAMSA_TXN_REFERENCE") == "kafka39" {
		cfg.Kind = testkit.Kafka39
		delete(cfg.Properties, "samsa.transactions.enable")
	}
	c := testkit.StartCluster(t, cfg)
	const id = "failover"
	ctx := deadline(t, 4*time.Minute)
	addrs := c.Addrs()
	txnOpts := []kgo.Opt{kgo.TransactionalID(id), kgo.TransactionTimeout(2 * time.Minute),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RetryTimeout(90 * time.Second)}

	// The first transactional request makes __transaction_state; then the
	// id's coordinator is known.
	var coordinator int32 = -1
	for coordinator < 0 {
		r := admin(t, addrs).FindTxnCoordinators(ctx, id)
		if co, ok := r[id]; ok && co.Err == nil {
			coordinator = co.NodeID
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no transaction coordinator for %s: %+v", id, r)
		}
		time.Sleep(200 * time.Millisecond)
	}
	others := []int32{}
	for _, b := range c.Brokers() {
		if b.ID() != coordinator {
			others = append(others, b.ID())
		}
	}
	t.Logf("coordinator of %s: broker %d; the data on %v", id, coordinator, others)

	// Two partitions, both led and replicated away from the coordinator.
	topic := name(t, "txn")
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p, replicas := range [][]int32{{others[0], others[1]}, {others[1], others[0]}} {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(p), replicas
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, client(t, addrs))
	if err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("creating %s: %v %+v", topic, err, resp)
	}
	waitMetadata(t, c, 30*time.Second, func(_ int32, m *kmsg.MetadataResponse) error {
		if err := ledEverywhere(m, topic, 2); err != nil {
			return err
		}
		for p, l := range leaders(m, topic) {
			if l == coordinator {
				return fmt.Errorf("%s-%d led by the coordinator", topic, p)
			}
		}
		return nil
	})

	write := func(cl *kgo.Client, tag string) {
		t.Helper()
		var recs []*kgo.Record
		for p := range int32(2) {
			for i := range 3 {
				recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%s/%d/%d", tag, p, i)})
			}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("%s: %v", tag, err)
		}
	}
	transact := func(cl *kgo.Client, tag string, commit bool) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		write(cl, tag)
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("%s: end (commit %v): %v", tag, commit, err)
		}
	}

	// KIP-890 across brokers: a transactional batch for a partition its
	// transaction does not have is refused by the partition's leader,
	// which asked the coordinator on another broker.
	stray := int32(0)
	if strayCo := admin(t, addrs).FindTxnCoordinators(ctx, "stray")["stray"]; strayCo.NodeID == others[0] {
		stray = 1 // led by others[1]
	}
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = kmsg.StringPtr("stray"), 60_000
	initResp, err := init.RequestWith(ctx, client(t, addrs))
	if err != nil || initResp.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v %+v", err, initResp)
	}
	raw := client(t, addrs)
	produce := kmsg.NewPtrProduceRequest()
	produce.TransactionID, produce.Acks, produce.TimeoutMillis = kmsg.StringPtr("stray"), -1, 10_000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = topic
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Partition = stray
	pp.Records = batchtest.Build([]batchtest.Record{{Value: []byte("stray"), Timestamp: time.Now().UnixMilli()}},
		batchtest.Producer(initResp.ProducerID, initResp.ProducerEpoch, 0), batchtest.Attributes(wire.AttrTransactional))
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, raw); err != nil { // learn the brokers
		t.Fatal(err)
	}
	pr, err := raw.Broker(int(others[stray])).Request(ctx, produce) // to the partition's leader
	if err != nil {
		t.Fatal(err)
	}
	presp := pr.(*kmsg.ProduceResponse)
	if code := presp.Topics[0].Partitions[0].ErrorCode; code != kerr.TransactionAbortable.Code {
		t.Fatalf("a transactional batch to %s-%d, not in its transaction: %v, want TRANSACTION_ABORTABLE", topic, stray, kerr.ErrorForCode(code))
	}

	cl := client(t, addrs, txnOpts...)
	transact(cl, "first", true)
	transact(cl, "aborted", false)

	// Mid-transaction: records written, the coordinator killed.
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	write(cl, "across")
	killed := time.Now()
	c.BrokerByID(coordinator).Kill()
	// The id's __transaction_state partition moves to a broker that has
	// its records (after the session timeout); the open transaction is
	// there, and the commit goes there.
	next := waitTxnCoordinator(t, c, id, coordinator)
	t.Logf("coordinator %d killed; %d coordinates %s after %v", coordinator, next, id, time.Since(killed).Round(time.Millisecond))
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit on the new coordinator: %v", err)
	}
	transact(cl, "after", true)

	if err := c.BrokerByID(coordinator).Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitForBrokers(3); err != nil {
		t.Fatal(err)
	}
	transact(cl, "back", true)

	// The coordinator killed while the producer commits: franz-go cannot
	// know the outcome of a commit it got no answer for and aborts
	// instead (fencing what is still open); either way the transaction is
	// all or nothing.
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	write(cl, "racing")
	waitISR(t, c, "__transaction_state", 3)
	c.BrokerByID(next).Kill()
	racing := "committed"
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		racing = "unknown"
		t.Logf("commit while the coordinator died: %v; aborting as franz-go asks", err)
		if err := cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
			// franz-go's abort can end fenced (its recovery's epoch bump
			// raced the new coordinator's completion of the prepared
			// commit); the client is then done for, as a real
			// application's would be: a new producer of the id takes
			// over, fencing what is left, and the check below still
			// holds the transaction to all or nothing.
			t.Logf("abort after the unconfirmed commit: %v; a new producer of %s takes over", err, id)
			cl = client(t, liveAddrs(c), txnOpts...)
		}
	}
	waitTxnCoordinator(t, c, id, next)
	// The abort can also return without error and leave the client's
	// producer id fenced (seen once in CI: its epoch-bumping
	// InitProducerId was answered PRODUCER_FENCED while the coordinator
	// moved back to its preferred broker); a new producer of the id
	// takes over then too. Whether Kafka 3.9 ever fences here is an open
	// question (see the session note of 2026-12-02).
	if err := cl.BeginTransaction(); err != nil {
		t.Logf("the producer after the racing commit: %v; a new producer of %s takes over", err, id)
		cl = client(t, liveAddrs(c), txnOpts...)
	} else if err := cl.EndTransaction(ctx, kgo.TryAbort); err != nil { // empty: no request
		t.Fatalf("ending the empty probe transaction: %v", err)
	}
	transact(cl, "last", true)

	// A read_committed consumer sees the committed transactions, whole,
	// once each, and nothing of the aborted one.
	want := map[string]bool{"first": true, "aborted": false, "across": true, "after": true, "back": true, "last": true}
	atLeast := 5 * 2 * 3
	if racing == "committed" {
		atLeast += 6 // its markers may still be on their way: wait for them too
	}
	seen := readCommitted(t, liveAddrs(c), topic, atLeast)
	racingSeen := 0
	for p := range 2 {
		for i := range 3 {
			racingSeen += seen[fmt.Sprintf("racing/%d/%d", p, i)]
			delete(seen, fmt.Sprintf("racing/%d/%d", p, i))
		}
	}
	switch {
	case racing == "committed" && racingSeen != 6, racingSeen != 0 && racingSeen != 6:
		t.Errorf("the transaction whose coordinator died under its commit (%s) shows %d of its 6 records", racing, racingSeen)
	}
	t.Logf("the commit racing the kill: %s, %d records visible", racing, racingSeen)
	for tag, committed := range want {
		for p := range 2 {
			for i := range 3 {
				v := fmt.Sprintf("%s/%d/%d", tag, p, i)
				switch {
				case committed && seen[v] != 1:
					t.Errorf("committed %s visible %d times", v, seen[v])
				case !committed && seen[v] != 0:
					t.Errorf("aborted %s visible", v)
				}
			}
		}
	}
	if len(seen) != 5*2*3 {
		t.Errorf("read_committed shows %d distinct records, want %d: %v", len(seen), 5*2*3, seen)
	}
}

// readCommitted reads topic at read_committed until it has n records (or
// more come within a short while), and counts each value.
func readCommitted(t *testing.T, addrs []string, topic string, n int) map[string]int {
	t.Helper()
	cl := client(t, addrs, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	ctx := deadline(t, 60*time.Second)
	seen := map[string]int{}
	total := 0
	for total < n && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachError(func(topic string, p int32, err error) {
			if err != context.DeadlineExceeded {
				t.Logf("fetch %s-%d: %v", topic, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++; total++ })
	}
	// Anything beyond n (a duplicate, an aborted record, a transaction
	// whose markers are still on their way) shows up soon: poll until
	// two seconds pass without a record.
	for {
		extra, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		got := 0
		cl.PollFetches(extra).EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++; got++ })
		cancel()
		if got == 0 {
			break
		}
	}
	if total < n {
		t.Fatalf("read_committed gave %d records, want %d: %v", total, n, seen)
	}
	return seen
}

// waitTxnCoordinator waits until the live brokers name a coordinator of
// id other than old, and returns it.
func waitTxnCoordinator(t *testing.T, c *testkit.Cluster, id string, old int32) int32 {
	t.Helper()
	ctx := deadline(t, sessionTimeout+failoverSlack+20*time.Second)
	for {
		co := admin(t, liveAddrs(c)).FindTxnCoordinators(ctx, id)[id]
		if co.Err == nil && co.NodeID != old && c.BrokerByID(co.NodeID).Running() {
			return co.NodeID
		}
		if ctx.Err() != nil {
			t.Fatalf("no coordinator of %s but %d: %+v", id, old, co)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitISR waits until every partition of topic has n replicas in sync.
func waitISR(t *testing.T, c *testkit.Cluster, topic string, n int) {
	t.Helper()
	waitMetadata(t, c, 60*time.Second, func(_ int32, m *kmsg.MetadataResponse) error {
		tm := findTopic(m, topic)
		if tm == nil {
			return fmt.Errorf("%s not in metadata", topic)
		}
		for _, p := range tm.Partitions {
			if len(p.ISR) != n {
				return fmt.Errorf("%s-%d has ISR %v", topic, p.Partition, p.ISR)
			}
		}
		return nil
	})
}
