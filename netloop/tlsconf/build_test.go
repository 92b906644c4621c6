package tlsconf

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/youmark/pkcs8"

	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
)

// settings is a Getter over a map; every key reports itself as its
// origin, except those the test prefixes as listener overrides.
type settings map[string]string

func (s settings) get(key string) (string, string) {
	if v, ok := s["listener.name.ssl."+key]; ok {
		return v, "listener.name.ssl." + key
	}
	return s[key], key
}

// handshake makes one handshake against l with a client presenting cert
// (nil: none) and reports the principal the listener gave it.
func handshake(t *testing.T, l *Listener, ca *tlstest.CA, cert *tlstest.Cert) (string, error) {
	t.Helper()
	cs, ss := pipe(t)
	errs := make(chan error, 1)
	client := tls.Client(cs, tlstest.ClientConfig(ca, cert))
	go func() { errs <- client.Handshake() }()
	server := tls.Server(ss, l.Config)
	err := server.Handshake()
	if cerr := <-errs; err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	st := server.ConnectionState()
	if len(st.VerifiedChains) == 0 {
		return "User:ANONYMOUS", nil
	}
	return l.Principal(st.PeerCertificates[0])
}

// Every keystore form serves the same certificate: a PEM file, a PEM file
// with an encrypted key, inline PEM, PKCS12 (also under Kafka's default
// type JKS, as Java reads it), with PEM and PKCS12 truststores and mapped
// principals.
func TestBuildKeystoresAndTruststores(t *testing.T) {
	ca := tlstest.NewCA(t)
	srv := ca.Server(t)
	dir := t.TempDir()
	encrypted := writeEncryptedPEM(t, srv, dir, "secret")
	alice := ca.Client(t, pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"acme"}})
	base := settings{"ssl.client.auth": "required", "ssl.truststore.type": "PEM", "ssl.truststore.location": ca.WritePEM(t, dir, "ca.pem")}
	for name, s := range map[string]settings{
		"pem file":      {"ssl.keystore.type": "PEM", "ssl.keystore.location": srv.WritePEM(t, dir, "k.pem")},
		"encrypted pem": {"ssl.keystore.type": "PEM", "ssl.keystore.location": encrypted, "ssl.key.password": "secret"},
		"inline pem":    {"ssl.keystore.type": "PEM", "ssl.keystore.key": string(srv.KeyPEM(t)), "ssl.keystore.certificate.chain": string(srv.ChainPEM())},
		"pkcs12": {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": srv.WritePKCS12(t, dir, "k.p12", "pw"), "ssl.keystore.password": "pw",
			"ssl.truststore.type": "PKCS12", "ssl.truststore.location": ca.WritePKCS12(t, dir, "ca.p12", "tpw"), "ssl.truststore.password": "tpw"},
		"pkcs12 as jks": {"ssl.keystore.location": srv.WritePKCS12(t, dir, "k2.p12", "pw"), "ssl.keystore.password": "pw"},
		"inline trust": {"ssl.keystore.type": "PEM", "ssl.keystore.location": srv.WritePEM(t, dir, "k3.pem"),
			"ssl.truststore.location": "", "ssl.truststore.certificates": string(tlstest.CertPEM(ca.Cert))},
	} {
		merged := settings{}
		for k, v := range base {
			merged[k] = v
		}
		for k, v := range s {
			merged[k] = v
		}
		if merged["ssl.truststore.location"] == "" {
			delete(merged, "ssl.truststore.location")
		}
		merged["ssl.principal.mapping.rules"] = "RULE:^CN=(.*?),OU=eng.*$/$1/,DEFAULT"
		l, err := Build(merged.get)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, err := handshake(t, l, ca, alice)
		if err != nil || p != "User:alice" {
			t.Fatalf("%s: principal %q, %v; want User:alice", name, p, err)
		}
		if _, err := handshake(t, l, ca, nil); err == nil {
			t.Fatalf("%s: a client without a certificate got through ssl.client.auth=required", name)
		}
	}
}

