// Package tls holds the end-to-end tests of SSL listeners: a broker
// wired as `samsa serve` wires it (testkit's in-process broker), its
// certificates made by a test CA at test time (netloop/tlsconf/tlstest),
// and real clients over TLS: franz-go producing and consuming (fetches
// large enough that record data leaves by the copying path), mutual TLS
// with the client certificate's mapped principal, plaintext clients and
// clients without a certificate refused, and kcat (librdkafka) with
// security.protocol=SSL.
package tls
