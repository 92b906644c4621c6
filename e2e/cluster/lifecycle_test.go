package cluster

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/zkmeta"
)

// others returns every broker of c but the ones with ids except.
func others(c *testkit.Cluster, except ...int32) []*testkit.ClusterBroker {
	var out []*testkit.ClusterBroker
	for _, b := range c.Brokers() {
		if !slices.Contains(except, b.ID()) {
			out = append(out, b)
		}
	}
	return out
}

func addrsOf(bs []*testkit.ClusterBroker) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Addr())
	}
	return out
}

// createAssigned creates a 1-partition topic on the given replicas (the
// first is the preferred leader, which the controller elects), so a test
// can keep a partition away from the broker it disturbs.
func createAssigned(t *testing.T, c *testkit.Cluster, topic string, replicas ...int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, replicas
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(deadline(t, 30*time.Second), client(t, liveAddrs(c)))
	if err == nil {
		err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
	}
	if err != nil {
		t.Fatalf("creating %s on %v: %v", topic, replicas, err)
	}
	waitMetadata(t, c, 30*time.Second, func(_ int32, m *kmsg.MetadataResponse) error {
		if err := ledEverywhere(m, topic, 1); err != nil {
			return err
		}
		if l := leaders(m, topic)[0]; l != replicas[0] {
			return fmt.Errorf("%s led by %d, want %d", topic, l, replicas[0])
		}
		return nil
	})
}

// prober checks that the cluster keeps serving while a test disturbs one
// broker: until stopped it produces one record at a time to a partition
// led elsewhere and asks each undisturbed broker for metadata, through
// clients that know only the undisturbed brokers, and counts what failed.
type prober struct {
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	ok, fail int
	errs     []string
}

func startProber(t *testing.T, topic string, addrs []string) *prober {
	t.Helper()
	// Not idempotent: an idempotent producer first asks any broker it
	// knows for a producer id, and the metadata rightly lists a killed
	// broker until its session expires; that would test kgo's retries,
	// not the cluster.
	cl := client(t, addrs, kgo.DefaultProduceTopic(topic), kgo.DisableIdempotentWrite(), kgo.RecordRetries(3),
		kgo.ProduceRequestTimeout(5*time.Second), kgo.RecordDeliveryTimeout(10*time.Second))
	p := &prober{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for i := 0; ; i++ {
			select {
			case <-p.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			err := probe(cl, topic, addrs, i)
			p.mu.Lock()
			if err != nil {
				p.fail++
				p.errs = append(p.errs, err.Error())
			} else {
				p.ok++
			}
			p.mu.Unlock()
		}
	}()
	t.Cleanup(func() { p.finish() })
	return p
}

// probe produces record i and asks each of addrs for the topic's
// metadata, each step with its own deadline.
func probe(cl *kgo.Client, topic string, addrs []string, i int) error {
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}).FirstErr()
	cancel()
	if err != nil {
		return fmt.Errorf("produce %d after %v: %w", i, time.Since(began).Round(time.Millisecond), err)
	}
	for _, a := range addrs {
		began := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		m, err := metadataFrom(ctx, a, topic)
		cancel()
		if err == nil {
			err = ledEverywhere(m, topic, 1)
		}
		if err != nil {
			return fmt.Errorf("metadata from %s after %v: %w", a, time.Since(began).Round(time.Millisecond), err)
		}
	}
	return nil
}

func (p *prober) finish() (ok, fail int, errs []string) {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ok, p.fail, p.errs
}

// check stops p and fails t if any probe failed or none ran.
func (p *prober) check(t *testing.T, during string) {
	t.Helper()
	ok, fail, errs := p.finish()
	t.Logf("while %s: %d probes served, %d failed", during, ok, fail)
	if fail > 0 {
		t.Errorf("the cluster did not keep serving while %s: %d of %d probes failed: %v", during, fail, ok+fail, errs)
	}
	if ok == 0 {
		t.Errorf("no probe ran while %s", during)
	}
}

