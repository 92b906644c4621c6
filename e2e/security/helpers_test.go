package security

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-io/samsa/testkit"
)

// The users of the SASL brokers these tests start.
const (
	adminUser, adminPass = "admin", "admin-secret"
	aliceUser, alicePass = "alice", "alice-secret"
)

// plainJAAS is Kafka's inline JAAS for PLAIN with admin and alice.
const plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`

// saslBroker is an in-process broker whose first listener is
// SASL_PLAINTEXT (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) and second
// PLAINTEXT; kv adds or overrides settings.
type saslBroker struct {
	*testkit.InProcess
	log *testkit.LogLines
}

func startSASLBroker(t *testing.T, kv ...string) *saslBroker {
	t.Helper()
	lb := &testkit.LogLines{}
	logger := slog.New(slog.NewTextHandler(lb, nil))
	saslPort, plainPort := freePort(t), freePort(t)
	base := []string{
		"listeners", fmt.Sprintf("SASL_PLAINTEXT://127.0.0.1:%d,PLAINTEXT://127.0.0.1:%d", saslPort, plainPort),
		"sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config", plainJAAS,
		"num.partitions", "1",
	}
	b := testkit.StartInProcessWith(t, testkit.InProcessOptions{Logger: logger}, append(base, kv...)...)
	return &saslBroker{InProcess: b, log: lb}
}

// saslAddr is the SASL listener's address, plainAddr the PLAINTEXT one's.
func (b *saslBroker) saslAddr() string { return b.Addr }

func (b *saslBroker) plainAddr(t *testing.T) string {
	t.Helper()
	addrs := b.Server.Addrs()
	if len(addrs) < 2 {
		t.Fatalf("listeners bound: %v", addrs)
	}
	return addrs[1].(*net.TCPAddr).AddrPort().String()
}

func plainMech(user, pass string) sasl.Mechanism {
	return plain.Auth{User: user, Pass: pass}.AsMechanism()
}

func scramMech(mech, user, pass string) sasl.Mechanism {
	a := scram.Auth{User: user, Pass: pass}
	if mech == "SCRAM-SHA-512" {
		return a.AsSha512Mechanism()
	}
	return a.AsSha256Mechanism()
}

// client is a franz-go client of addr authenticating with mech (nil: no
// SASL), closed when t ends.
func client(t *testing.T, addr string, mech sasl.Mechanism, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	base := []kgo.Opt{kgo.SeedBrokers(addr), kgo.RetryTimeout(5 * time.Second), kgo.AllowAutoTopicCreation()}
	if mech != nil {
		base = append(base, kgo.SASL(mech))
	}
	return testkit.NewClient(t, append(base, opts...)...)
}

// createScramUser makes user's SCRAM credential for mech through the
// Kafka API (AlterUserScramCredentials), as an authenticated admin.
func createScramUser(t *testing.T, addr string, admin sasl.Mechanism, mech, user, pass string, opts ...kgo.Opt) {
	t.Helper()
	m := kadm.ScramSha256
	if mech == "SCRAM-SHA-512" {
		m = kadm.ScramSha512
	}
	adm := kadm.NewClient(client(t, addr, admin, opts...))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: m, Iterations: 4096, Password: pass}})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Error(); err != nil {
		t.Fatalf("AlterUserScramCredentials: %v", err)
	}
}

// roundTrip produces n records to topic and consumes them back.
func roundTrip(t *testing.T, cl *kgo.Client, addr string, mech sasl.Mechanism, topic string, n int, opts ...kgo.Opt) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range n {
		r := &kgo.Record{Topic: topic, Value: []byte{byte(i)}}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	consumer := client(t, addr, mech, append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	got := 0
	for got < n {
		fs := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d: %v", got, n, err)
		}
		for _, e := range fs.Errors() {
			t.Fatalf("fetch %s/%d: %v", e.Topic, e.Partition, e.Err)
		}
		got += fs.NumRecords()
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	p, err := testkit.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
