package interbroker_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-io/samsa/interbroker"
	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
	"github.com/samsa-io/samsa/testkit"
)

// secureBroker starts a samsa broker whose only listener is SASL_SSL
// (PLAIN, admin/admin-secret) with a certificate of a fresh CA; kv adds
// settings.
func secureBroker(t *testing.T, kv ...string) (*testkit.InProcess, *tlstest.CA) {
	t.Helper()
	ca := tlstest.NewCA(t)
	dir := t.TempDir()
	port, err := testkit.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	base := []string{
		"listeners", fmt.Sprintf("SASL_SSL://127.0.0.1:%d", port),
		"ssl.keystore.type", "PEM",
		"ssl.keystore.location", ca.Server(t).WritePEM(t, dir, "server.pem"),
		"sasl.enabled.mechanisms", "PLAIN",
		"listener.name.sasl_ssl.plain.sasl.jaas.config",
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret";`,
	}
	return testkit.StartInProcess(t, append(base, kv...)...), ca
}

// TestSecuredAgainstSamsa: a Client with Security speaks TLS and SASL to
// a real SASL_SSL listener. The TLS configuration names no server, so the
// peer's certificate is checked against the host dialled (127.0.0.1, in
// its IP SANs); a wrong password is ErrAuthentication, and the broker
// keeps serving the right one.
func TestSecuredAgainstSamsa(t *testing.T) {
	b, ca := secureBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tc := &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12}

	bad := interbroker.New(interbroker.Config{Security: interbroker.Security{TLS: tc,
		SASL: plain.Auth{User: "admin", Pass: "wrong"}.AsMechanism()}})
	defer bad.Close()
	if _, err := bad.Send(ctx, b.Addr, kmsg.NewPtrMetadataRequest()); !errors.Is(err, interbroker.ErrAuthentication) || !errors.Is(err, interbroker.ErrConnection) {
		t.Fatalf("wrong password: %v, want ErrAuthentication", err)
	}

	untrusted := interbroker.New(interbroker.Config{Security: interbroker.Security{TLS: &tls.Config{MinVersion: tls.VersionTLS12},
		SASL: plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism()}})
	defer untrusted.Close()
	if _, err := untrusted.Send(ctx, b.Addr, kmsg.NewPtrMetadataRequest()); !errors.Is(err, interbroker.ErrAuthentication) {
		t.Fatalf("untrusted CA: %v, want ErrAuthentication", err)
	}

	good := interbroker.New(interbroker.Config{Security: interbroker.Security{TLS: tc,
		SASL: plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism()}})
	defer good.Close()
	resp, err := good.Send(ctx, b.Addr, kmsg.NewPtrMetadataRequest())
	if err != nil {
		t.Fatal(err)
	}
	if md := resp.(*kmsg.MetadataResponse); len(md.Brokers) != 1 {
		t.Fatalf("Metadata: %d brokers", len(md.Brokers))
	}
}

// TestSecuredSessionRenewed: with connections.max.reauth.ms, the broker
// gives each SASL session a lifetime (KIP-368) and closes a connection
// that outlives it; the Client moves to a new, freshly authenticated
// connection before then, so a Send after the lifetime still succeeds.
func TestSecuredSessionRenewed(t *testing.T) {
	const lifetime = 1500 * time.Millisecond
	b, ca := secureBroker(t, "connections.max.reauth.ms", fmt.Sprint(lifetime.Milliseconds()))
	c := interbroker.New(interbroker.Config{Security: interbroker.Security{TLS: &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12},
		SASL: plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism()}})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	for time.Since(start) < 3*lifetime {
		if _, err := c.Send(ctx, b.Addr, kmsg.NewPtrMetadataRequest()); err != nil {
			t.Fatalf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(100 * time.Millisecond): // a request now and then, as a follower's fetches come
		}
	}
}

// TestSecuredScramAgainstSamsa: SCRAM-SHA-512, whose exchange takes two
// SaslAuthenticate round trips, with a credential made through the
// broker's PLAINTEXT listener (AlterUserScramCredentials).
func TestSecuredScramAgainstSamsa(t *testing.T) {
	ca := tlstest.NewCA(t)
	var ports [2]int
	for i := range ports {
		p, err := testkit.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = p
	}
	b := testkit.StartInProcess(t, "listeners", fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,SASL_SSL://127.0.0.1:%d", ports[0], ports[1]),
		"ssl.keystore.type", "PEM", "ssl.keystore.location", ca.Server(t).WritePEM(t, t.TempDir(), "server.pem"),
		"sasl.enabled.mechanisms", "SCRAM-SHA-512")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm, _ := b.Admin(t)
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "broker", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "broker-secret"}})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	secure := fmt.Sprintf("127.0.0.1:%d", ports[1])
	tc := &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12}
	for _, c := range []struct {
		pass string
		ok   bool
	}{{"wrong", false}, {"broker-secret", true}} {
		cl := interbroker.New(interbroker.Config{Security: interbroker.Security{TLS: tc,
			SASL: scram.Auth{User: "broker", Pass: c.pass}.AsSha512Mechanism()}})
		_, err := cl.Send(ctx, secure, kmsg.NewPtrMetadataRequest())
		cl.Close()
		if c.ok && err != nil || !c.ok && !errors.Is(err, interbroker.ErrAuthentication) {
			t.Fatalf("password %q: %v", c.pass, err)
		}
	}
}
