package tlsconf

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"testing"

	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
)

// dialAs makes one handshake of a Client config (ServerName set to name)
// against a listener, and reports the listener's principal for it.
func dialAs(t *testing.T, l *Listener, client *tls.Config, name string) (string, error) {
	t.Helper()
	cs, ss := pipe(t)
	client = client.Clone()
	client.ServerName = name
	errs := make(chan error, 1)
	cc := tls.Client(cs, client)
	go func() { errs <- cc.Handshake() }()
	server := tls.Server(ss, l.Config)
	serr := server.Handshake()
	if err := <-errs; err != nil {
		return "", err
	}
	if serr != nil {
		return "", serr
	}
	return l.Principal(server.ConnectionState().PeerCertificates[0])
}

// Client is the broker's side of a TLS inter-broker link: it presents
// the listener's keystore (so mTLS listeners see the broker's principal),
// trusts the truststore, and checks the peer's name unless
// ssl.endpoint.identification.algorithm is empty.
func TestClient(t *testing.T) {
	ca := tlstest.NewCA(t)
	other := tlstest.NewCA(t)
	dir := t.TempDir()
	// The broker's certificate is a client certificate here, since the
	// listener below requires one; Kafka's keystores serve both ways.
	broker := ca.Client(t, pkix.Name{CommonName: "broker-1"})
	serverSettings := settings{
		KeyKeystoreType: "PEM", KeyKeystoreLocation: ca.Server(t).WritePEM(t, dir, "server.pem"),
		KeyTruststoreType: "PEM", KeyTruststoreLocation: ca.WritePEM(t, dir, "ca.pem"), KeyClientAuth: "required",
	}
	l, err := Build(serverSettings.get)
	if err != nil {
		t.Fatal(err)
	}
	clientSettings := settings{
		KeyKeystoreType: "PEM", KeyKeystoreLocation: broker.WritePEM(t, dir, "broker.pem"),
		KeyTruststoreType: "PEM", KeyTruststoreLocation: ca.WritePEM(t, dir, "ca2.pem"),
		KeyEndpointIdentAlgo: "https", // Kafka's default, which the broker's settings report when unset
	}
	ks, err := LoadKeystore(clientSettings.get)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Client(clientSettings.get, ks)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := dialAs(t, l, cfg, "localhost"); err != nil || p != "User:CN=broker-1" {
		t.Fatalf("localhost: principal %q, %v", p, err)
	}
	if _, err := dialAs(t, l, cfg, "broker.example"); err == nil {
		t.Fatal("a certificate for localhost accepted for broker.example with hostname verification on")
	}

	clientSettings[KeyEndpointIdentAlgo] = ""
	noName, err := Client(clientSettings.get, ks)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := dialAs(t, l, noName, "broker.example"); err != nil || p != "User:CN=broker-1" {
		t.Fatalf("no hostname verification: principal %q, %v", p, err)
	}

	// The chain is still checked without the name.
	clientSettings[KeyTruststoreLocation] = other.WritePEM(t, dir, "other.pem")
	untrusting, err := Client(clientSettings.get, ks)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dialAs(t, l, untrusting, "localhost"); err == nil {
		t.Fatal("a certificate of an untrusted CA accepted")
	}

	clientSettings[KeyEndpointIdentAlgo] = "ldap"
	if _, err := Client(clientSettings.get, ks); err == nil {
		t.Fatal("ssl.endpoint.identification.algorithm=ldap accepted")
	}
}
