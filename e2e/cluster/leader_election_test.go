package cluster

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// electionCluster is clusterConfig with the leader balance check set:
// interval 0 turns auto.leader.rebalance.enable off.
func electionCluster(t *testing.T, interval int) *testkit.Cluster {
	t.Helper()
	cfg := clusterConfig()
	cfg.Properties = maps.Clone(cfg.Properties)
	if interval == 0 {
		cfg.Properties["auto.leader.rebalance.enable"] = "false"
	} else {
		cfg.Properties["leader.imbalance.check.interval.seconds"] = fmt.Sprint(interval)
	}
	began := time.Now()
	c := testkit.StartCluster(t, cfg)
	// Registered is not yet known: each broker learns the others from the
	// controller's UpdateMetadata, and creates RF 3 topics only then.
	waitMetadata(t, c, 30*time.Second, func(_ int32, m *kmsg.MetadataResponse) error {
		if len(m.Brokers) != 3 {
			return fmt.Errorf("%d brokers in metadata", len(m.Brokers))
		}
		return nil
	})
	t.Logf("3-broker cluster ready in %v", time.Since(began).Round(time.Millisecond))
	return c
}

// preferred returns topic's partition -> first replica from m.
func preferred(m *kmsg.MetadataResponse, topic string) map[int32]int32 {
	out := map[int32]int32{}
	if tm := findTopic(m, topic); tm != nil {
		for _, p := range tm.Partitions {
			if len(p.Replicas) > 0 {
				out[p.Partition] = p.Replicas[0]
			}
		}
	}
	return out
}

// ledByPreferred checks that every partition of topic is led by its
// first replica.
func ledByPreferred(m *kmsg.MetadataResponse, topic string, n int) error {
	if err := ledEverywhere(m, topic, n); err != nil {
		return err
	}
	pref := preferred(m, topic)
	for p, l := range leaders(m, topic) {
		if l != pref[p] {
			return fmt.Errorf("%s-%d led by %d, its preferred replica is %d", topic, p, l, pref[p])
		}
	}
	return nil
}

// moveLeadersAway kills a broker other than the controller that is the
// preferred replica of some of topic's partitions, waits until the others
// lead them, starts it again and waits until it is back in every ISR, and
// returns it. With no balance check running, its partitions are then led
// by other replicas.
func moveLeadersAway(t *testing.T, c *testkit.Cluster, topic string, n int) *testkit.ClusterBroker {
	t.Helper()
	ctl, err := c.WaitForController()
	if err != nil {
		t.Fatal(err)
	}
	victim := others(c, ctl)[0]
	waitMetadata(t, c, 30*time.Second, func(_ int32, m *kmsg.MetadataResponse) error { return ledByPreferred(m, topic, n) })
	victim.Kill()
	t.Logf("killed broker %d", victim.ID())
	waitMetadata(t, c, 2*sessionTimeout+failoverSlack, func(_ int32, m *kmsg.MetadataResponse) error {
		for p, l := range leaders(m, topic) {
			if l == victim.ID() || l < 0 {
				return fmt.Errorf("%s-%d led by %d", topic, p, l)
			}
		}
		return nil
	})
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Logf("started broker %d again", victim.ID())
	waitMetadata(t, c, 60*time.Second, func(_ int32, m *kmsg.MetadataResponse) error {
		tm := findTopic(m, topic)
		if tm == nil {
			return errors.New("topic not in metadata")
		}
		for _, p := range tm.Partitions {
			in := false
			for _, r := range p.ISR {
				in = in || r == victim.ID()
			}
			if !in {
				return fmt.Errorf("%s-%d: broker %d not back in ISR %v", topic, p.Partition, victim.ID(), p.ISR)
			}
		}
		return nil
	})
	return victim
}

