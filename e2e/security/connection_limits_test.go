package security

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/samsa-io/samsa/testkit"
)

// configsTool runs Kafka 3.9.1's kafka-configs.sh --alter against a
// PLAINTEXT broker at addr.
func configsTool(t *testing.T, k *testkit.Kafka, addr string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := k.Run(ctx, testkit.Kafka39ConfigCommand, append([]string{"--bootstrap-server", addr, "--alter"}, args...)...); err != nil {
		t.Fatalf("kafka-configs %v: %v\n%s", args, err, out)
	}
}

// probes opens connections to addr from ip, each sending one request,
// until one is refused or max are answered; it returns how many were
// answered and closes them all.
func probes(t *testing.T, addr, ip string, max int) int {
	t.Helper()
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for range max {
		c, ok, err := testkit.AnsweredFrom(addr, ip, 10*time.Second)
		if err != nil {
			t.Fatalf("dial %s from %s: %v", addr, ip, err)
		}
		open = append(open, c)
		if !ok {
			return len(open) - 1
		}
	}
	return max
}

// waitProbes polls probes (up to max connections) until it answers
// want, as a change through another broker reaches this one by
// ZooKeeper's notification.
func waitProbes(t *testing.T, addr, ip string, want, max int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	got := probes(t, addr, ip, max)
	for got != want && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // polling a broker that hears the change from ZooKeeper
		got = probes(t, addr, ip, max)
	}
	if got != want {
		t.Fatalf("%s answered %d connections from %s, want %d", addr, got, ip, want)
	}
}

// connectAtLimit dials b from ip in the background while b's listener is
// at its max.connections, and returns once the listener reports waiting
// for a slot (it does so in Stats only, hence the polling). The channel
// then says whether the waiting connection was answered (within 30 s)
// once a slot came free.
func connectAtLimit(t *testing.T, b *testkit.InProcess, ip string) <-chan bool {
	t.Helper()
	held := make(chan bool, 1)
	go func() {
		c, ok, _ := testkit.AnsweredFrom(b.Addr, ip, 30*time.Second)
		if c != nil {
			defer c.Close()
		}
		held <- ok
	}()
	deadlineAt := time.Now().Add(10 * time.Second)
	for b.Server.Stats().SlotWaits == 0 && time.Now().Before(deadlineAt) {
		time.Sleep(5 * time.Millisecond) // polling Stats, the only report of the wait
	}
	if st := b.Server.Stats(); st.SlotWaits == 0 {
		t.Fatalf("the listener did not wait for a slot at its max.connections: %+v", st)
	}
	return held
}

// max.connections.per.ip(.overrides) and max.connections set with
// Kafka's kafka-configs.sh, as the cluster default and for the broker,
// apply to the next connection without a restart; a raised
// max.connections lets a listener waiting at the old one accept.
func TestConnectionLimitsChangeLive(t *testing.T) {
	k := testkit.RequireKafka39(t)
	b := testkit.StartInProcess(t)
	configsTool(t, k, b.Addr, "--entity-type", "brokers", "--entity-default", "--add-config", "max.connections.per.ip=2")
	if got := probes(t, b.Addr, "127.0.0.2", 5); got != 2 {
		t.Fatalf("%d connections from 127.0.0.2 answered at max.connections.per.ip=2", got)
	}
	configsTool(t, k, b.Addr, "--entity-type", "brokers", "--entity-name", "0", "--add-config", "max.connections.per.ip.overrides=[127.0.0.2:4]")
	if got := probes(t, b.Addr, "127.0.0.2", 6); got != 4 {
		t.Fatalf("%d connections from 127.0.0.2 answered at its override of 4", got)
	}
	if got := probes(t, b.Addr, "127.0.0.3", 5); got != 2 {
		t.Fatalf("%d connections from 127.0.0.3 answered at max.connections.per.ip=2", got)
	}
	configsTool(t, k, b.Addr, "--entity-type", "brokers", "--entity-default", "--delete-config", "max.connections.per.ip")
	configsTool(t, k, b.Addr, "--entity-type", "brokers", "--entity-name", "0", "--delete-config", "max.connections.per.ip.overrides")
	if got := probes(t, b.Addr, "127.0.0.3", 5); got != 5 {
		t.Fatalf("%d connections from 127.0.0.3 answered once the limit was removed", got)
	}

	// max.connections: an admin client connected before keeps its
	// connections over a lowered limit and raises it again.
	adm := kadm.NewClient(client(t, b.Addr, nil))
	ctx := deadline(t, time.Minute)
	set := func(v string) {
		t.Helper()
		res, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "max.connections", Value: &v}}, 0)
		if err == nil {
			err = res[0].Err
		}
		if err != nil {
			t.Fatalf("max.connections=%s: %v", v, err)
		}
	}
	set("1000")
	open := b.Server.Stats().ConnectionsOpen
	set(strconv.FormatInt(open+1, 10))
	if !testkit.Answered(t, b.Addr, "127.0.0.4") {
		t.Fatal("the connection within max.connections was not answered")
	}
	held := connectAtLimit(t, b, "127.0.0.4")
	set(strconv.FormatInt(open+5, 10))
	if !<-held {
		t.Fatal("the connection held at the lowered max.connections was not answered once it was raised")
	}
}

