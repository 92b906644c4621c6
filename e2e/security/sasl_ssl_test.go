package security

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
	"github.com/samsa-io/samsa/testkit"
)

// secureBroker is an in-process broker with a PLAINTEXT operator
// listener (its anonymous clients are super users) and a SASL_SSL
// listener for applications (SCRAM, a PEM keystore from a test CA), with
// ACLs on.
type secureBroker struct {
	*testkit.InProcess
	ca  *tlstest.CA
	log *testkit.LogLines
}

func startSecureBroker(t *testing.T) *secureBroker {
	t.Helper()
	ca := tlstest.NewCA(t)
	lb := &testkit.LogLines{}
	plainPort, securePort := freePort(t), freePort(t)
	b := testkit.StartInProcessWith(t, testkit.InProcessOptions{Logger: slog.New(slog.NewTextHandler(lb, nil))},
		"listeners", fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,SASL_SSL://127.0.0.1:%d", plainPort, securePort),
		"sasl.enabled.mechanisms", "SCRAM-SHA-256,SCRAM-SHA-512",
		"ssl.keystore.type", "PEM", "ssl.keystore.location", ca.Server(t).WritePEM(t, t.TempDir(), "broker.pem"),
		"authorizer.class.name", aclAuthorizer, "super.users", "User:ANONYMOUS",
		"num.partitions", "1")
	return &secureBroker{InProcess: b, ca: ca, log: lb}
}

func (b *secureBroker) operatorAddr() string { return b.Addr }

func (b *secureBroker) secureAddr(t *testing.T) string {
	t.Helper()
	addrs := b.Server.Addrs()
	if len(addrs) < 2 {
		t.Fatalf("listeners bound: %v", addrs)
	}
	return addrs[1].(*net.TCPAddr).AddrPort().String()
}

// topicsAndAlice makes topics a and b and the SCRAM-SHA-512 user alice
// (password alice-secret) through the operator listener, and returns the
// operator's admin client.
func (b *secureBroker) topicsAndAlice(ctx context.Context, t *testing.T) *kadm.Client {
	t.Helper()
	op := kadm.NewClient(client(t, b.operatorAddr(), nil))
	if _, err := op.CreateTopics(ctx, 1, 1, nil, "a", "b"); err != nil {
		t.Fatal(err)
	}
	res, err := op.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "alice", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "alice-secret"}})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("SCRAM user: %v", err)
	}
	return op
}

// app is a franz-go client of the SASL_SSL listener: TLS trusting the
// test CA, then SASL with mech.
func (b *secureBroker) app(t *testing.T, mech sasl.Mechanism, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return client(t, b.secureAddr(t), mech, append([]kgo.Opt{kgo.DialTLSConfig(tlstest.ClientConfig(b.ca, nil))}, opts...)...)
}

