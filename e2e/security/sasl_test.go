package security

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Produce and consume through the SASL listener with each mechanism:
// PLAIN from the JAAS users, SCRAM with credentials made through the
// Kafka API. The client must also be sent back to the SASL listener by
// Metadata (the PLAINTEXT listener would refuse its handshake).
func TestSASLMechanismsProduceConsume(t *testing.T) {
	b := startSASLBroker(t)
	admin := plainMech(adminUser, adminPass)
	for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} {
		createScramUser(t, b.saslAddr(), admin, mech, "scram-"+mech, "pw-"+mech)
	}
	cases := map[string]struct {
		user, pass, mech string
	}{
		"PLAIN":         {aliceUser, alicePass, "PLAIN"},
		"SCRAM-SHA-256": {"scram-SCRAM-SHA-256", "pw-SCRAM-SHA-256", "SCRAM-SHA-256"},
		"SCRAM-SHA-512": {"scram-SCRAM-SHA-512", "pw-SCRAM-SHA-512", "SCRAM-SHA-512"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			m := plainMech(c.user, c.pass)
			if c.mech != "PLAIN" {
				m = scramMech(c.mech, c.user, c.pass)
			}
			cl := client(t, b.saslAddr(), m)
			roundTrip(t, cl, b.saslAddr(), m, "sasl-"+name, 5)
		})
	}
	// SCRAM-SHA-256's password does not open SCRAM-SHA-512.
	cl := client(t, b.saslAddr(), scramMech("SCRAM-SHA-512", "scram-SCRAM-SHA-256", "pw-SCRAM-SHA-256"))
	if err := cl.Ping(context.Background()); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("SCRAM-SHA-512 as a SCRAM-SHA-256-only user: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
}

// A wrong password is refused (SASL_AUTHENTICATION_FAILED, one log line
// naming the client, mechanism and user) while another client goes on
// producing.
func TestSASLWrongPasswordRefusedOthersServed(t *testing.T) {
	b := startSASLBroker(t)
	good := client(t, b.saslAddr(), plainMech(aliceUser, alicePass))
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	errs := make(chan error, 1)
	produced := make(chan struct{}, 1024) // one per acknowledged record
	go func() {
		defer close(errs)
		for ctx.Err() == nil {
			err := good.ProduceSync(ctx, &kgo.Record{Topic: "busy", Value: []byte("v")}).FirstErr()
			if err != nil && ctx.Err() == nil {
				errs <- err
				return
			}
			select {
			case produced <- struct{}{}:
			default:
			}
		}
	}()
	awaitRecords(t, produced, errs, 5)

	for _, m := range []struct{ name, mech, user string }{
		{"PLAIN", "PLAIN", aliceUser},
		{"SCRAM", "SCRAM-SHA-256", "nobody"},
	} {
		mech := plainMech(m.user, "wrong")
		if m.mech != "PLAIN" {
			mech = scramMech(m.mech, m.user, "wrong")
		}
		bad := client(t, b.saslAddr(), mech)
		err := bad.Ping(context.Background())
		if !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Fatalf("%s wrong password: %v, want SASL_AUTHENTICATION_FAILED", m.name, err)
		}
		if lines := b.log.Matching("SASL authentication failed", "mechanism="+m.mech, "user="+m.user, "client=127.0.0.1:"); len(lines) == 0 {
			t.Fatalf("%s: no log line for the failed authentication; log:\n%s", m.name, b.log.Matching(""))
		}
	}
	for len(produced) > 0 {
		<-produced // acknowledged before the failures
	}
	awaitRecords(t, produced, errs, 5)
	stop()
	if err := <-errs; err != nil {
		t.Fatalf("the good producer failed: %v", err)
	}
}

// A client without SASL on the SASL listener is refused: it gets its
// ApiVersions, then the connection closes on its first other request,
// with one log line.
func TestNonSASLClientRefusedOnSASLListener(t *testing.T) {
	b := startSASLBroker(t)
	cl := client(t, b.saslAddr(), nil, kgo.RetryTimeout(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).ListTopics(ctx); err == nil {
		t.Fatal("a client without SASL listed topics on the SASL listener")
	}
	if len(b.log.Matching("before authentication", "api=Metadata")) == 0 {
		t.Fatalf("no log line for the unauthenticated request; log:\n%s", b.log.Matching(""))
	}
	// The PLAINTEXT listener still serves clients without SASL, and its
	// Metadata sends them to the PLAINTEXT listener, not the first one.
	roundTrip(t, client(t, b.plainAddr(t), nil), b.plainAddr(t), nil, "plain", 3)
}

// SASL on a PLAINTEXT listener gets Kafka's answer, ILLEGAL_SASL_STATE;
// an unknown mechanism on the SASL listener UNSUPPORTED_SASL_MECHANISM.
func TestSASLRefusals(t *testing.T) {
	b := startSASLBroker(t, "listener.name.sasl_plaintext.sasl.enabled.mechanisms", "SCRAM-SHA-256")
	ctx := context.Background()
	cl := client(t, b.plainAddr(t), plainMech(aliceUser, alicePass))
	if err := cl.Ping(ctx); !errors.Is(err, kerr.IllegalSaslState) {
		t.Fatalf("SASL on PLAINTEXT: %v, want ILLEGAL_SASL_STATE", err)
	}
	cl = client(t, b.saslAddr(), plainMech(aliceUser, alicePass))
	if err := cl.Ping(ctx); !errors.Is(err, kerr.UnsupportedSaslMechanism) {
		t.Fatalf("PLAIN where only SCRAM-SHA-256 is enabled: %v, want UNSUPPORTED_SASL_MECHANISM", err)
	}
}

// SCRAM credentials outlive a restart of a single broker, and
// DescribeUserScramCredentials lists them.
func TestScramCredentialsSurviveRestart(t *testing.T) {
	b := startSASLBroker(t)
	createScramUser(t, b.saslAddr(), plainMech(adminUser, adminPass), "SCRAM-SHA-256", "bob", "bob-secret")
	b.Restart()
	m := scramMech("SCRAM-SHA-256", "bob", "bob-secret")
	roundTrip(t, client(t, b.saslAddr(), m), b.saslAddr(), m, "after-restart", 3)

	adm := kadm.NewClient(client(t, b.saslAddr(), m))
	described, err := adm.DescribeUserSCRAMs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	bob, ok := described["bob"]
	if !ok || bob.Err != nil || len(bob.CredInfos) != 1 || bob.CredInfos[0].Mechanism != kadm.ScramSha256 || bob.CredInfos[0].Iterations != 4096 {
		t.Fatalf("described %+v, want bob with SCRAM-SHA-256 at 4096 iterations", described)
	}
}

// awaitRecords waits for n more acknowledged records of the producer
// that signals them on produced and its failure on errs.
func awaitRecords(t *testing.T, produced <-chan struct{}, errs <-chan error, n int) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for range n {
		select {
		case <-produced:
		case err := <-errs:
			t.Fatalf("the good producer failed: %v", err)
		case <-timeout:
			t.Fatal("the good producer stalled")
		}
	}
}
