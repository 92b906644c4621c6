package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// benchTLSFlags are the load generators' TLS settings, for an SSL
// listener: the CA that signed the broker's certificate (its presence
// turns TLS on) and, for ssl.client.auth=required, a client certificate
// and key. All PEM.
type benchTLSFlags struct{ ca, cert, key string }

// config is the clients' tls.Config, nil when --tls-ca is not set.
func (f benchTLSFlags) config() (*tls.Config, error) {
	if f.ca == "" {
		if f.cert != "" || f.key != "" {
			return nil, fmt.Errorf("--tls-cert and --tls-key need --tls-ca")
		}
		return nil, nil
	}
	pem, err := os.ReadFile(f.ca)
	if err != nil {
		return nil, fmt.Errorf("--tls-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in it", f.ca)
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if f.cert != "" || f.key != "" {
		pair, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
