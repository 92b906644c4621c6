package config

import "strings"

// sslDefs are Kafka's ssl.* broker keys. samsa serves SSL listeners with
// them (netloop/tlsconf reads them, per listener: a
// listener.name.<listener>.<key> override wins over the key). Keystores
// and truststores are ListenerOnly when set dynamically, as in Kafka;
// the keys that only tune Java's TLS machinery are accepted and Ignored.
// samsa reads them at start; a dynamic value is stored and reported
// (Inert), except that of a keystore key: a listener's keystore is read
// again when AlterConfigs sets listener.name.<listener>.ssl.keystore.*
// (alone, or in a cluster through /config/brokers/<id>), as Kafka's
// dynamic keystore update does; the two ssl.allow.*.changes keys are read
// when it does.
var sslDefs = dynamicInert([]Def{
	// Per listener (Kafka's SslConfigs.RECONFIGURABLE_CONFIGS).
	{Name: "ssl.keystore.type", Type: String, Default: "JKS", ListenerOnly: true,
		Doc: "PEM (ssl.keystore.location holds the PKCS#8 private key and the certificate chain, or ssl.keystore.key and ssl.keystore.certificate.chain hold them inline) or PKCS12. A JKS-typed file that is PKCS#12 (keytool's format since Java 9) is read; a real JKS file is refused with the keytool command that converts it."},
	{Name: "ssl.keystore.location", Type: String, Nullable: true, ListenerOnly: true, Doc: "The keystore file of an SSL listener: its certificate chain and private key."},
	{Name: "ssl.keystore.password", Type: Password, Nullable: true, Sensitive: true, ListenerOnly: true, Doc: "Password of a PKCS12 keystore."},
	{Name: "ssl.key.password", Type: Password, Nullable: true, Sensitive: true, ListenerOnly: true, Doc: "Password of an encrypted PKCS#8 key in a PEM keystore (or of the key entry of a PKCS12 keystore, when it differs)."},
	{Name: "ssl.keystore.key", Type: Password, Nullable: true, Sensitive: true, ListenerOnly: true, Doc: "The private key, PKCS#8 PEM, inline (ssl.keystore.type=PEM)."},
	{Name: "ssl.keystore.certificate.chain", Type: Password, Nullable: true, Sensitive: true, ListenerOnly: true, Doc: "The certificate chain, PEM, leaf first, inline (ssl.keystore.type=PEM)."},
	{Name: "ssl.truststore.type", Type: String, Default: "JKS", ListenerOnly: true, Doc: "PEM or PKCS12 (a JKS-typed file that is PKCS#12 is read)."},
	{Name: "ssl.truststore.location", Type: String, Nullable: true, ListenerOnly: true, Doc: "The CA certificates that verify client certificates; unset, the system's roots."},
	{Name: "ssl.truststore.password", Type: Password, Nullable: true, Sensitive: true, ListenerOnly: true, Doc: "Password of a PKCS12 truststore."},
	{Name: "ssl.truststore.certificates", Type: Password, Nullable: true, Sensitive: true, ListenerOnly: true, Doc: "The trusted CA certificates, PEM, inline (ssl.truststore.type=PEM)."},
	{Name: "ssl.allow.dn.changes", Type: Boolean, Default: "false", ListenerOnly: true,
		Doc: "Whether a keystore reload (AlterConfigs) may serve a certificate with another subject DN; false refuses it with INVALID_CONFIG."},
	{Name: "ssl.allow.san.changes", Type: Boolean, Default: "false", ListenerOnly: true,
		Doc: "Whether a keystore reload (AlterConfigs) may serve a certificate with other subject alternative names; false refuses it with INVALID_CONFIG."},

	// Per broker.
	{Name: "ssl.protocol", Type: String, Default: "TLSv1.3", PerBroker: true, Check: OneOf("TLSv1.3", "TLSv1.2", "TLS"),
		Doc: "Java's SSLContext protocol; the versions served are ssl.enabled.protocols."},
	{Name: "ssl.enabled.protocols", Type: List, Default: "TLSv1.2,TLSv1.3", PerBroker: true, Check: ListOf(false, "TLSv1.2", "TLSv1.3"),
		Doc: "TLS versions an SSL listener accepts (TLSv1 and TLSv1.1 are not served)."},
	{Name: "ssl.cipher.suites", Type: List, Nullable: true, PerBroker: true,
		Doc: "TLS 1.2 cipher suites, by their IANA names (as Java names them); unset, Go's secure defaults. TLS 1.3 suites are always on."},
	{Name: "ssl.client.auth", Type: String, Default: "none", Check: OneOf("required", "requested", "none"), PerBroker: true,
		Doc: "Whether an SSL listener asks clients for a certificate (requested) or refuses clients without a trusted one (required); the principal of a client certificate is its subject, mapped by ssl.principal.mapping.rules."},
	{Name: "ssl.endpoint.identification.algorithm", Type: String, Default: "https", PerBroker: true,
		Doc: "https: a broker dialling another on a TLS inter-broker listener checks that the peer's certificate names the host it dialled; empty: only that it chains to the truststore. Clients check the broker's host name by their own setting; the broker checks no client's."},
	{Name: "ssl.provider", Type: String, Nullable: true, PerBroker: true, Ignored: true, Doc: javaTLSDoc},
	{Name: "ssl.keymanager.algorithm", Type: String, Default: "SunX509", PerBroker: true, Ignored: true, Doc: javaTLSDoc},
	{Name: "ssl.trustmanager.algorithm", Type: String, Default: "PKIX", PerBroker: true, Ignored: true, Doc: javaTLSDoc},
	{Name: "ssl.secure.random.implementation", Type: String, Nullable: true, PerBroker: true, Ignored: true, Doc: javaTLSDoc},
	{Name: "ssl.engine.factory.class", Type: Class, Nullable: true, PerBroker: true, Ignored: true, Doc: javaTLSDoc},
})

// sslPrincipalDef is read-only, as in Kafka; a listener override
// (listener.name.<listener>.ssl.principal.mapping.rules) is honoured.
var sslPrincipalDef = Def{Name: "ssl.principal.mapping.rules", Type: String, Default: "DEFAULT",
	Doc: "Maps a client certificate's subject DN (RFC 2253, CN=alice,OU=eng,O=acme) to its principal's name: a comma list of RULE:pattern/replacement/[LU] (the first whose pattern matches the whole DN applies) and DEFAULT (the DN itself)."}

const javaTLSDoc = "Accepted; it tunes Java's TLS implementation and has no effect on samsa's."

// dynamicInert marks defs Dynamic (ListenerOnly ones PerBroker too: a
// listener is one broker's) and Inert, except the keystore's: a listener
// override of those set through AlterConfigs has the listener read its
// keystore again (actors/metadata's KeystoresChanged).
func dynamicInert(defs []Def) []Def {
	for i := range defs {
		keystore := strings.HasPrefix(defs[i].Name, "ssl.keystore.") || defs[i].Name == "ssl.key.password" ||
			strings.HasPrefix(defs[i].Name, "ssl.allow.")
		defs[i].Dynamic, defs[i].Inert = true, !keystore
		defs[i].PerBroker = defs[i].PerBroker || defs[i].ListenerOnly
	}
	return append(defs, sslPrincipalDef)
}