// TestPreferredLeaderElection: a broker dies and comes back, so the
// partitions it prefers are led elsewhere; Kafka 3.9.1's
// kafka-leader-election.sh --election-type PREFERRED
// --all-topic-partitions moves each back to its preferred replica, and
// franz-go's ElectLeaders gets Kafka's per-partition answers.
func TestPreferredLeaderElection(t *testing.T) {
	c := electionCluster(t, 0)
	topic := name(t, "rf3")
	createTopic(t, c, topic, 6, 3)
	victim := moveLeadersAway(t, c, topic, 6)

	m, err := metadataFrom(deadline(t, 10*time.Second), victim.Addr(), topic)
	if err != nil {
		t.Fatal(err)
	}
	away := 0
	for p, l := range leaders(m, topic) {
		if pref := preferred(m, topic)[p]; l != pref {
			away++
		}
	}
	if away == 0 {
		t.Fatalf("after broker %d's restart every partition is led by its preferred replica already (%v): nothing to test", victim.ID(), leaders(m, topic))
	}
	t.Logf("%d of 6 partitions led away from their preferred replica: %v", away, leaders(m, topic))

	out := runKafka39(t, testkit.Kafka39LeaderElection, "--bootstrap-server", c.Bootstrap(),
		"--election-type", "PREFERRED", "--all-topic-partitions")
	t.Logf("kafka-leader-election.sh:\n%s", out)
	if !strings.Contains(out, "Successfully completed leader election (PREFERRED) for partitions") {
		t.Errorf("kafka-leader-election.sh did not report the elections")
	}
	waitMetadata(t, c, 15*time.Second, func(_ int32, m *kmsg.MetadataResponse) error { return ledByPreferred(m, topic, 6) })

	// Again: nothing needs electing. The tool says so, and exits 0.
	out = runKafka39(t, testkit.Kafka39LeaderElection, "--bootstrap-server", c.Bootstrap(),
		"--election-type", "PREFERRED", "--topic", topic, "--partition", "0")
	if !strings.Contains(out, "Valid replica already elected for partitions "+topic+"-0") {
		t.Errorf("kafka-leader-election.sh on an already preferred partition said:\n%s", out)
	}

	// franz-go's kadm: per-partition codes, sent to the controller.
	solo := name(t, "rf1")
	createAssigned(t, c, solo, victim.ID())
	adm := admin(t, liveAddrs(c))
	codes := func(how kadm.ElectLeadersHow, s kadm.TopicsSet) map[string]error {
		t.Helper()
		res, err := adm.ElectLeaders(deadline(t, 30*time.Second), how, s)
		if err != nil {
			t.Fatalf("ElectLeaders: %v", err)
		}
		out := map[string]error{}
		for topic, ps := range res {
			for p, r := range ps {
				out[fmt.Sprintf("%s-%d", topic, p)] = r.Err
			}
		}
		return out
	}
	expect := func(what string, got map[string]error, want map[string]error) {
		t.Helper()
		for k, w := range want {
			if g, ok := got[k]; !ok || !errors.Is(g, w) {
				t.Errorf("%s: %s answered %v (present %v), want %v", what, k, g, ok, w)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: answered %v, want exactly %v", what, got, want)
		}
	}
	var victimPrefers int32 = -1
	for p, r := range preferred(m, topic) {
		if r == victim.ID() {
			victimPrefers = p
		}
	}
	if victimPrefers < 0 {
		t.Fatalf("broker %d is the preferred replica of no partition of %s", victim.ID(), topic)
	}
	ts := kadm.TopicsSet{}
	ts.Add(topic, 0, victimPrefers)
	ts.Add("no-such-topic", 0)
	want := map[string]error{
		fmt.Sprintf("%s-0", topic):                 kerr.ElectionNotNeeded,
		fmt.Sprintf("%s-%d", topic, victimPrefers): kerr.ElectionNotNeeded,
		"no-such-topic-0":                          kerr.UnknownTopicOrPartition,
	}
	expect("preferred, all led by their preferred replicas", codes(kadm.ElectPreferredReplica, ts), want)

	// A broker that is not the controller answers NOT_CONTROLLER per
	// partition, as Kafka's; every broker advertises ElectLeaders 0-2.
	ctl, err := c.WaitForController()
	if err != nil {
		t.Fatal(err)
	}
	follower := others(c, ctl)[0]
	direct := client(t, []string{follower.Addr()})
	req := kmsg.NewPtrElectLeadersRequest()
	req.TimeoutMillis = 30000
	req.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: topic, Partitions: []int32{0}}}
	resp, err := req.RequestWith(deadline(t, 30*time.Second), direct.Broker(int(follower.ID())))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.ErrorCode != 0 ||
		resp.Topics[0].Partitions[0].ErrorCode != kerr.NotController.Code {
		t.Errorf("broker %d (not the controller) answered ElectLeaders with %+v", follower.ID(), resp)
	}
	avReq := kmsg.NewPtrApiVersionsRequest()
	avReq.ClientSoftwareName, avReq.ClientSoftwareVersion = "samsa-e2e-cluster", "1"
	av, err := avReq.RequestWith(deadline(t, 10*time.Second), direct.Broker(int(follower.ID())))
	if err != nil {
		t.Fatal(err)
	}
	advertised := false
	for _, k := range av.ApiKeys {
		advertised = advertised || k.ApiKey == 43 && k.MinVersion == 0 && k.MaxVersion == 2
	}
	if !advertised {
		t.Errorf("broker %d does not advertise ElectLeaders 0-2: error %d, %+v", follower.ID(), av.ErrorCode, av.ApiKeys)
	}

	// The victim dies again: its partitions cannot get it back, and its
	// RF 1 topic has no replica left to elect, even uncleanly.
	victim.Kill()
	waitMetadata(t, c, 2*sessionTimeout+failoverSlack, func(_ int32, m *kmsg.MetadataResponse) error {
		if l := leaders(m, topic)[victimPrefers]; l == victim.ID() || l < 0 {
			return fmt.Errorf("%s-%d led by %d", topic, victimPrefers, l)
		}
		return nil
	})
	ts = kadm.TopicsSet{}
	ts.Add(topic, victimPrefers)
	expect("preferred, preferred replica dead", codes(kadm.ElectPreferredReplica, ts),
		map[string]error{fmt.Sprintf("%s-%d", topic, victimPrefers): kerr.PreferredLeaderNotAvailable})
	ts.Add(solo, 0)
	expect("unclean", codes(kadm.ElectLiveReplica, ts), map[string]error{
		fmt.Sprintf("%s-%d", topic, victimPrefers): kerr.ElectionNotNeeded,
		solo + "-0": kerr.EligibleLeadersNotAvailable,
	})
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
}

