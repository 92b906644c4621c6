package wiring

import (
	"fmt"
	"slices"
	"strings"

	fsasl "github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/sasl"
	"github.com/samsa-io/samsa/interbroker"
	"github.com/samsa-io/samsa/netloop/tlsconf"
)

// interBrokerSecurity is how this broker dials the others' inter-broker
// listener, read as Kafka's brokers read it from the same listener's
// settings (every broker of a cluster names the same listener):
//
//   - SSL, SASL_SSL: TLS with the listener's ssl.* keys
//     (listener.name.<l>.ssl.* first): its keystore is the client
//     certificate (the same Keystore the listener serves, so a reload
//     reaches both), its truststore verifies the peer, and
//     ssl.endpoint.identification.algorithm says whether the peer's
//     certificate must name the host (https, the default).
//   - SASL_PLAINTEXT, SASL_SSL: sasl.mechanism.inter.broker.protocol,
//     which the listener must enable, logging in with the username and
//     password of the listener's JAAS entry for that mechanism
//     (listener.name.<l>.<mechanism>.sasl.jaas.config, else
//     sasl.jaas.config), as Kafka's docs configure it.
//
// It runs before anything opens: a setting that cannot work stops the
// start with an error naming the key.
func interBrokerSecurity(cfg *config.Broker, stores keystores) (interbroker.Security, error) {
	var sec interbroker.Security
	name := cfg.Cluster.InterBrokerListener
	i := slices.IndexFunc(cfg.Listeners, func(l config.Listener) bool { return l.Name == name })
	if i < 0 {
		return sec, fmt.Errorf("%w: the inter-broker listener %s is not in listeners", config.ErrInvalid, name)
	}
	proto := cfg.Listeners[i].Protocol
	if config.TLSProtocol(proto) {
		get := func(key string) (string, string) { return cfg.ListenerValue(name, key) }
		tc, err := tlsconf.Client(get, stores[strings.ToLower(name)])
		if err != nil {
			return sec, fmt.Errorf("%w: inter-broker listener %s: %w", config.ErrInvalid, name, err)
		}
		sec.TLS = tc
	}
	if strings.HasPrefix(proto, "SASL_") {
		mech, err := interBrokerMechanism(cfg, name)
		if err != nil {
			return sec, fmt.Errorf("%w: inter-broker listener %s: %w", config.ErrInvalid, name, err)
		}
		sec.SASL = mech
	}
	return sec, nil
}

// interBrokerMechanism is the SASL client side of the inter-broker
// listener: its mechanism and the credentials of its JAAS entry.
func interBrokerMechanism(cfg *config.Broker, listener string) (fsasl.Mechanism, error) {
	get := func(key string) string { return cfg.Static[key] }
	m := cfg.Value(config.KeyInterBrokerSASLMechanism)
	l, err := sasl.NewListener(listener, get)
	if err != nil {
		return nil, err
	}
	if !l.Enabled(m) {
		return nil, fmt.Errorf("%s=%s is not enabled on the listener (it enables %s); add it to %s",
			config.KeyInterBrokerSASLMechanism, m, strings.Join(l.Mechanisms, ","), sasl.ListenerKey(listener, sasl.KeyMechanisms))
	}
	key := sasl.ListenerKey(listener, strings.ToLower(m)+"."+sasl.KeyJAAS)
	text := get(key)
	if text == "" {
		key, text = sasl.KeyJAAS, get(sasl.KeyJAAS)
	}
	if text == "" {
		return nil, fmt.Errorf("no credentials to log in to the other brokers with: set %s to a login module entry with username=\"...\" password=\"...\"", sasl.ListenerKey(listener, strings.ToLower(m)+"."+sasl.KeyJAAS))
	}
	j, err := sasl.ParseJAAS(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if m == sasl.OAuthBearer {
		return nil, fmt.Errorf("%s=%s: samsa brokers log in to each other with PLAIN or SCRAM", config.KeyInterBrokerSASLMechanism, m)
	}
	user, pass := j.Options["username"], j.Options["password"]
	if user == "" || pass == "" {
		return nil, fmt.Errorf("%s has no username and password options: the broker logs in to the other brokers with them (%s)", key, m)
	}
	switch m {
	case sasl.Plain:
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case sasl.ScramSHA256:
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
	default:
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
	}
}
