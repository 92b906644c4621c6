package testkit

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"fmt"
	"testing"

	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
)

// TestCerts are the TLS files of a CA made for one run and of a broker
// certificate it issued (CN=localhost, for localhost and 127.0.0.1, good
// for both ends of a connection), for programs (interop, bench-compare)
// that start brokers with TLS listeners outside a test.
type TestCerts struct {
	CA *tlstest.CA
	// CAPEM is the CA certificate, a PEM truststore; KeystorePEM the
	// broker's key and chain (KIP-651).
	CAPEM, KeystorePEM string
	// KeystoreP12 and TruststoreP12 are the same as PKCS#12, protected
	// by Password: what both samsa and a Java broker read.
	KeystoreP12, TruststoreP12, Password string
}

// Client is a client's TLS configuration trusting the CA.
func (c *TestCerts) Client() *tls.Config { return tlstest.ClientConfig(c.CA, nil) }

// WriteTestCerts makes the CA and the broker certificate and writes their
// files into dir.
func WriteTestCerts(dir string) (certs *TestCerts, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(certFailure)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("testkit: test certificates: %s", f.msg)
		}
	}()
	t := failT{}
	const password = "samsa-test-secret"
	ca := tlstest.NewCA(t)
	broker := ca.Broker(t, pkix.Name{CommonName: "localhost"})
	return &TestCerts{CA: ca, CAPEM: ca.WritePEM(t, dir, "ca.pem"), KeystorePEM: broker.WritePEM(t, dir, "broker.pem"),
		KeystoreP12: broker.WritePKCS12(t, dir, "broker.p12", password), TruststoreP12: ca.WritePKCS12(t, dir, "ca.p12", password),
		Password: password}, nil
}

// certFailure carries a tlstest failure out of failT.
type certFailure struct{ msg string }

// failT lets a program, not a test, call tlstest (which takes a
// testing.TB): a failure panics with certFailure, which WriteTestCerts
// turns back into an error. The embedded nil TB is never called.
type failT struct{ testing.TB }

func (failT) Helper()                           {}
func (failT) Fatal(args ...any)                 { panic(certFailure{fmt.Sprint(args...)}) }
func (failT) Fatalf(format string, args ...any) { panic(certFailure{fmt.Sprintf(format, args...)}) }
