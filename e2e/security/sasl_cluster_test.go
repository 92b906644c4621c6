package security

import (
	"context"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// In a cluster a SCRAM user made through one broker is in ZooKeeper in
// Kafka's format (/config/users/<user> and a change notification) and
// authenticates at another broker, which heard of it through the
// notification.
func TestScramUserAcrossCluster(t *testing.T) {
	// PLAINTEXT first: brokers talk to each other and the cluster helper
	// checks readiness on it. The SASL listener binds 127.0.0.2, so that
	// both listeners can take a free port (":0") on every broker.
	c := testkit.StartInProcessCluster(t, 2,
		"listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.2:0",
		"sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config", plainJAAS)
	saslAddr := func(b *testkit.InProcess) string { return b.Server.Addrs()[1].(*net.TCPAddr).AddrPort().String() }
	one, two := c.Broker(1), c.Broker(2)

	// AlterUserScramCredentials sent to broker 1 alone.
	salt := []byte("a-salt-for-dave!")
	salted, err := pbkdf2.Key(sha256.New, "dave-secret", salt, 4096, sha256.Size)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	req.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{{Name: "dave", Mechanism: 1, Iterations: 4096, Salt: salt, SaltedPassword: salted}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := client(t, saslAddr(one), plainMech(adminUser, adminPass))
	raw, err := admin.Broker(1).Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res := raw.(*kmsg.AlterUserSCRAMCredentialsResponse).Results; len(res) != 1 || res[0].ErrorCode != 0 {
		t.Fatalf("alter: %+v", res)
	}

	checkZooKeeperUser(t, c.ZK.Addr(), "/samsa", "dave")

	// Broker 2 learns of dave from the notification: retry until it
	// has (each try is a new connection and a full exchange).
	m := scramMech("SCRAM-SHA-256", "dave", "dave-secret")
	for {
		cl, err := kgo.NewClient(kgo.SeedBrokers(saslAddr(two)), kgo.SASL(m), kgo.RetryTimeout(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		err = cl.Ping(ctx)
		cl.Close()
		if err == nil {
			break
		}
		if !errors.Is(err, kerr.SaslAuthenticationFailed) || ctx.Err() != nil {
			t.Fatalf("dave at broker 2: %v", err)
		}
	}
	roundTrip(t, client(t, saslAddr(two), m), saslAddr(two), m, "dave-topic", 3)
}

// checkZooKeeperUser checks user's znode and its notification are
// Kafka's: {"version":1,"config":{"SCRAM-SHA-256":"salt=...,stored_key=...,server_key=...,iterations=4096"}}
// and {"version":2,"entity_path":"users/<user>"}.
func checkZooKeeperUser(t *testing.T, addr, chroot, user string) {
	t.Helper()
	conn, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	data, _, err := conn.Get(chroot + "/config/users/" + user)
	if err != nil {
		t.Fatalf("/config/users/%s: %v", user, err)
	}
	var node struct {
		Version int               `json:"version"`
		Config  map[string]string `json:"config"`
	}
	if err := json.Unmarshal(data, &node); err != nil || node.Version != 1 {
		t.Fatalf("/config/users/%s = %s: %v", user, data, err)
	}
	cred := node.Config["SCRAM-SHA-256"]
	var keys []string
	for _, kv := range strings.Split(cred, ",") {
		k, _, _ := strings.Cut(kv, "=")
		keys = append(keys, k)
	}
	if !slices.Equal(keys, []string{"salt", "stored_key", "server_key", "iterations"}) || !strings.HasSuffix(cred, ",iterations=4096") {
		t.Fatalf("SCRAM-SHA-256 credential %q is not Kafka's form", cred)
	}
	changes, _, err := conn.Children(chroot + "/config/changes")
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range changes {
		d, _, err := conn.Get(chroot + "/config/changes/" + ch)
		if err == nil && string(d) == `{"version":2,"entity_path":"users/`+user+`"}` {
			return
		}
	}
	t.Fatalf("no change notification for users/%s among %v", user, changes)
}
