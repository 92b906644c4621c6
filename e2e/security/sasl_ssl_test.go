package security

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
)

// SASL over TLS: a SASL_SSL listener authenticates franz-go with
// SCRAM-SHA-256 inside the TLS session, and Metadata sends the client
// back to it.
func TestSASLOverSSL(t *testing.T) {
	ca := tlstest.NewCA(t)
	dir := t.TempDir()
	b := startSASLBroker(t,
		"listeners", "SASL_SSL://127.0.0.1:0,PLAINTEXT://127.0.0.2:0", // netloop wants distinct addresses
		"listener.name.sasl_ssl.plain.sasl.jaas.config", plainJAAS,
		"ssl.keystore.type", "PEM", "ssl.keystore.location", ca.Server(t).WritePEM(t, dir, "k.pem"))
	tlsOpt := kgo.DialTLSConfig(tlstest.ClientConfig(ca, nil))
	createScramUser(t, b.saslAddr(), plainMech(adminUser, adminPass), "SCRAM-SHA-256", "heidi", "heidi-secret", tlsOpt)
	m := scramMech("SCRAM-SHA-256", "heidi", "heidi-secret")
	roundTrip(t, client(t, b.saslAddr(), m, tlsOpt), b.saslAddr(), m, "over-tls", 3, tlsOpt)
}
