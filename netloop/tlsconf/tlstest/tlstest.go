// Package tlstest makes a throwaway certificate authority and the
// certificates tests need, at test time: nothing secret is checked in,
// and nothing expires in the repository. Files are written as PEM
// (KIP-651's keystore: private key and chain in one file) and PKCS#12,
// the two keystore types samsa reads.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// CA is a test certificate authority.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	Pool *x509.CertPool
}

// Cert is an issued certificate with its key.
type Cert struct {
	Leaf *x509.Certificate
	Key  *ecdsa.PrivateKey
	CA   *CA
}

// serial is a random certificate serial number.
func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// NewCA makes a self-signed CA valid for a day.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: "samsa test CA", Organization: []string{"samsa"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{Cert: cert, key: key, Pool: pool}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// Server issues a server certificate for localhost and 127.0.0.1.
func (ca *CA) Server(t testing.TB) *Cert {
	t.Helper()
	return ca.issue(t, pkix.Name{CommonName: "localhost"}, x509.ExtKeyUsageServerAuth)
}

// Client issues a client certificate with the given subject.
func (ca *CA) Client(t testing.TB, subject pkix.Name) *Cert {
	t.Helper()
	return ca.issue(t, subject, x509.ExtKeyUsageClientAuth)
}

// Broker issues a certificate for localhost and 127.0.0.1 with the given
// subject that serves both ways, as a Kafka broker's keystore does on a
// TLS inter-broker listener with ssl.client.auth=required: its listener's
// server certificate and its client certificate to the other brokers.
func (ca *CA) Broker(t testing.TB, subject pkix.Name) *Cert {
	t.Helper()
	return ca.issue(t, subject, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
}

func (ca *CA) issue(t testing.TB, subject pkix.Name, usage ...x509.ExtKeyUsage) *Cert {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      subject,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usage,
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &Cert{Leaf: leaf, Key: key, CA: ca}
}

// TLS is the certificate as crypto/tls wants it (leaf, then the CA).
func (c *Cert) TLS() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{c.Leaf.Raw, c.CA.Cert.Raw}, PrivateKey: c.Key, Leaf: c.Leaf}
}

// KeyPEM is the private key as an unencrypted PKCS#8 PEM block.
func (c *Cert) KeyPEM(t testing.TB) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(c.Key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// ChainPEM is the leaf and the CA certificate as PEM.
func (c *Cert) ChainPEM() []byte {
	return append(CertPEM(c.Leaf), CertPEM(c.CA.Cert)...)
}

// CertPEM encodes one certificate.
func CertPEM(cert *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
}

// WritePEM writes a PEM keystore (key, then chain) into dir and returns
// its path.
func (c *Cert) WritePEM(t testing.TB, dir, name string) string {
	t.Helper()
	return write(t, dir, name, append(c.KeyPEM(t), c.ChainPEM()...))
}

// WritePKCS12 writes a PKCS#12 keystore protected by password.
func (c *Cert) WritePKCS12(t testing.TB, dir, name, password string) string {
	t.Helper()
	data, err := pkcs12.Modern.Encode(c.Key, c.Leaf, []*x509.Certificate{c.CA.Cert}, password)
	if err != nil {
		t.Fatal(err)
	}
	return write(t, dir, name, data)
}

// WritePEM writes the CA certificate as a PEM truststore.
func (ca *CA) WritePEM(t testing.TB, dir, name string) string {
	t.Helper()
	return write(t, dir, name, CertPEM(ca.Cert))
}

// WritePKCS12 writes the CA certificate as a PKCS#12 truststore (Java's
// trusted-certificate entries).
func (ca *CA) WritePKCS12(t testing.TB, dir, name, password string) string {
	t.Helper()
	data, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca.Cert}, password)
	if err != nil {
		t.Fatal(err)
	}
	return write(t, dir, name, data)
}

func write(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// ClientConfig is a client's tls.Config trusting ca, presenting cert
// when it is not nil.
func ClientConfig(ca *CA, cert *Cert) *tls.Config {
	c := &tls.Config{RootCAs: ca.Pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
	if cert != nil {
		c.Certificates = []tls.Certificate{cert.TLS()}
	}
	return c
}
