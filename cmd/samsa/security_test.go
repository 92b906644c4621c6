package main

import (
	"context"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
	"github.com/samsa-io/samsa/testkit"
)

// plainUsers is the SASL_SSL listener's PLAIN user list (JAAS).
const plainUsers = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`

// The client verbs over a SASL_SSL listener: TLS trusting a test CA given
// by --tls-ca, SASL PLAIN and SCRAM by flags, the password from the
// environment, and the same through kcat's -X properties; a wrong
// password and an untrusted certificate are refused with an error.
func TestCLIOverSASLSSL(t *testing.T) {
	ca := tlstest.NewCA(t)
	dir := t.TempDir()
	plainPort, securePort, err := freePorts()
	if err != nil {
		t.Fatal(err)
	}
	b := testkit.StartInProcess(t,
		"listeners", fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,SASL_SSL://127.0.0.1:%d", plainPort, securePort),
		"sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
		"listener.name.sasl_ssl.plain.sasl.jaas.config", plainUsers,
		"ssl.keystore.type", "PEM", "ssl.keystore.location", ca.Server(t).WritePEM(t, dir, "broker.pem"))
	caFile := ca.WritePEM(t, dir, "ca.pem")
	secure := b.Server.Addrs()[1].(*net.TCPAddr).AddrPort().String()
	ctx := context.Background()
	op := kadm.NewClient(testkit.NewClient(t, kgo.SeedBrokers(b.Addr)))
	res, err := op.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "bob", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "bob-secret"},
		{User: "bob", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "bob-secret"},
	})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("SCRAM user: %v", err)
	}

	scram512 := []string{"--tls-ca", caFile, "--sasl-mechanism", "SCRAM-SHA-512", "--sasl-user", "bob", "--sasl-password", "bob-secret"}
	mustCLI(t, "", append([]string{"topic", "create", "secured", "-p", "1", "--bootstrap-server", secure}, scram512...)...)
	if got := mustCLI(t, "", append([]string{"topic", "list", "--bootstrap-server", secure}, scram512...)...); !strings.Contains(got, "secured") {
		t.Errorf("topic list over SASL_SSL lacks the topic:\n%s", got)
	}

	t.Setenv(saslPasswordEnv, "alice-secret")
	mustCLI(t, "one\ntwo\n", "produce", "secured", "-b", secure, "-q", "--tls-ca", caFile, "--sasl-mechanism", "PLAIN", "--sasl-user", "alice")
	props := "security.protocol=SASL_SSL,sasl.mechanisms=SCRAM-SHA-256,sasl.username=bob,sasl.password=bob-secret,ssl.ca.location=" + caFile
	if got := mustCLI(t, "", "consume", "secured", "-b", secure, "-e", "-X", props); got != "one\ntwo\n" {
		t.Errorf("consume over SASL_SSL (-X) = %q, want the two records", got)
	}
	if got := mustCLI(t, "", append([]string{"cluster", "--bootstrap-server", secure}, scram512...)...); !strings.Contains(got, "Under-replicated partitions: 0") {
		t.Errorf("cluster over SASL_SSL:\n%s", got)
	}
	if got := mustCLI(t, "", append([]string{"group", "list", "--bootstrap-server", secure}, scram512...)...); got == "" {
		t.Errorf("group list over SASL_SSL printed nothing")
	}

	for want, args := range map[string][]string{
		"SASL_AUTHENTICATION_FAILED": {"--tls-ca", caFile, "--sasl-mechanism", "SCRAM-SHA-512", "--sasl-user", "bob", "--sasl-password", "wrong"},
		"certificate":                {"--tls", "--sasl-mechanism", "SCRAM-SHA-512", "--sasl-user", "bob", "--sasl-password", "bob-secret"},
	} {
		_, _, err := runCLI(t, "", append([]string{"cluster", "--bootstrap-server", secure, "--timeout", "5s"}, args...)...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("samsa cluster %s: %v, want an error naming %s", strings.Join(args, " "), err, want)
		}
	}
}

// Bad security flags fail before any connection is tried.
func TestSecurityFlagsRejectBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--sasl-mechanism", "GSSAPI", "--sasl-user", "u", "--sasl-password", "p"},
		{"--sasl-mechanism", "PLAIN"},
		{"--tls-cert", "c.pem"},
		{"--tls-ca", "/nonexistent/ca.pem"},
		{"-X", "security.protocol=KERBEROS"},
		{"-X", "security.protocol=SASL_SSL"}, // no user
		{"-X", "queue.buffering.max.ms=5"},
		{"-X", "novalue"},
	} {
		t.Setenv(saslPasswordEnv, "")
		full := append([]string{"cluster", "--bootstrap-server", "127.0.0.1:1", "--timeout", "1s"}, args...)
		_, _, err := runCLI(t, "", full...)
		if err == nil || strings.Contains(err.Error(), "no answer") {
			t.Errorf("samsa %s: %v, want a flag error", strings.Join(full, " "), err)
		}
	}
}

// freePorts returns two free TCP ports.
func freePorts() (int, int, error) {
	a, err := testkit.FreePort()
	if err != nil {
		return 0, 0, err
	}
	b, err := testkit.FreePort()
	return a, b, err
}

// Mutual TLS: an SSL listener with ssl.client.auth=required serves a
// client certificate given by --tls-cert/--tls-key (one PEM file holding
// both, as keystores are written), and refuses a client without one.
func TestCLIWithClientCertificate(t *testing.T) {
	ca := tlstest.NewCA(t)
	dir := t.TempDir()
	caFile := ca.WritePEM(t, dir, "ca.pem")
	b := testkit.StartInProcess(t, "listeners", "SSL://127.0.0.1:0",
		"ssl.keystore.type", "PEM", "ssl.keystore.location", ca.Server(t).WritePEM(t, dir, "broker.pem"),
		"ssl.truststore.type", "PEM", "ssl.truststore.location", caFile, "ssl.client.auth", "required")
	client := ca.Client(t, pkix.Name{CommonName: "cli"}).WritePEM(t, dir, "client.pem")
	if got := mustCLI(t, "", "cluster", "--bootstrap-server", b.Addr, "--tls-ca", caFile, "--tls-cert", client, "--tls-key", client); !strings.Contains(got, "Offline partitions: 0") {
		t.Errorf("cluster over mutual TLS:\n%s", got)
	}
	if _, _, err := runCLI(t, "", "cluster", "--bootstrap-server", b.Addr, "--tls-ca", caFile, "--timeout", "5s"); err == nil {
		t.Errorf("cluster without a client certificate succeeded on a listener that requires one")
	}
}