// In a cluster the limits set with kafka-configs.sh through one broker
// reach the others through ZooKeeper (/config/brokers/<default> and
// /config/brokers/<id>): the cluster default applies on every broker,
// a broker's own value on that broker only, over the default. (The
// limits are set for a probe address only: the brokers reach each other
// from 127.0.0.1, and a low max.connections.per.ip would hold them too,
// as in Kafka.)
func TestConnectionLimitsChangeLiveInCluster(t *testing.T) {
	k := testkit.RequireKafka39(t)
	c := testkit.StartInProcessCluster(t, 3)
	configsTool(t, k, c.Broker(1).Addr, "--entity-type", "brokers", "--entity-default", "--add-config", "max.connections.per.ip.overrides=[127.0.0.2:2]")
	for id := 1; id <= 3; id++ {
		waitProbes(t, c.Broker(id).Addr, "127.0.0.2", 2, 5)
	}
	configsTool(t, k, c.Broker(1).Addr, "--entity-type", "brokers", "--entity-name", "3",
		"--add-config", "max.connections.per.ip.overrides=[127.0.0.2:3]")
	waitProbes(t, c.Broker(3).Addr, "127.0.0.2", 3, 5)
	if got := probes(t, c.Broker(2).Addr, "127.0.0.2", 5); got != 2 {
		t.Fatalf("broker 2 answered %d connections from 127.0.0.2: broker 3's override reached it", got)
	}
	configsTool(t, k, c.Broker(2).Addr, "--entity-type", "brokers", "--entity-default", "--delete-config", "max.connections.per.ip.overrides")
	for id := 1; id <= 2; id++ {
		waitProbes(t, c.Broker(id).Addr, "127.0.0.2", 5, 5)
	}
	if got := probes(t, c.Broker(3).Addr, "127.0.0.2", 5); got != 3 {
		t.Fatalf("broker 3 answered %d connections from 127.0.0.2, want its own override of 3", got)
	}
}

// listener.name.<l>.max.connections in server.properties caps that
// listener: past it, a new connection waits (unanswered, in the
// backlog) until one of the listener's connections closes, as Kafka's
// acceptor waits for a slot.
func TestListenerMaxConnections(t *testing.T) {
	b := testkit.StartInProcess(t, "listener.name.plaintext.max.connections", "2")
	first, ok, err := testkit.AnsweredFrom(b.Addr, "127.0.0.2", 10*time.Second)
	if err != nil || !ok {
		t.Fatalf("the first connection was not answered: %v", err)
	}
	if !testkit.Answered(t, b.Addr, "127.0.0.3") {
		t.Fatal("the second connection was not answered")
	}
	held := connectAtLimit(t, b, "127.0.0.4")
	if st := b.Server.Stats(); st.ConnectionsOpen != 2 {
		t.Fatalf("the listener waited with %d connections open, want its max.connections of 2: %+v", st.ConnectionsOpen, st)
	}
	first.Close()
	if !<-held {
		t.Fatal("the held connection was not answered once a slot was freed")
	}
}
