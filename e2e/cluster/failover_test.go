package cluster

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/zkmeta"
)

// failoverSlack is what a failover may take beyond the session timeout:
// ZooKeeper notices an expired session on its next tick (500 ms here),
// the watchers are told, one broker wins /controller and loads the
// cluster's state. Generous for a loaded 2-core machine; an election
// that waited for a second session timeout would still exceed it.
const failoverSlack = 5 * time.Second

// controllerEpoch reads /controller_epoch.
func controllerEpoch(t *testing.T, c *testkit.Cluster) int32 {
	t.Helper()
	data, _, err := c.ZooKeeperConn().Get(c.ZKPath(zkmeta.PathControllerEpoch))
	if err != nil {
		t.Fatal(err)
	}
	e, err := zkmeta.DecodeControllerEpoch(data)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestControllerKill: the controller is killed with SIGKILL; another
// broker is elected within the session timeout (plus slack), every live
// broker's metadata names it and has moved the dead broker's leaderships;
// topics are still created and deleted; a topic deleted while one of its
// replicas' broker is dead is removed from that broker too once it
// returns, and every deleted topic's partition directories go from every
// broker's data directory.
func TestControllerKill(t *testing.T) {
	c := ownCluster(t)
	before := name(t, "before")
	createTopic(t, c, before, 6, 3)
	produceValues(t, c.Addrs(), before, []string{"1", "2", "3", "4", "5", "6"})
	for _, b := range c.Brokers() {
		if dirs := partitionDirs(t, b.DataDir(), before); len(dirs) != 6 {
			t.Fatalf("broker %d holds %v of %s's RF 3 partitions, want all 6", b.ID(), dirs, before)
		}
	}

	ctl, err := c.WaitForController()
	if err != nil {
		t.Fatal(err)
	}
	epoch := controllerEpoch(t, c)
	killed := time.Now()
	c.BrokerByID(ctl).Kill()
	next, err := c.WaitForController(ctl)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(killed)
	t.Logf("controller %d killed; %d elected after %v (session timeout %v)", ctl, next, took.Round(time.Millisecond), sessionTimeout)
	if bound := sessionTimeout + failoverSlack; took > bound {
		t.Errorf("a new controller took %v after the old one was killed, more than the session timeout %v + %v", took, sessionTimeout, failoverSlack)
	}
	if got := controllerEpoch(t, c); got <= epoch {
		t.Errorf("/controller_epoch is %d after the election, was %d", got, epoch)
	}
	if _, err := c.WaitForBrokers(2); err != nil {
		t.Fatal(err)
	}
	waitMetadata(t, c, 30*time.Second, func(_ int32, m *kmsg.MetadataResponse) error {
		if m.ControllerID != next {
			return fmt.Errorf("controller %d, want %d", m.ControllerID, next)
		}
		if len(m.Brokers) != 2 {
			return fmt.Errorf("%d brokers, want the 2 live ones", len(m.Brokers))
		}
		for p, l := range leaders(m, before) {
			if l == ctl || l < 0 {
				return fmt.Errorf("%s-%d led by %d", before, p, l)
			}
		}
		return nil
	})

	t.Run("CreateAndDelete", func(t *testing.T) {
		// Two brokers are left: RF 3 is refused as Kafka refuses it, RF 2
		// works.
		adm := admin(t, liveAddrs(c))
		resp, err := adm.CreateTopic(deadline(t, 30*time.Second), 3, 3, nil, name(t, "rf3"))
		if err == nil {
			err = resp.Err
		}
		if !errors.Is(err, kerr.InvalidReplicationFactor) {
			t.Errorf("creating an RF 3 topic on 2 live brokers: %v, want INVALID_REPLICATION_FACTOR", err)
		}
		after := name(t, "after")
		createTopic(t, c, after, 4, 2)
		produceValues(t, liveAddrs(c), after, []string{"a", "b", "c", "d"})
		deleteTopic(t, c, after)
		waitTopicGone(t, c, after, 30*time.Second)
		waitZNodeGone(t, c, zkmeta.PathTopics+"/"+after, 30*time.Second)
		waitNoPartitionDirs(t, c, after, 30*time.Second)
	})

	t.Run("DeleteWhileAReplicaIsDown", func(t *testing.T) {
		// Kafka's controller keeps the deletion pending while a replica's
		// broker is down, and finishes it (StopReplica with delete) when
		// the broker is back.
		deleteTopic(t, c, before)
		dead := c.BrokerByID(ctl)
		if err := dead.Start(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitForBrokers(3); err != nil {
			t.Fatal(err)
		}
		waitTopicGone(t, c, before, 60*time.Second)
		for _, p := range []string{zkmeta.PathTopics + "/" + before, zkmeta.PathDeleteTopics + "/" + before} {
			waitZNodeGone(t, c, p, 60*time.Second)
		}
		waitNoPartitionDirs(t, c, before, 30*time.Second)
	})

	t.Run("AllThreeAgain", func(t *testing.T) {
		if !c.BrokerByID(ctl).Running() {
			t.Skip("the killed broker did not come back")
		}
		again := name(t, "again")
		createTopic(t, c, again, 6, 3)
		waitMetadata(t, c, 30*time.Second, func(_ int32, m *kmsg.MetadataResponse) error {
			if len(m.Brokers) != 3 {
				return fmt.Errorf("%d brokers", len(m.Brokers))
			}
			return nil
		})
		for _, b := range c.Brokers() {
			if dirs := partitionDirs(t, b.DataDir(), again); len(dirs) != 6 {
				t.Errorf("broker %d holds %v of %s, want 6 partitions", b.ID(), dirs, again)
			}
		}
		deleteTopic(t, c, again)
		waitTopicGone(t, c, again, 30*time.Second)
		waitNoPartitionDirs(t, c, again, 30*time.Second)
		ids, err := c.RegisteredBrokers()
		if err != nil || !slices.Equal(ids, []int32{1, 2, 3}) {
			t.Errorf("/brokers/ids: %v %v", ids, err)
		}
	})
}
