package config

import "strings"

// SASL keys samsa acts on (actors/sasl reads them): read at start, kept
// dynamic as in Kafka so DescribeConfigs reports them as Kafka does.
// Kafka's default mechanism is GSSAPI, which samsa does not implement; a
// SASL listener therefore needs sasl.enabled.mechanisms set, and says so
// at start.
// KeyInterBrokerSASLMechanism is the mechanism of a SASL inter-broker
// listener.
const KeyInterBrokerSASLMechanism = "sasl.mechanism.inter.broker.protocol"

var saslDefs = []Def{
	{Name: "sasl.enabled.mechanisms", Type: List, Default: "GSSAPI", Dynamic: true, Inert: true, PerBroker: true,
		Doc: "The SASL mechanisms a SASL listener enables: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER (with a JWKS endpoint) are implemented. Per listener: listener.name.<listener>.sasl.enabled.mechanisms."},
	{Name: "sasl.jaas.config", Type: Password, Nullable: true, Sensitive: true, Dynamic: true, Inert: true, PerBroker: true,
		Doc: "JAAS login module entry; PLAIN reads its users from a PlainLoginModule entry's user_<name>=\"<password>\" options. Per listener and mechanism: listener.name.<listener>.<mechanism>.sasl.jaas.config."},
	{Name: KeyInterBrokerSASLMechanism, Type: String, Default: "GSSAPI", Dynamic: true, Inert: true, PerBroker: true,
		Doc: "Cluster mode: the SASL mechanism brokers log in to each other's SASL inter-broker listener with (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512), with the username and password of that listener's JAAS entry for it. Read at start."},
	{Name: "connections.max.reauth.ms", Type: Long, Default: "0", Check: AtLeast(0), Dynamic: true, Inert: true, PerBroker: true,
		Doc: "How long a SASL session lasts before the client must re-authenticate (KIP-368); 0: for ever."},
	{Name: "sasl.server.callback.handler.class", Type: String, Nullable: true, Dynamic: true, Inert: true, PerBroker: true,
		Doc: "Per listener and mechanism (listener.name.<listener>.oauthbearer.sasl.server.callback.handler.class): any class, Kafka's OAuthBearerValidatorCallbackHandler for one, means samsa's own OAUTHBEARER validator (JWKS)."},
	{Name: "sasl.oauthbearer.jwks.endpoint.url", Type: String, Nullable: true, Dynamic: true, Inert: true, PerBroker: true,
		Doc: "OAUTHBEARER: the JWKS endpoint (https, http or file URL) whose keys sign the tokens; required to enable OAUTHBEARER. Read at start."},
	{Name: "sasl.oauthbearer.jwks.endpoint.refresh.ms", Type: Long, Default: "3600000", Check: AtLeast(0), Dynamic: true, Inert: true, PerBroker: true,
		Doc: "OAUTHBEARER: how often the JWKS is fetched again (also, at most every 10 s, when a token names a key it lacks)."},
	{Name: "sasl.oauthbearer.expected.audience", Type: List, Nullable: true, Dynamic: true, Inert: true, PerBroker: true,
		Doc: "OAUTHBEARER: the audiences a token's aud claim must name one of; unset: not checked."},
	{Name: "sasl.oauthbearer.expected.issuer", Type: String, Nullable: true, Dynamic: true, Inert: true, PerBroker: true,
		Doc: "OAUTHBEARER: the iss a token must have; unset: not checked."},
	{Name: "sasl.oauthbearer.sub.claim.name", Type: String, Default: "sub", Dynamic: true, Inert: true, PerBroker: true,
		Doc: "OAUTHBEARER: the claim that names the principal (User:<value>)."},
	{Name: "sasl.oauthbearer.clock.skew.seconds", Type: Int, Default: "30", Check: AtLeast(0), Dynamic: true, Inert: true, PerBroker: true,
		Doc: "OAUTHBEARER: the clock difference tolerated on exp, nbf and iat."},
}

// listenerSASLDef validates Kafka's listener-prefixed SASL keys as their
// base key when a file or flag sets them (actors/sasl reads them from
// Static): the per-listener keys
// listener.name.<listener>.sasl.enabled.mechanisms,
// listener.name.<listener>.<mechanism>.sasl.jaas.config and
// listener.name.<listener>.connections.max.reauth.ms.
func listenerSASLDef(name string) (*Def, bool) {
	rest, ok := strings.CutPrefix(name, "listener.name.")
	if !ok {
		return nil, false
	}
	_, key, ok := strings.Cut(rest, ".")
	if !ok {
		return nil, false
	}
	switch {
	case key == "sasl.enabled.mechanisms", key == "connections.max.reauth.ms":
	case strings.HasPrefix(key, "sasl.oauthbearer."):
	case strings.HasSuffix(key, ".sasl.jaas.config") && !strings.Contains(strings.TrimSuffix(key, ".sasl.jaas.config"), "."):
		key = "sasl.jaas.config"
	case strings.HasSuffix(key, ".sasl.server.callback.handler.class") && !strings.Contains(strings.TrimSuffix(key, ".sasl.server.callback.handler.class"), "."):
		key = "sasl.server.callback.handler.class"
	default:
		return nil, false
	}
	d, ok := brokerIndex[key]
	return d, ok
}

// saslPerListener reports whether samsa reads key per listener
// (listener.name.<listener>.<key>, actors/sasl).
func saslPerListener(key string) bool {
	return key == "sasl.enabled.mechanisms" || key == "sasl.jaas.config" || key == "connections.max.reauth.ms" ||
		key == "sasl.server.callback.handler.class" || strings.HasPrefix(key, "sasl.oauthbearer.")
}
