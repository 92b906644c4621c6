package main

import (
	"crypto/tls"
	"fmt"
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
	return tlsClientConfig(f.ca, f.cert, f.key)
}