// TestAutoLeaderRebalance: with leader.imbalance.check.interval.seconds
// at 2, leadership goes back to a restarted broker's preferred partitions
// without anyone asking.
func TestAutoLeaderRebalance(t *testing.T) {
	c := electionCluster(t, 2)
	topic := name(t, "rf3")
	createTopic(t, c, topic, 6, 3)
	victim := moveLeadersAway(t, c, topic, 6)
	began := time.Now()
	waitMetadata(t, c, 30*time.Second, func(_ int32, m *kmsg.MetadataResponse) error { return ledByPreferred(m, topic, 6) })
	t.Logf("broker %d leads its preferred partitions again %v after it was back in every ISR", victim.ID(), time.Since(began).Round(time.Millisecond))
}

// TestTopicUncleanElection: a partition whose only in-sync replica died
// stays leaderless while its other replica is up (unclean election is
// off by default); turning the topic's unclean.leader.election.enable on
// elects that replica at once, with no broker coming or going.
func TestTopicUncleanElection(t *testing.T) {
	c := electionCluster(t, 0)
	ctl, err := c.WaitForController()
	if err != nil {
		t.Fatal(err)
	}
	rest := others(c, ctl)
	first, second := rest[0], rest[1]
	topic := name(t, "rf2")
	createAssigned(t, c, topic, first.ID(), second.ID())
	produceValues(t, c.Addrs(), topic, []string{"before"})

	// second dies: it leaves the ISR. Then first, the last in-sync
	// replica, dies too, and second comes back out of sync.
	second.Kill()
	waitMetadata(t, c, 2*sessionTimeout+failoverSlack, func(_ int32, m *kmsg.MetadataResponse) error {
		if p := findTopic(m, topic); p == nil || len(p.Partitions) != 1 || len(p.Partitions[0].ISR) != 1 {
			return fmt.Errorf("%s not yet shrunk to one in-sync replica: %+v", topic, p)
		}
		return nil
	})
	first.Kill()
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	waitMetadata(t, c, 2*sessionTimeout+failoverSlack, func(id int32, m *kmsg.MetadataResponse) error {
		if id != second.ID() && id != ctl {
			return nil
		}
		if len(m.Brokers) != 2 {
			return fmt.Errorf("%d brokers in metadata, want 2", len(m.Brokers))
		}
		if l := leaders(m, topic)[0]; l != -1 {
			return fmt.Errorf("%s-0 led by %d, want none", topic, l)
		}
		return nil
	})
	// It stays so: no leader from outside the ISR.
	time.Sleep(2 * time.Second)
	if m, err := metadataFrom(deadline(t, 10*time.Second), c.BrokerByID(ctl).Addr(), topic); err != nil || leaders(m, topic)[0] != -1 {
		t.Fatalf("%s-0 got a leader with unclean election off: %v (%v)", topic, leaders(m, topic), err)
	}

	adm := admin(t, []string{c.BrokerByID(ctl).Addr(), second.Addr()})
	resps, err := adm.AlterTopicConfigs(deadline(t, 30*time.Second), []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "unclean.leader.election.enable", Value: kadm.StringPtr("true")}}, topic)
	if err == nil {
		_, err = resps.On(topic, nil)
	}
	if err != nil {
		t.Fatalf("setting unclean.leader.election.enable on %s: %v", topic, err)
	}
	waitMetadata(t, c, 20*time.Second, func(_ int32, m *kmsg.MetadataResponse) error {
		if l := leaders(m, topic)[0]; l != second.ID() {
			return fmt.Errorf("%s-0 led by %d, want %d", topic, l, second.ID())
		}
		return nil
	})
	// The new leader takes writes.
	produceValues(t, []string{second.Addr()}, topic, []string{"after"})
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
}
