// Package tlsconf turns Kafka's ssl.* broker settings into what netloop
// needs to serve a TLS listener: a *tls.Config (keystore, truststore,
// client authentication, protocol versions, cipher suites) and the
// mapping from a client certificate to a principal
// (ssl.principal.mapping.rules over the subject's RFC 2253 name).
//
// It reads settings through a Getter, so it knows Kafka's key names (and
// names them in every error: "ssl.keystore.location=/etc/k.pem: no such
// file") but nothing of how the broker layers its configuration, nor of
// listener prefixes beyond the key names the Getter reports.
//
// Keystores: PEM (KIP-651: a file with the private key, PKCS#8, and the
// certificate chain, or the key and chain inline in
// ssl.keystore.key and ssl.keystore.certificate.chain; an encrypted
// PKCS#8 key is decrypted with ssl.key.password) and PKCS12
// (ssl.keystore.password). JKS, Kafka's default type, is Java's own
// format: a file of that type that is really PKCS#12 (what keytool has
// written since Java 9) is read as such, a real JKS file is refused with
// the keytool command that converts it. Truststores: PEM (file or
// ssl.truststore.certificates) and PKCS12.
//
// The same settings make the client side of a TLS inter-broker link
// (Client, client.go): the listener's keystore as the client certificate,
// its truststore for the peer, ssl.endpoint.identification.algorithm for
// the peer's host name.
//
// Reloading: the certificate is served through tls.Config.GetCertificate
// from a Keystore, whose Reload reads the keystore again; handshakes in
// progress keep the certificate they started with. CheckRotation refuses
// a new certificate of another subject or other host names unless
// ssl.allow.dn.changes / ssl.allow.san.changes allow it, as Kafka does.
//
// Threading: a Keystore is safe for concurrent use; everything else is
// built once and read only.
package tlsconf
