package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// Partition reassignment on a real 4-broker samsa cluster (broker 4 is
// the spare the replicas move to): Kafka 3.9.1's kafka-reassign-partitions
// (--execute with --throttle, --verify, --cancel), franz-go's
// AlterPartitionAssignments and ListPartitionReassignments, and the
// legacy /admin/reassign_partitions znode; a move held up by a follower
// throttle survives a controller kill, and the leader throttle holds one
// too. After each move every broker's metadata shows the new replicas,
// the new replicas hold every record (their log sizes match, and a
// consumer reads them all once the old leader is gone), and the removed
// replicas' directories are gone. SAMSA_REASSIGN_REFERENCE=kafka39 runs
// the same test against Apache Kafka 3.9.1 brokers (it passes there: the
// expectations are Kafka's).
func TestPartitionReassignment(t *testing.T) {
	cfg := clusterConfig()
	cfg.Brokers = 4
	if os.Getenv("SAMSA_REASSIGN_REFERENCE") == "kafka39" {
		// The same test against Apache Kafka 3.9.1, to check what it
		// expects: deleted replicas' directories go after a second.
		cfg.Kind = testkit.Kafka39
		cfg.Properties["log.segment.delete.delay.ms"] = "1000"
	}
	began := time.Now()
	c := testkit.StartCluster(t, cfg)
	t.Logf("4-broker cluster ready in %v", time.Since(began).Round(time.Millisecond))

	t.Run("kafka-reassign-partitions-3.9.1", func(t *testing.T) {
		topic := name(t, "topic")
		createWithAssignment(t, c, topic, [][]int32{{1, 2}, {2, 3}})
		values := numbered(300)
		produceValues(t, c.Addrs(), topic, values)

		plan := filepath.Join(t.TempDir(), "reassign.json")
		body := fmt.Sprintf(`{"version":1,"partitions":[{"topic":%q,"partition":0,"replicas":[3,4]},{"topic":%q,"partition":1,"replicas":[2,4]}]}`, topic, topic)
		if err := os.WriteFile(plan, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		// --throttle sets the rates on the brokers involved and the
		// throttled replicas on the topic; --verify clears them once done.
		out := runKafka39(t, testkit.Kafka39ReassignPartitions, "--bootstrap-server", c.Bootstrap(), "--reassignment-json-file", plan, "--execute",
			"--throttle", "100000000")
		if !strings.Contains(out, "Successfully started partition reassignments") {
			t.Fatalf("--execute:\n%s", out)
		}
		adm := admin(t, c.Addrs())
		ctx := deadline(t, 120*time.Second)
		if err := checkConfigs(ctx, adm, "", map[string]string{"leader.replication.throttled.rate": "100000000",
			"follower.replication.throttled.rate": "100000000"}); err != nil {
			t.Errorf("after --execute --throttle: %v", err)
		}
		end := time.Now().Add(60 * time.Second)
		for {
			out = runKafka39(t, testkit.Kafka39ReassignPartitions, "--bootstrap-server", c.Bootstrap(), "--reassignment-json-file", plan, "--verify")
			if strings.Count(out, "is completed") == 2 {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("--verify still not complete after 60s:\n%s", out)
			}
			time.Sleep(time.Second)
		}
		if !strings.Contains(out, "Clearing broker-level throttles") {
			t.Errorf("--verify did not clear the throttles:\n%s", out)
		}
		// Kafka then lists the rate no more; samsa, at its default.
		if err := checkConfigs(ctx, adm, "", map[string]string{"leader.replication.throttled.rate": "100000000"}); err == nil {
			t.Error("after --verify, broker 1 still has the throttle --execute set")
		}
		want := map[int32][]int32{0: {3, 4}, 1: {2, 4}}
		waitReplicas(t, c, topic, want)
		waitReplicaDirs(t, c, topic, want)
		checkReplicasHoldEverything(t, c, topic, want)
		consumeAfterStopping(t, c, topic, 3, values)
	})

	t.Run("AlterPartitionAssignments", func(t *testing.T) {
		topic := name(t, "topic")
		createWithAssignment(t, c, topic, [][]int32{{1, 2}})
		values := numbered(200)
		produceValues(t, liveAddrs(c), topic, values)
		adm := admin(t, liveAddrs(c))
		ctx := deadline(t, 60*time.Second)

		// Kafka's refusals first.
		req := kadm.AlterPartitionAssignmentsReq{}
		req.Assign(topic, 0, []int32{1, 99})
		req.Assign("no-such-topic", 0, []int32{1})
		req.CancelAssign(topic, 0) // overridden below by the same partition
		resp, err := adm.AlterPartitionAssignments(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if e := resp[topic][0].Err; !errors.Is(e, kerr.NoReassignmentInProgress) {
			t.Errorf("cancelling nothing: %v", e)
		}
		if e := resp["no-such-topic"][0].Err; !errors.Is(e, kerr.UnknownTopicOrPartition) {
			t.Errorf("unknown topic: %v", e)
		}
		req = kadm.AlterPartitionAssignmentsReq{}
		req.Assign(topic, 0, []int32{1, 99})
		if resp, err = adm.AlterPartitionAssignments(ctx, req); err != nil || !errors.Is(resp[topic][0].Err, kerr.InvalidReplicaAssignment) {
			t.Errorf("a dead broker in the target: %v %v", err, resp)
		}
		req = kadm.AlterPartitionAssignmentsReq{}
		req.Assign(topic, 0, []int32{4, 4})
		if resp, err = adm.AlterPartitionAssignments(ctx, req); err != nil || !errors.Is(resp[topic][0].Err, kerr.InvalidReplicaAssignment) {
			t.Errorf("a duplicate in the target: %v %v", err, resp)
		}

		req = kadm.AlterPartitionAssignmentsReq{}
		req.Assign(topic, 0, []int32{4, 1})
		resp, err = adm.AlterPartitionAssignments(ctx, req)
		if err != nil || resp[topic][0].Err != nil {
			t.Fatalf("reassigning: %v %v", err, resp)
		}
		// Listed until done (it may be done already), then not.
		end := time.Now().Add(60 * time.Second)
		for {
			lr, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{topic: {0: {}}})
			if err != nil {
				t.Fatal(err)
			}
			st, listed := lr[topic][0]
			if !listed {
				break
			}
			if !slices.Equal(st.Replicas, []int32{4, 1, 2}) || !slices.Equal(st.AddingReplicas, []int32{4}) || !slices.Equal(st.RemovingReplicas, []int32{2}) {
				t.Fatalf("listed as %+v, want replicas [4 1 2] adding [4] removing [2]", st)
			}
			if time.Now().After(end) {
				t.Fatalf("still reassigning after 60s: %+v", st)
			}
			time.Sleep(200 * time.Millisecond)
		}
		want := map[int32][]int32{0: {4, 1}}
		waitReplicas(t, c, topic, want)
		waitReplicaDirs(t, c, topic, want)
		checkReplicasHoldEverything(t, c, topic, want)
	})

	t.Run("legacy-znode", func(t *testing.T) {
		topic := name(t, "topic")
		createWithAssignment(t, c, topic, [][]int32{{2, 3}})
		produceValues(t, liveAddrs(c), topic, numbered(100))
		body := fmt.Sprintf(`{"version":1,"partitions":[{"topic":%q,"partition":0,"replicas":[2,4]}]}`, topic)
		path := c.ZKPath("/admin/reassign_partitions")
		if _, err := c.ZooKeeperConn().Create(path, []byte(body), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("creating %s: %v", path, err)
		}
		want := map[int32][]int32{0: {2, 4}}
		waitReplicas(t, c, topic, want)
		waitReplicaDirs(t, c, topic, want)
		end := time.Now().Add(30 * time.Second)
		for {
			ok, _, err := c.ZooKeeperConn().Exists(path)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("%s still there 30s after the reassignment completed", path)
			}
			time.Sleep(100 * time.Millisecond)
		}
		checkReplicasHoldEverything(t, c, topic, want)
	})

	// A follower throttle on the new replica holds the reassignment up;
	// the controller is killed meanwhile, and the next one, reading the
	// topic znode, carries it on; lifting the throttle lets it complete.
	t.Run("throttled-across-failover", func(t *testing.T) {
		adm := admin(t, liveAddrs(c))
		ctx := deadline(t, 120*time.Second)
		topic := throttledMove(t, c, adm, ctx, "follower", 4, "0:4")
		inProgress := func(what string) {
			t.Helper()
			wantInProgress(t, c, adm, ctx, topic, what)
			// Naming no topics lists every reassignment under way.
			all, err := kmsg.NewPtrListPartitionReassignmentsRequest().RequestWith(ctx, client(t, liveAddrs(c)))
			if err != nil || all.ErrorCode != 0 || len(all.Topics) != 1 || all.Topics[0].Topic != topic {
				t.Fatalf("%s: listing all: %v %+v", what, err, all)
			}
		}
		inProgress("throttled")
		// Kafka refuses to grow a topic while one of its partitions moves.
		if cp, err := adm.CreatePartitions(ctx, 1, topic); err != nil || !errors.Is(cp[topic].Err, kerr.ReassignmentInProgress) {
			t.Errorf("CreatePartitions during the move: %v %+v", err, cp)
		}

		ctl, err := c.Controller()
		if err != nil {
			t.Fatal(err)
		}
		c.BrokerByID(ctl).Kill()
		next, err := c.WaitForController(ctl)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("killed controller %d; %d took over", ctl, next)
		if err := c.BrokerByID(ctl).Restart(); err != nil {
			t.Fatalf("restarting broker %d: %v", ctl, err)
		}
		adm = admin(t, liveAddrs(c))
		end := time.Now().Add(30 * time.Second)
		for {
			lr, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{topic: {0: {}}})
			if err == nil {
				if _, ok := lr[topic][0]; ok {
					break
				}
			}
			if time.Now().After(end) {
				t.Fatalf("the new controller does not list the reassignment: %v %v", lr, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
		inProgress("after the failover")

		liftThrottle(t, adm, ctx, "follower", 4)
		want := map[int32][]int32{0: {1, 4}}
		waitReplicas(t, c, topic, want)
		waitReplicaDirs(t, c, topic, want)
		checkReplicasHoldEverything(t, c, topic, want)
	})

	// kafka-reassign-partitions --cancel of a move held up by a throttle:
	// back to the original replicas, the added one deleted.
	t.Run("kafka-reassign-partitions-cancel", func(t *testing.T) {
		adm := admin(t, liveAddrs(c))
		ctx := deadline(t, 120*time.Second)
		topic := throttledMove(t, c, adm, ctx, "follower", 4, "0:4")
		defer liftThrottle(t, adm, ctx, "follower", 4)
		wantInProgress(t, c, adm, ctx, topic, "throttled")
		plan := filepath.Join(t.TempDir(), "reassign.json")
		body := fmt.Sprintf(`{"version":1,"partitions":[{"topic":%q,"partition":0,"replicas":[1,4]}]}`, topic)
		if err := os.WriteFile(plan, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		out := runKafka39(t, testkit.Kafka39ReassignPartitions, "--bootstrap-server", c.Bootstrap(), "--reassignment-json-file", plan, "--cancel")
		if !strings.Contains(out, "Successfully cancelled partition reassignment for: "+topic+"-0") {
			t.Fatalf("--cancel:\n%s", out)
		}
		want := map[int32][]int32{0: {1, 2}}
		waitReplicas(t, c, topic, want)
		waitReplicaDirs(t, c, topic, want)
		if lr, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{topic: {0: {}}}); err != nil || len(lr[topic]) != 0 {
			t.Fatalf("after --cancel: %v %v", lr, err)
		}
	})

	// The same held up by the leader's throttle instead.
	t.Run("leader-throttle", func(t *testing.T) {
		adm := admin(t, liveAddrs(c))
		ctx := deadline(t, 120*time.Second)
		topic := throttledMove(t, c, adm, ctx, "leader", 1, "0:1")
		wantInProgress(t, c, adm, ctx, topic, "throttled by the leader")
		liftThrottle(t, adm, ctx, "leader", 1)
		want := map[int32][]int32{0: {1, 4}}
		waitReplicas(t, c, topic, want)
		checkReplicasHoldEverything(t, c, topic, want)
	})

	t.Run("throttle-configs", func(t *testing.T) {
		topic := name(t, "topic")
		createWithAssignment(t, c, topic, [][]int32{{1, 2}})
		adm := admin(t, liveAddrs(c))
		ctx := deadline(t, 30*time.Second)
		rate := "1048576"
		if _, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{
			{Op: kadm.SetConfig, Name: "leader.replication.throttled.rate", Value: &rate},
			{Op: kadm.SetConfig, Name: "follower.replication.throttled.rate", Value: &rate},
		}, 1); err != nil {
			t.Fatalf("setting broker 1's throttles: %v", err)
		}
		replicas := "0:1,0:2"
		resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
			{Op: kadm.SetConfig, Name: "leader.replication.throttled.replicas", Value: &replicas},
			{Op: kadm.SetConfig, Name: "follower.replication.throttled.replicas", Value: &replicas},
		}, topic)
		if err == nil {
			_, err = resp.On(topic, nil)
		}
		if err != nil {
			t.Fatalf("setting the topic's throttled replicas: %v", err)
		}
		end := time.Now().Add(20 * time.Second)
		for {
			err := checkConfigs(ctx, adm, "", map[string]string{
				"leader.replication.throttled.rate": rate, "follower.replication.throttled.rate": rate})
			if err == nil {
				err = checkConfigs(ctx, adm, topic, map[string]string{
					"leader.replication.throttled.replicas": replicas, "follower.replication.throttled.replicas": replicas})
			}
			if err == nil {
				break
			}
			if time.Now().After(end) {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}

func numbered(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("record-%04d", i)
	}
	return out
}

// createWithAssignment creates topic with the given replicas per partition and
// waits until every broker's metadata has it led.
func createWithAssignment(t *testing.T, c *testkit.Cluster, topic string, assignment [][]int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p, rs := range assignment {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = int32(p), rs
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	}
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(deadline(t, 30*time.Second), client(t, liveAddrs(c)))
	if err == nil {
		err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
	}
	if err != nil {
		t.Fatalf("creating %s: %v", topic, err)
	}
	waitMetadata(t, c, 30*time.Second, func(_ int32, m *kmsg.MetadataResponse) error {
		return ledEverywhere(m, topic, len(assignment))
	})
}

// waitReplicas waits until every running broker's metadata gives each
// partition of topic exactly want's replicas, all in the ISR.
func waitReplicas(t *testing.T, c *testkit.Cluster, topic string, want map[int32][]int32) {
	t.Helper()
	waitMetadata(t, c, 60*time.Second, func(_ int32, m *kmsg.MetadataResponse) error {
		tm := findTopic(m, topic)
		if tm == nil {
			return fmt.Errorf("%s not in metadata", topic)
		}
		for _, p := range tm.Partitions {
			w, ok := want[p.Partition]
			if !ok {
				continue
			}
			if !slices.Equal(p.Replicas, w) || !sameSet(p.ISR, w) || !slices.Contains(w, p.Leader) {
				return fmt.Errorf("%s-%d: replicas %v ISR %v leader %d, want replicas and ISR %v", topic, p.Partition, p.Replicas, p.ISR, p.Leader, w)
			}
		}
		return nil
	})
}

func sameSet(a, b []int32) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// waitReplicaDirs waits until each broker has a directory for exactly the
// partitions of topic want places on it.
func waitReplicaDirs(t *testing.T, c *testkit.Cluster, topic string, want map[int32][]int32) {
	t.Helper()
	end := time.Now().Add(30 * time.Second)
	for {
		var wrong []string
		for _, b := range c.Brokers() {
			var exp []string
			for p, rs := range want {
				if slices.Contains(rs, b.ID()) {
					exp = append(exp, fmt.Sprintf("%s-%d", topic, p))
				}
			}
			slices.Sort(exp)
			if got := partitionDirs(t, b.DataDir(), topic); !slices.Equal(got, exp) {
				wrong = append(wrong, fmt.Sprintf("broker %d has %v, want %v", b.ID(), got, exp))
			}
		}
		if len(wrong) == 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("partition directories of %s within 30s:\n%s", topic, strings.Join(wrong, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkReplicasHoldEverything asks each replica's broker itself
// (DescribeLogDirs) for the size of its log of each partition: every
// replica must have the leader's (same batches, same bytes).
func checkReplicasHoldEverything(t *testing.T, c *testkit.Cluster, topic string, want map[int32][]int32) {
	t.Helper()
	end := time.Now().Add(30 * time.Second)
	for {
		err := replicaSizesMatch(c, topic, want)
		if err == nil {
			return
		}
		if time.Now().After(end) {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func replicaSizesMatch(c *testkit.Cluster, topic string, want map[int32][]int32) error {
	for p, rs := range want {
		var sizes []int64
		for _, id := range rs {
			size, err := logSize(c.BrokerByID(id).Addr(), topic, p)
			if err != nil {
				return fmt.Errorf("broker %d: %w", id, err)
			}
			sizes = append(sizes, size)
		}
		if sizes[0] == 0 || slices.ContainsFunc(sizes, func(s int64) bool { return s != sizes[0] }) {
			return fmt.Errorf("%s-%d: replicas %v have log sizes %v", topic, p, rs, sizes)
		}
	}
	return nil
}

func logSize(addr, topic string, p int32) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RetryTimeout(time.Second))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := kmsg.NewPtrDescribeLogDirsRequest()
	rt := kmsg.NewDescribeLogDirsRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{p}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return 0, err
	}
	for _, d := range resp.Dirs {
		for _, dt := range d.Topics {
			for _, dp := range dt.Partitions {
				if dt.Topic == topic && dp.Partition == p {
					return dp.Size, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("DescribeLogDirs does not name %s-%d", topic, p)
}

// consumeAfterStopping stops broker id (a new replica that leads) and
// reads every record of topic from what is left: the other new replica
// serves them.
func consumeAfterStopping(t *testing.T, c *testkit.Cluster, topic string, id int32, values []string) {
	t.Helper()
	if err := c.BrokerByID(id).Stop(); err != nil {
		t.Fatalf("stopping broker %d: %v", id, err)
	}
	t.Cleanup(func() {
		if err := c.BrokerByID(id).Start(); err != nil {
			t.Errorf("starting broker %d again: %v", id, err)
		}
	})
	cl := client(t, liveAddrs(c), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx := deadline(t, 60*time.Second)
	got := map[string]bool{}
	for len(got) < len(values) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records of %s with broker %d stopped", len(got), len(values), topic, id)
		}
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)] = true })
	}
	for _, v := range values {
		if !got[v] {
			t.Fatalf("record %q missing", v)
		}
	}
}

// checkConfigs checks DescribeConfigs of topic (broker 1 when "").
func checkConfigs(ctx context.Context, adm *kadm.Client, topic string, want map[string]string) error {
	var rcs kadm.ResourceConfigs
	var err error
	name := "broker 1"
	if topic == "" {
		rcs, err = adm.DescribeBrokerConfigs(ctx, 1)
	} else {
		name = "topic " + topic
		rcs, err = adm.DescribeTopicConfigs(ctx, topic)
	}
	if err != nil {
		return err
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			return rc.Err
		}
		for k, v := range want {
			found := false
			for _, cfg := range rc.Configs {
				if cfg.Key == k && cfg.Value != nil && *cfg.Value == v {
					found = true
				}
			}
			if !found {
				return fmt.Errorf("%s: %s is not %s in DescribeConfigs", name, k, v)
			}
		}
	}
	return nil
}

// throttledMove makes a topic on [1,2] with 3 MB of incompressible
// records (the producer's compression would make 3 MB of one letter one
// small fetch), throttles side ("leader" or "follower") of broker at
// 50 kB/s for the replicas named, starts moving the partition to [1,4]
// and waits 3 s: far from enough at that rate.
func throttledMove(t *testing.T, c *testkit.Cluster, adm *kadm.Client, ctx context.Context, side string, broker int32, replicas string) string {
	t.Helper()
	topic := name(t, "topic")
	createWithAssignment(t, c, topic, [][]int32{{1, 2}})
	values := make([]string, 300)
	for i := range values {
		var b strings.Builder
		for b.Len() < 10000 {
			b.WriteString(rand.Text())
		}
		values[i] = fmt.Sprintf("%04d-%s", i, b.String())
	}
	produceValues(t, liveAddrs(c), topic, values)
	rate := "50000"
	if _, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: side + ".replication.throttled.rate", Value: &rate}}, broker); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: side + ".replication.throttled.replicas", Value: &replicas}}, topic); err != nil {
		t.Fatal(err)
	}
	// The config watch applies them asynchronously.
	time.Sleep(2 * time.Second)
	req := kadm.AlterPartitionAssignmentsReq{}
	req.Assign(topic, 0, []int32{1, 4})
	if resp, err := adm.AlterPartitionAssignments(ctx, req); err != nil || resp[topic][0].Err != nil {
		t.Fatalf("reassigning: %v %v", err, resp)
	}
	time.Sleep(3 * time.Second)
	return topic
}

// wantInProgress checks that topic's partition 0 is still moving from
// [1,2] to [1,4].
func wantInProgress(t *testing.T, c *testkit.Cluster, adm *kadm.Client, ctx context.Context, topic, what string) {
	t.Helper()
	lr, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{topic: {0: {}}})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	st, ok := lr[topic][0]
	if !ok || !slices.Equal(st.Replicas, []int32{1, 4, 2}) || !slices.Equal(st.AddingReplicas, []int32{4}) || !slices.Equal(st.RemovingReplicas, []int32{2}) {
		t.Fatalf("%s: reassignment %+v (listed %v), want it in progress (3 MB at 50 kB/s)", what, st, ok)
	}
}

func liftThrottle(t *testing.T, adm *kadm.Client, ctx context.Context, side string, broker int32) {
	t.Helper()
	if _, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: side + ".replication.throttled.rate"}}, broker); err != nil {
		t.Fatal(err)
	}
}