// Startup errors name the key (a listener override by its full name) and
// the file.
func TestBuildErrorsNameKeyAndFile(t *testing.T) {
	ca := tlstest.NewCA(t)
	srv := ca.Server(t)
	dir := t.TempDir()
	jks := filepath.Join(dir, "k.jks")
	if err := os.WriteFile(jks, []byte("\xfe\xed\xfe\xed\x00\x00\x00\x02"), 0o600); err != nil {
		t.Fatal(err)
	}
	pem := srv.WritePEM(t, dir, "k.pem")
	p12 := srv.WritePKCS12(t, dir, "k.p12", "pw")
	for _, tc := range []struct {
		s    settings
		want []string
	}{
		{settings{"listener.name.ssl.ssl.keystore.location": "/nope/k.pem", "ssl.keystore.type": "PEM"}, []string{"listener.name.ssl.ssl.keystore.location=/nope/k.pem", "no such file"}},
		{settings{}, []string{"ssl.keystore.location is not set"}},
		{settings{"ssl.keystore.location": jks}, []string{"JKS keystore", "keytool -importkeystore", jks}},
		{settings{"ssl.keystore.location": p12, "ssl.keystore.type": "PKCS12", "ssl.keystore.password": "wrong"}, []string{"wrong password", p12}},
		{settings{"ssl.keystore.location": pem, "ssl.keystore.type": "PKCS12"}, []string{"ssl.keystore.location=" + pem}},
		{settings{"ssl.keystore.location": pem, "ssl.keystore.type": "PEM", "ssl.truststore.location": "/nope/ca", "ssl.truststore.type": "PEM"}, []string{"ssl.truststore.location=/nope/ca"}},
		{settings{"ssl.keystore.location": pem, "ssl.keystore.type": "PEM", "ssl.enabled.protocols": "TLSv1.1"}, []string{"ssl.enabled.protocols", "TLSv1.1"}},
		{settings{"ssl.keystore.location": pem, "ssl.keystore.type": "PEM", "ssl.cipher.suites": "TLS_NOPE"}, []string{"ssl.cipher.suites", "TLS_NOPE"}},
		{settings{"ssl.keystore.location": pem, "ssl.keystore.type": "PEM", "ssl.principal.mapping.rules": "RULE:x"}, []string{"ssl.principal.mapping.rules"}},
		{settings{"ssl.keystore.location": pem, "ssl.keystore.type": "PEM", "ssl.keystore.key": "x"}, []string{"ssl.keystore.key"}},
	} {
		_, err := Build(tc.s.get)
		if err == nil {
			t.Errorf("%v: accepted", tc.s)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not say %q", tc.s, err, w)
			}
		}
	}
}

// ssl.enabled.protocols and ssl.cipher.suites reach the tls.Config.
func TestBuildVersionsAndSuites(t *testing.T) {
	ca := tlstest.NewCA(t)
	pemPath := ca.Server(t).WritePEM(t, t.TempDir(), "k.pem")
	l, err := Build(settings{"ssl.keystore.type": "PEM", "ssl.keystore.location": pemPath, "ssl.enabled.protocols": "TLSv1.2",
		"ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256"}.get)
	if err != nil {
		t.Fatal(err)
	}
	c := l.Config
	if c.MinVersion != tls.VersionTLS12 || c.MaxVersion != tls.VersionTLS12 || len(c.CipherSuites) != 2 ||
		c.CipherSuites[0] != tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 {
		t.Fatalf("versions %x-%x, suites %x", c.MinVersion, c.MaxVersion, c.CipherSuites)
	}
	if _, err := handshake(t, l, ca, nil); err != nil {
		t.Fatal(err)
	}
}

// A reloaded keystore serves its new certificate to the next handshake.
func TestKeystoreReload(t *testing.T) {
	ca := tlstest.NewCA(t)
	dir := t.TempDir()
	first, second := ca.Server(t), ca.Server(t)
	path := first.WritePEM(t, dir, "k.pem")
	s := settings{"ssl.keystore.type": "PEM", "ssl.keystore.location": path}
	l, err := Build(s.get)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Keystore.Leaf().Equal(first.Leaf) {
		t.Fatal("not the first certificate")
	}
	second.WritePEM(t, dir, "k.pem")
	if err := l.Keystore.Reload(s.get); err != nil {
		t.Fatal(err)
	}
	cert, _ := l.Config.GetCertificate(nil)
	if !cert.Leaf.Equal(second.Leaf) {
		t.Fatal("the reloaded keystore serves the old certificate")
	}
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.Keystore.Reload(s.get); err == nil || !l.Keystore.Leaf().Equal(second.Leaf) {
		t.Fatalf("a bad keystore: err %v; the certificate must stay", err)
	}
}

func writeEncryptedPEM(t *testing.T, c *tlstest.Cert, dir, password string) string {
	t.Helper()
	der, err := pkcs8.MarshalPrivateKey(c.Key, []byte(password), nil)
	if err != nil {
		t.Fatal(err)
	}
	data := append(pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: der}), c.ChainPEM()...)
	path := filepath.Join(dir, "enc.pem")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
