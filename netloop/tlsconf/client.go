package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
)

// Client is the TLS configuration a broker dials other brokers with on a
// TLS inter-broker listener, from the same ssl.* settings that listener
// is served with, as Kafka's brokers do: ks (the listener's keystore, so
// a reload reaches the client side too) is the client certificate, the
// truststore verifies the peer (the system's roots when none is set), and
// ssl.endpoint.identification.algorithm says whether the peer's
// certificate must name the host dialled ("https", Kafka's default, which
// the broker's Getter reports when the key is unset) or only chain to a
// trusted root ("").
func Client(get Getter, ks *Keystore) (*tls.Config, error) {
	roots, err := loadTruststore(get)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{RootCAs: roots}
	if ks != nil {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return ks.cert.Load(), nil }
	}
	if cfg.MinVersion, cfg.MaxVersion, err = versions(get); err != nil {
		return nil, err
	}
	if cfg.CipherSuites, err = cipherSuites(get); err != nil {
		return nil, err
	}
	algo, algoKey := get(KeyEndpointIdentAlgo)
	switch strings.ToLower(strings.TrimSpace(algo)) {
	case "https":
	case "":
		// The chain is still verified, against the truststore, just
		// not the name: crypto/tls offers that only by verifying
		// ourselves.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = verifyChainOnly(roots)
	default:
		return nil, fmt.Errorf("%s=%q: want https or empty", algoKey, algo)
	}
	return cfg, nil
}

// verifyChainOnly verifies the peer's certificate chain against roots (the
// system's when nil) without checking the host name.
func verifyChainOnly(roots *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("the peer presented no certificate")
		}
		opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(opts)
		return err
	}
}
