package netloop

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
)

// TLSListener makes a listener a TLS one (Kafka's SSL, and the transport
// of SASL_SSL). See "TLS listeners" in the package documentation for how
// its connections are served.
type TLSListener struct {
	// Config is the server side of the handshake: certificates (or
	// GetCertificate, which makes reloading a keystore cheap), ClientAuth
	// and ClientCAs, versions and cipher suites. It must not be changed
	// once the server has started.
	Config *tls.Config
	// Principal maps the verified client certificate (the leaf of a
	// chain that ClientCAs verified) to the connection's principal,
	// "User:CN=alice,OU=eng" for one; it runs once per connection, after
	// the handshake and before the first request is handed on. An error
	// closes the connection with a log line (Kafka's "no rule applies").
	// Nil, or a connection without a verified certificate, leaves the
	// principal anonymous (wire.AnonymousPrincipal).
	Principal func(leaf *x509.Certificate) (string, error)
}

// check reports an unusable TLSListener.
func (l *TLSListener) check(listener string) error {
	c := l.Config
	if c == nil {
		return fmt.Errorf("%w: TLS listener %s has no tls.Config", ErrConfig, listener)
	}
	if len(c.Certificates) == 0 && c.GetCertificate == nil && c.GetConfigForClient == nil {
		return fmt.Errorf("%w: TLS listener %s has no certificate", ErrConfig, listener)
	}
	return nil
}

// tlsListener is the TLS configuration of the i-th listener, nil for a
// plaintext one.
func (s *Server) tlsListener(i int) *TLSListener {
	if i < len(s.cfg.TLS) {
		return s.cfg.TLS[i]
	}
	return nil
}
