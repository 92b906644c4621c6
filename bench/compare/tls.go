package compare

import (
	"crypto/tls"

	"github.com/samsa-io/samsa/testkit"
)

// TLSFiles are the certificates of the TLS configurations (samsa-tls,
// kafka-tls): one CA made for the run and one broker certificate for
// 127.0.0.1 and localhost (ECDSA P-256, testkit.WriteTestCerts), in a
// PKCS#12 keystore and truststore that samsa and Kafka both read, so both
// serve the same certificate with the same key; Client trusts the CA.
// TLS 1.3 is what both negotiate with franz-go.
type TLSFiles struct {
	certs  *testkit.TestCerts
	Client *tls.Config
}

// MakeTLSFiles writes the run's CA and broker certificate into dir.
func MakeTLSFiles(dir string) (*TLSFiles, error) {
	certs, err := testkit.WriteTestCerts(dir)
	if err != nil {
		return nil, err
	}
	return &TLSFiles{certs: certs, Client: certs.Client()}, nil
}

// tlsSettings is what the report says of a TLS configuration.
const tlsSettings = "SSL listener (TLS, a PKCS#12 keystore with an ECDSA P-256 certificate of a CA made for the run, no client certificate); franz-go clients over TLS; the transactional workloads and Kafka's tools are not run"

// serverSettings are the ssl.* keys, as key=value, both brokers read.
func (f *TLSFiles) serverSettings() []string {
	c := f.certs
	return []string{"ssl.keystore.type=PKCS12", "ssl.keystore.location=" + c.KeystoreP12, "ssl.keystore.password=" + c.Password,
		"ssl.key.password=" + c.Password,
		"ssl.truststore.type=PKCS12", "ssl.truststore.location=" + c.TruststoreP12, "ssl.truststore.password=" + c.Password}
}