// The scenario on franz-go: the operator (PLAINTEXT) makes SCRAM
// users and ACLs; alice, over SASL_SSL, may produce to and consume in a
// group from topic a and nothing else; a wrong password, a user without
// ACLs and a plaintext client on the TLS port are refused, and the
// operator's producer is served throughout.
func TestSASLSSLScramUserUnderACLs(t *testing.T) {
	b := startSecureBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	op := kadm.NewClient(client(t, b.operatorAddr(), nil))
	if _, err := op.CreateTopics(ctx, 1, 1, nil, "a", "b"); err != nil {
		t.Fatal(err)
	}
	res, err := op.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "alice", Mechanism: kadm.ScramSha512, Iterations: 8192, Password: "alice-secret"},
		{User: "mallory", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "mallory-secret"},
	})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("SCRAM users: %v", err)
	}
	alice := kadm.NewACLs().Allow("User:alice").AllowHosts("*").ResourcePatternType(kadm.ACLPatternLiteral)
	for _, acl := range []*kadm.ACLBuilder{
		alice.Topics("a").Operations(kadm.OpWrite, kadm.OpRead),
		kadm.NewACLs().Allow("User:alice").AllowHosts("*").ResourcePatternType(kadm.ACLPatternLiteral).Groups("g").Operations(kadm.OpRead),
	} {
		rs, err := op.CreateACLs(ctx, acl)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.Err != nil {
				t.Fatalf("create ACL: %v", r.Err)
			}
		}
	}

	// The operator keeps producing on PLAINTEXT while the refusals below
	// happen; it must never see an error.
	opProducer := client(t, b.operatorAddr(), nil, kgo.DefaultProduceTopic("b"))
	produced := make(chan struct{}, 1<<16)
	errs := make(chan error, 1)
	bg, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for bg.Err() == nil {
			if err := opProducer.ProduceSync(bg, kgo.StringRecord("op")).FirstErr(); err != nil && bg.Err() == nil {
				errs <- err
				return
			}
			select {
			case produced <- struct{}{}:
			default:
			}
		}
	}()
	awaitRecords(t, produced, errs, 3)

	mech512 := scramMech("SCRAM-SHA-512", "alice", "alice-secret")
	app := b.app(t, mech512, kgo.DefaultProduceTopic("a"))
	for i := range 20 {
		if err := app.ProduceSync(ctx, kgo.StringRecord(fmt.Sprint("r", i))).FirstErr(); err != nil {
			t.Fatalf("alice produce to a: %v", err)
		}
	}
	consumer := b.app(t, mech512, kgo.ConsumeTopics("a"), kgo.ConsumerGroup("g"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := 0
	for got < 20 {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("alice consumed %d of 20 in group g", got)
		}
		for _, e := range fs.Errors() {
			t.Fatalf("alice fetch %s/%d: %v", e.Topic, e.Partition, e.Err)
		}
		got += fs.NumRecords()
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("alice commit in group g: %v", err)
	}

	// Nothing else: topic b, and another group.
	if err := app.ProduceSync(ctx, &kgo.Record{Topic: "b", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice produce to b: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	other := kadm.NewClient(b.app(t, mech512))
	if _, err := other.FetchOffsets(ctx, "other-group"); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("alice fetching another group's offsets: %v, want GROUP_AUTHORIZATION_FAILED", err)
	}

	// A wrong password, a user without ACLs, a client without TLS.
	wrong := b.app(t, scramMech("SCRAM-SHA-512", "alice", "not-it"))
	if err := wrong.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("wrong password: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
	mallory := b.app(t, scramMech("SCRAM-SHA-256", "mallory", "mallory-secret"), kgo.DefaultProduceTopic("a"))
	if err := mallory.ProduceSync(ctx, kgo.StringRecord("m")).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("a user without ACLs producing to a: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	plainOnTLS := client(t, b.secureAddr(t), mech512, kgo.RetryTimeout(2*time.Second), kgo.DialTimeout(2*time.Second))
	pingCtx, pingCancel := context.WithTimeout(ctx, 5*time.Second)
	if err := plainOnTLS.Ping(pingCtx); err == nil {
		t.Fatal("a plaintext client on the SASL_SSL port was served")
	}
	pingCancel()

	// The operator was served throughout and still is.
	awaitRecords(t, produced, errs, 3)
	stop()
	<-done
	select {
	case err := <-errs:
		t.Fatalf("the operator's producer failed: %v", err)
	default:
	}
	if len(b.log.Matching("SASL authentication failed", "mechanism=SCRAM-SHA-512", "user=alice")) == 0 {
		t.Errorf("no log line for alice's failed login; log:\n%s", strings.Join(b.log.Matching(""), "\n"))
	}
}

// librdkafka over SASL_SSL (TLS trusting the test CA, SCRAM-SHA-512)
// under ACLs: alice produces to and consumes from topic a, is refused
// topic b, and a wrong password is refused.
func TestKcatSASLSSLUnderACLs(t *testing.T) {
	bin := testkit.RequireTool(t, "kcat")
	b := startSecureBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	op := b.topicsAndAlice(ctx, t)
	rs, err := op.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").AllowHosts("*").ResourcePatternType(kadm.ACLPatternLiteral).
		Topics("a").Operations(kadm.OpWrite, kadm.OpRead))
	if err != nil || rs[0].Err != nil {
		t.Fatalf("create ACL: %v %v", err, rs)
	}
	ca := b.ca.WritePEM(t, t.TempDir(), "ca.pem")
	auth := func(pass string) []string {
		return []string{"-b", b.secureAddr(t), "-X", "security.protocol=SASL_SSL", "-X", "ssl.ca.location=" + ca,
			"-X", "sasl.mechanisms=SCRAM-SHA-512", "-X", "sasl.username=alice", "-X", "sasl.password=" + pass}
	}
	if out, err := kcat(t, bin, "one\ntwo\n", append(auth("alice-secret"), "-P", "-t", "a")...); err != nil {
		t.Fatalf("produce to a: %v\n%s", err, out)
	}
	out, err := kcat(t, bin, "", append(auth("alice-secret"), "-C", "-t", "a", "-o", "beginning", "-e", "-q")...)
	if err != nil || out != "one\ntwo\n" {
		t.Fatalf("consume a: %q, %v", out, err)
	}
	if _, err := kcat(t, bin, "x\n", append(auth("alice-secret"), "-P", "-t", "b")...); err == nil || !strings.Contains(err.Error(), "authoriz") {
		t.Fatalf("produce to b: %v, want an authorization failure", err)
	}
	if _, err := kcat(t, bin, "", append(auth("wrong"), "-L", "-m", "5")...); err == nil || !strings.Contains(err.Error(), "Authentication failed") {
		t.Fatalf("wrong password: %v", err)
	}
}
