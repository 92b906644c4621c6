package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// saslPasswordEnv supplies --sasl-password when the flag is not given, so
// that a password need not appear in the process list or shell history.
const saslPasswordEnv = "SAMSA_SASL_PASSWORD"

// securityOptions are the TLS and SASL flags every client verb shares
// (produce, consume, cluster, topic, group), and kcat's -X properties
// for the same settings.
type securityOptions struct {
	tls        bool
	caFile     string
	certFile   string
	keyFile    string
	insecure   bool
	mechanism  string
	user       string
	password   string
	properties []string // -X key=value
	saslAsked  bool     // -X security.protocol=SASL_*: SASL without a user is an error, not a plain connection
}

func (o *securityOptions) addFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.tls, "tls", false, "connect with TLS (implied by the other --tls-* flags)")
	fs.StringVar(&o.caFile, "tls-ca", "", "PEM file of the CA certificates to trust (default: the system's)")
	fs.StringVar(&o.certFile, "tls-cert", "", "PEM file of the client certificate (with --tls-key)")
	fs.StringVar(&o.keyFile, "tls-key", "", "PEM file of the client certificate's private key")
	fs.BoolVar(&o.insecure, "tls-insecure-skip-verify", false, "do not verify the brokers' certificates (testing only)")
	fs.StringVar(&o.mechanism, "sasl-mechanism", "", "SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	fs.StringVar(&o.user, "sasl-user", "", "SASL user name")
	fs.StringVar(&o.password, "sasl-password", "", "SASL password (env "+saslPasswordEnv+")")
	fs.StringArrayVarP(&o.properties, "property", "X", nil,
		"kcat-style client property key=value[,key=value]: security.protocol, sasl.mechanisms, sasl.username, sasl.password, "+
			"ssl.ca.location, ssl.certificate.location, ssl.key.location, enable.ssl.certificate.verification")
}

// kgoOpts are the franz-go options the flags ask for: none for a plain
// connection.
func (o *securityOptions) kgoOpts() ([]kgo.Opt, error) {
	s := *o
	if err := s.applyProperties(); err != nil {
		return nil, err
	}
	if s.password == "" {
		s.password = os.Getenv(saslPasswordEnv)
	}
	var opts []kgo.Opt
	if s.tls || s.caFile != "" || s.certFile != "" || s.keyFile != "" || s.insecure {
		cfg, err := s.tlsConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(cfg)) // franz-go verifies each broker under its own host name
	}
	if s.mechanism != "" || s.user != "" || s.saslAsked {
		mech, err := s.saslMechanism()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(mech))
	}
	return opts, nil
}

func (o *securityOptions) tlsConfig() (*tls.Config, error) {
	if (o.certFile == "") != (o.keyFile == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	cfg, err := tlsClientConfig(o.caFile, o.certFile, o.keyFile)
	if err != nil {
		return nil, err
	}
	cfg.InsecureSkipVerify = o.insecure //nolint:gosec // only when asked for, by --tls-insecure-skip-verify
	return cfg, nil
}

// tlsClientConfig is a client's TLS configuration from PEM files: the CA
// certificates to trust (none: the system's) and a client certificate
// and key (none: no client certificate).
func tlsClientConfig(caFile, certFile, keyFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in it", caFile)
		}
		cfg.RootCAs = pool
	}
	if certFile != "" || keyFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

func (o *securityOptions) saslMechanism() (sasl.Mechanism, error) {
	if o.user == "" {
		return nil, errors.New("SASL needs a user: --sasl-user (or -X sasl.username)")
	}
	if o.password == "" {
		return nil, fmt.Errorf("SASL user %s has no password: give --sasl-password or set %s", o.user, saslPasswordEnv)
	}
	switch strings.ToUpper(o.mechanism) {
	case "PLAIN", "":
		return plain.Auth{User: o.user, Pass: o.password}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: o.user, Pass: o.password}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: o.user, Pass: o.password}.AsSha512Mechanism(), nil
	default:
		return nil, fmt.Errorf("--sasl-mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", o.mechanism)
	}
}

// applyProperties folds the -X properties into the flags, as kcat (and
// librdkafka) name them. A property overrides its flag.
func (o *securityOptions) applyProperties() error {
	for _, list := range o.properties {
		for _, kv := range strings.Split(list, ",") {
			key, value, ok := strings.Cut(strings.TrimSpace(kv), "=")
			if !ok || key == "" {
				return fmt.Errorf("-X %q: want key=value", kv)
			}
			if err := o.applyProperty(key, value); err != nil {
				return fmt.Errorf("-X %s: %w", key, err)
			}
		}
	}
	return nil
}

func (o *securityOptions) applyProperty(key, value string) error {
	plain := map[string]*string{
		"sasl.mechanisms": &o.mechanism, "sasl.mechanism": &o.mechanism, "sasl.username": &o.user, "sasl.password": &o.password,
		"ssl.ca.location": &o.caFile, "ssl.certificate.location": &o.certFile, "ssl.key.location": &o.keyFile,
	}
	if field, ok := plain[key]; ok {
		*field = value
		return nil
	}
	switch key {
	case "security.protocol":
		protocol := strings.ToUpper(value)
		switch protocol {
		case "PLAINTEXT", "SASL_PLAINTEXT":
			o.tls = false
		case "SSL", "SASL_SSL":
			o.tls = true
		default:
			return fmt.Errorf("%q: want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", value)
		}
		o.saslAsked = strings.HasPrefix(protocol, "SASL_")
	case "enable.ssl.certificate.verification":
		switch strings.ToLower(value) {
		case "false":
			o.insecure = true
		case "true":
			o.insecure = false
		default:
			return fmt.Errorf("%q: want true or false", value)
		}
	default:
		return errors.New("not a property samsa knows (security.protocol, sasl.mechanisms, sasl.username, sasl.password, " +
			"ssl.ca.location, ssl.certificate.location, ssl.key.location, enable.ssl.certificate.verification)")
	}
	return nil
}
