// Package sasl is the broker's side of SASL authentication (Kafka's
// SaslHandshake and SaslAuthenticate): which listeners ask for it and
// with which mechanisms, the PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER
// (JWTs checked against a JWKS endpoint) exchanges, the JAAS text users
// are configured with, and the SCRAM credential store.
//
// It holds no actor. A connection's exchange (Conn) lives in the
// connection's wire.Session and is driven by the api handlers on the
// connection's gnet loop, one request at a time (a client never pipelines
// during authentication). The credential store (Store) is shared by every
// loop and guarded by a lock; it persists SCRAM credentials through a
// Persister: a file in the data directory on a single node, ZooKeeper's
// /config/users in a cluster (Kafka's layout, so Kafka's tools and
// brokers read them).
//
// Secrets are compared in constant time (crypto/subtle, hmac.Equal) and
// never logged.
//
// Formats:
//
//   - PLAIN (RFC 4616): authzid NUL authcid NUL password, UTF-8.
//   - SCRAM (RFC 5802, 7677): client-first, server-first, client-final,
//     server-final (scram.go; Kafka accepts a client-final nonce that
//     merely ends with the server's, and so does samsa).
//   - A stored SCRAM credential, as Kafka writes it in ZooKeeper:
//     "salt=<base64>,stored_key=<base64>,server_key=<base64>,iterations=<n>".
package sasl