// probeAround prepares to disturb broker b: it returns b's epoch and a
// prober running against the other two brokers, on a topic replicated on
// those two only. (Were b one of its replicas, an acks=all produce would
// rightly wait for b until the leader drops it from the ISR, after
// replica.lag.time.max.ms.)
func probeAround(t *testing.T, c *testkit.Cluster, b *testkit.ClusterBroker) (epoch int64, p *prober) {
	t.Helper()
	rest := others(c, b.ID())
	steady := name(t, "steady")
	createAssigned(t, c, steady, rest[0].ID(), rest[1].ID())
	epoch, err := b.Epoch()
	if err != nil {
		t.Fatal(err)
	}
	return epoch, startProber(t, steady, addrsOf(rest))
}

// waitBrokerView waits until b's own metadata has all three brokers and
// the controller ZooKeeper names.
func waitBrokerView(t *testing.T, c *testkit.Cluster, b *testkit.ClusterBroker, d time.Duration) {
	t.Helper()
	end := time.Now().Add(d)
	for {
		ctl, err := c.Controller()
		if err == nil {
			var m *kmsg.MetadataResponse
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			m, err = metadataFrom(ctx, b.Addr())
			cancel()
			if err == nil && (len(m.Brokers) != 3 || m.ControllerID != ctl) {
				err = fmt.Errorf("%d brokers, controller %d (ZooKeeper: %d)", len(m.Brokers), m.ControllerID, ctl)
			}
		}
		if err == nil {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("broker %d's metadata within %v: %v", b.ID(), d, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSessionExpiry: ZooKeeper expires a broker's session (its link is
// cut until the server drops the session). The broker opens a new
// session and registers again with a new broker epoch, serves a
// consistent view again, and the rest of the cluster serves throughout.
// When the expired session is the controller's, it steps down and
// another broker is elected.
func TestSessionExpiry(t *testing.T) {
	c := ownCluster(t)
	ctl, err := c.WaitForController()
	if err != nil {
		t.Fatal(err)
	}

	expire := func(t *testing.T, b *testkit.ClusterBroker) {
		t.Helper()
		before, p := probeAround(t, c, b)
		began := time.Now()
		if err := b.ExpireSession(); err != nil {
			t.Fatal(err)
		}
		expired := time.Since(began)
		if _, err := c.WaitForBrokers(3); err != nil {
			t.Fatalf("broker %d did not register again after its session expired: %v", b.ID(), err)
		}
		t.Logf("broker %d: session expired after %v, registered again %v later", b.ID(),
			expired.Round(time.Millisecond), (time.Since(began) - expired).Round(time.Millisecond))
		after, err := b.Epoch()
		if err != nil {
			t.Fatal(err)
		}
		if after == before {
			t.Errorf("broker %d's epoch (registration czxid) is still %d after its session expired", b.ID(), before)
		}
		p.check(t, fmt.Sprintf("broker %d's session expired", b.ID()))
		// Every broker learns of the new registration (the next subtest
		// creates a topic on it through whichever broker it reaches).
		for _, o := range c.Brokers() {
			waitBrokerView(t, c, o, 30*time.Second)
		}
		if !b.Running() {
			t.Fatalf("broker %d exited after its session expired", b.ID())
		}
	}

	t.Run("Follower", func(t *testing.T) {
		var b *testkit.ClusterBroker
		for _, o := range others(c, ctl) {
			b = o
		}
		expire(t, b)
		if now, err := c.Controller(); err != nil || now != ctl {
			t.Errorf("controller is %d (%v) after broker %d's session expired, was %d", now, err, b.ID(), ctl)
		}
	})

	t.Run("Controller", func(t *testing.T) {
		b := c.BrokerByID(ctl)
		mark := b.OutputMark()
		expire(t, b)
		next, err := c.WaitForController(ctl)
		if err != nil {
			t.Fatalf("the controller whose session expired is still controller: %v\n%s", err, b.OutputSince(mark))
		}
		t.Logf("controller %d's session expired; %d elected", ctl, next)
	})

	t.Run("TopicsStillWork", func(t *testing.T) {
		topic := name(t, "rf3")
		createTopic(t, c, topic, 6, 3)
		produceValues(t, c.Addrs(), topic, []string{"x", "y", "z", "w", "v", "u"})
		deleteTopic(t, c, topic)
		waitTopicGone(t, c, topic, 30*time.Second)
		waitNoPartitionDirs(t, c, topic, 30*time.Second)
	})
}

// TestRestartRightAfterKill: a broker is killed with SIGKILL and started
// again at once, while its old registration (owned by the dead session)
// is still in /brokers/ids. It must not die on the node that exists: it
// waits for the old registration to go (or takes it over cleanly) and
// registers with a new epoch, within the session timeout plus slack; the
// other brokers serve meanwhile, and afterwards it is a full member
// again (its metadata is right, it takes replicas of a new topic and
// leads some).
func TestRestartRightAfterKill(t *testing.T) {
	c := ownCluster(t)
	ctl, err := c.WaitForController()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		id   func() int32
	}{
		{"Follower", func() int32 { return ctl%3 + 1 }},
		{"Controller", func() int32 {
			id, err := c.WaitForController()
			if err != nil {
				t.Fatal(err)
			}
			return id
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := c.BrokerByID(tc.id())
			before, p := probeAround(t, c, b)
			b.Kill()
			if still, err := b.Epoch(); err != nil || still != before {
				t.Logf("note: the old registration was already gone when the broker was started again (%v)", err)
			}
			began := time.Now()
			if err := b.Start(); err != nil {
				t.Fatalf("starting broker %d again right after kill -9: %v", b.ID(), err)
			}
			took := time.Since(began)
			t.Logf("broker %d killed and started again: registered after %v (session timeout %v)", b.ID(), took.Round(time.Millisecond), sessionTimeout)
			if bound := sessionTimeout + failoverSlack; took > bound {
				t.Errorf("broker %d took %v to register again, more than the session timeout %v + %v", b.ID(), took, sessionTimeout, failoverSlack)
			}
			after, err := b.Epoch()
			if err != nil {
				t.Fatal(err)
			}
			if after == before {
				t.Errorf("broker %d registered with its old epoch %d", b.ID(), before)
			}
			if _, err := c.WaitForBrokers(3); err != nil {
				t.Fatal(err)
			}
			p.check(t, fmt.Sprintf("broker %d was killed and restarted", b.ID()))
			waitBrokerView(t, c, b, 30*time.Second)

			topic := name(t, "rf3")
			createTopic(t, c, topic, 6, 3)
			if dirs := partitionDirs(t, b.DataDir(), topic); len(dirs) != 6 {
				t.Errorf("the restarted broker %d holds %v of the new RF 3 topic, want 6 partitions", b.ID(), dirs)
			}
			m, err := metadataFrom(deadline(t, 10*time.Second), b.Addr(), topic)
			if err != nil {
				t.Fatal(err)
			}
			led := 0
			for _, l := range leaders(m, topic) {
				if l == b.ID() {
					led++
				}
			}
			if led == 0 {
				t.Errorf("the restarted broker %d leads none of the new topic's 6 partitions: %v", b.ID(), leaders(m, topic))
			}
			produceValues(t, c.Addrs(), topic, []string{"1", "2", "3", "4", "5", "6"})
		})
	}
}

// stopBound is how soon a broker must exit after SIGTERM with controlled
// shutdown: the controller moves its leaderships in a round of
// LeaderAndIsr, well below the session timeout a crash would cost.
const stopBound = sessionTimeout

// TestControlledShutdown: SIGTERM to a broker makes it hand its
// leaderships away (ControlledShutdown to the controller) before it
// exits, with status 0 and quickly: once it is gone, ZooKeeper's
// partition states and every live broker's metadata show no partition
// led by it, and its partitions take produce at their new leaders. Then
// the same for the controller itself, which leaves one broker leading
// everything.
func TestControlledShutdown(t *testing.T) {
	c := ownCluster(t)
	topic := name(t, "rf3")
	createTopic(t, c, topic, 6, 3)
	produceValues(t, c.Addrs(), topic, []string{"1", "2", "3", "4", "5", "6"})
	ctl, err := c.WaitForController()
	if err != nil {
		t.Fatal(err)
	}

	stop := func(t *testing.T, b *testkit.ClusterBroker) {
		t.Helper()
		m, err := metadataFrom(deadline(t, 10*time.Second), b.Addr(), topic)
		if err != nil {
			t.Fatal(err)
		}
		var led []int32
		for p, l := range leaders(m, topic) {
			if l == b.ID() {
				led = append(led, p)
			}
		}
		slices.Sort(led)
		if len(led) == 0 {
			t.Logf("broker %d leads no partition of %s (%v): only its exit is checked", b.ID(), topic, leaders(m, topic))
		}
		began := time.Now()
		if err := b.Stop(); err != nil {
			t.Fatalf("SIGTERM to broker %d: %v", b.ID(), err)
		}
		took := time.Since(began)
		t.Logf("broker %d (leading %s partitions %v) exited 0 %v after SIGTERM", b.ID(), topic, led, took.Round(time.Millisecond))
		if took > stopBound {
			t.Errorf("broker %d took %v to exit after SIGTERM, more than %v", b.ID(), took, stopBound)
		}
		// Its session was closed, not left to expire.
		ok, _, err := c.ZooKeeperConn().Exists(c.ZKPath(zkmeta.PathBrokerIDs + "/" + strconv.Itoa(int(b.ID()))))
		if err != nil || ok {
			t.Errorf("broker %d exited but %s/%d is still there (%v)", b.ID(), zkmeta.PathBrokerIDs, b.ID(), err)
		}
		// The controller wrote the new leaders before the broker exited.
		for p := range leaders(m, topic) {
			sp := fmt.Sprintf("%s/%s/partitions/%d/state", zkmeta.PathTopics, topic, p)
			data, _, err := c.ZooKeeperConn().Get(c.ZKPath(sp))
			if err != nil {
				t.Fatal(err)
			}
			st, err := zkmeta.DecodePartitionState(data)
			if err != nil {
				t.Fatal(err)
			}
			if st.Leader == b.ID() || slices.Contains(st.ISR, b.ID()) {
				t.Errorf("%s is %s once broker %d exited: still its leader or in the ISR", sp, data, b.ID())
			}
		}
		// The brokers learn it from UpdateMetadata, a moment later.
		waitMetadata(t, c, 5*time.Second, func(_ int32, m *kmsg.MetadataResponse) error {
			for p, l := range leaders(m, topic) {
				if l == b.ID() || l < 0 {
					return fmt.Errorf("%s-%d led by %d", topic, p, l)
				}
			}
			for _, br := range m.Brokers {
				if br.NodeID == b.ID() {
					return fmt.Errorf("broker %d still listed", b.ID())
				}
			}
			return nil
		})
		// Every partition takes a produce at its new leader.
		cl := client(t, liveAddrs(c), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		for p := range int32(6) {
			if err := cl.ProduceSync(deadline(t, 15*time.Second), &kgo.Record{Partition: p, Value: []byte("after")}).FirstErr(); err != nil {
				t.Errorf("producing to %s-%d after broker %d stopped: %v", topic, p, b.ID(), err)
			}
		}
	}

	t.Run("Follower", func(t *testing.T) {
		// The other broker that leads the most partitions.
		m, err := metadataFrom(deadline(t, 10*time.Second), c.BrokerByID(ctl).Addr(), topic)
		if err != nil {
			t.Fatal(err)
		}
		count := map[int32]int{}
		for _, l := range leaders(m, topic) {
			count[l]++
		}
		var b *testkit.ClusterBroker
		for _, o := range others(c, ctl) {
			if b == nil || count[o.ID()] > count[b.ID()] {
				b = o
			}
		}
		if count[b.ID()] == 0 {
			t.Fatalf("no broker but the controller leads a partition of %s: %v", topic, leaders(m, topic))
		}
		stop(t, b)
		if now, err := c.Controller(); err != nil || now != ctl {
			t.Errorf("controller %d (%v) after another broker stopped, was %d", now, err, ctl)
		}
	})

	t.Run("Controller", func(t *testing.T) {
		b := c.BrokerByID(ctl)
		stop(t, b)
		next, err := c.WaitForController(ctl)
		if err != nil {
			t.Fatal(err)
		}
		if !c.BrokerByID(next).Running() {
			t.Errorf("broker %d, not running, is controller", next)
		}
	})
}
