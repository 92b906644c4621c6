package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strings"
)

// Listener is what a TLS listener is served with: the server's
// tls.Config, the keystore behind its GetCertificate (Reload it to change
// certificates without a restart), and the principal of a client
// certificate.
type Listener struct {
	Config    *tls.Config
	Keystore  *Keystore
	Principal func(leaf *x509.Certificate) (string, error)
}

// Build reads a listener's ssl.* settings. Errors name the key (as the
// Getter reports it) and, for files, the path.
func Build(get Getter) (*Listener, error) {
	ks, err := LoadKeystore(get)
	if err != nil {
		return nil, err
	}
	pool, err := loadTruststore(get)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{GetCertificate: ks.GetCertificate, ClientCAs: pool}
	auth, authKey := get(KeyClientAuth)
	switch strings.ToLower(strings.TrimSpace(auth)) {
	case "", "none":
		cfg.ClientAuth = tls.NoClientCert
	case "requested":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case "required":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, fmt.Errorf("%s=%q: want none, requested or required", authKey, auth)
	}
	if cfg.MinVersion, cfg.MaxVersion, err = versions(get); err != nil {
		return nil, err
	}
	if cfg.CipherSuites, err = cipherSuites(get); err != nil {
		return nil, err
	}
	rulesText, rulesKey := get(KeyPrincipalMapping)
	rules, err := ParseRules(rulesText)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: %w", rulesKey, rulesText, err)
	}
	return &Listener{Config: cfg, Keystore: ks, Principal: PrincipalOf(rules)}, nil
}

// PrincipalOf is the principal of a verified client certificate: "User:"
// and the subject DN mapped by rules.
func PrincipalOf(rules Rules) func(*x509.Certificate) (string, error) {
	return func(leaf *x509.Certificate) (string, error) {
		name, err := rules.Apply(SubjectDN(leaf))
		if err != nil {
			return "", err
		}
		return "User:" + name, nil
	}
}

// protocolVersions are the TLS versions samsa serves, by Kafka's names.
// TLSv1 and TLSv1.1 are refused: broken, and disabled by Kafka as well.
var protocolVersions = map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}

// versions reads ssl.enabled.protocols (and checks ssl.protocol, which
// names the Java SSLContext's protocol and selects nothing more here).
func versions(get Getter) (lo, hi uint16, err error) {
	p, pKey := get(KeyProtocol)
	switch strings.TrimSpace(p) {
	case "", "TLS", "TLSv1.2", "TLSv1.3":
	default:
		return 0, 0, fmt.Errorf("%s=%q: want TLSv1.3, TLSv1.2 or TLS", pKey, p)
	}
	list, key := get(KeyEnabledProtocols)
	if strings.TrimSpace(list) == "" {
		list = "TLSv1.2,TLSv1.3"
	}
	for _, name := range splitList(list) {
		v, ok := protocolVersions[name]
		if !ok {
			return 0, 0, fmt.Errorf("%s=%q: %q is not served; use TLSv1.2 and TLSv1.3", key, list, name)
		}
		if lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	return lo, hi, nil
}

// cipherSuites maps ssl.cipher.suites (IANA names, as Java uses them) to
// Go's suite ids; empty is Go's defaults. TLS 1.3 suites are accepted
// and always on (crypto/tls does not let them be chosen).
func cipherSuites(get Getter) ([]uint16, error) {
	list, key := get(KeyCipherSuites)
	names := splitList(list)
	if len(names) == 0 {
		return nil, nil
	}
	byName := make(map[string]uint16)
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		byName[s.Name] = s.ID
	}
	ids := make([]uint16, 0, len(names))
	for _, n := range names {
		id, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("%s: %q is not a cipher suite Go's TLS offers (IANA names, such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)", key, n)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func splitList(v string) []string {
	var out []string
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
