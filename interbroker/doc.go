// Package interbroker is the client one broker uses to talk to another:
// the controller's requests to brokers (LeaderAndIsr, UpdateMetadata,
// StopReplica), a broker's to the controller (AlterPartition,
// ControlledShutdown, AllocateProducerIds), and later a follower's replica
// Fetch. It is a separate top-level package because it is the broker's
// only outgoing Kafka connection: netloop serves sockets others open,
// actors hold no sockets, and kgo, a full client with its own metadata and
// retries, is more than a link to one known peer needs.
//
// Imports: wire (its constants and kerr), kmsg and franz-go's sasl
// interface; nothing else of the project (internal/lint).
//
// # Files
//
//	client.go     Config, Client, Send, Close: connections by address
//	conn.go       one connection: ordered writes, the reader, kill
//	handshake.go  dial, ApiVersions (KIP-511 fallback), version choice
//	frame.go      request frames out, response frames in, header tags
//	pin.go        Pinned, Pin: a caller-chosen version
//	channel.go    Channel: per-broker queues, retry, removal
//	errors.go     the error kinds callers tell apart with errors.Is
//	security.go   Security: TLS and SASL on every connection
//
// # Client
//
// Client keeps one TCP connection per peer address, opened on the first
// Send and again after it is lost. A new connection asks ApiVersions v3
// first (falling back to the version the peer names, or v0, when it
// answers UNSUPPORTED_VERSION, as Kafka brokers do); every request then
// goes at the highest version both sides know, or at exactly the version
// the caller chose with Pin. Request header v2 goes with flexible
// versions, v1 otherwise (kmsg.RequestFormatter). Requests to one address
// are pipelined on its connection and answered in order.
//
// Security: with Config.Security a connection is TLS from the first byte
// (SSL), authenticated with SASL right after ApiVersions (SASL_PLAINTEXT;
// SaslHandshake v1, then SaslAuthenticate with franz-go's PLAIN and SCRAM
// client mechanisms), or both (SASL_SSL), as the peer's inter-broker
// listener asks. A failed handshake or login is ErrAuthentication (and
// ErrConnection: it is retried like a lost connection). A SASL session
// with a lifetime (KIP-368) is not re-authenticated in place: at 85% of
// the lifetime the connection takes no new requests, the next Send opens
// a new one, and the old one is closed once its requests have had their
// time.
//
// Failures: a lost connection fails every request in flight on it
// (ErrConnection) and the next Send dials again; a response that takes
// longer than Config.Timeout fails its request (ErrTimeout) and closes the
// connection, since a late answer would be read as the next request's; a
// caller whose context ends gets its error and the connection stays (the
// answer is read and dropped).
//
// # Channel
//
// Channel is Kafka's ControllerChannelManager: one queue per target
// broker id, its requests sent one at a time, in order; a request that
// fails for want of a connection is retried, with back-off, until it is
// answered or the broker is removed, when it and the rest of the queue
// are answered ErrRemoved.
//
// # Threading
//
// Both types are safe for concurrent use. This is a network client, not
// an actor: it blocks on sockets, so it runs goroutines of its own. A
// Client has one goroutine per open connection reading responses (and one
// for a dial and handshake while they last); Send blocks its caller until
// the response. A Channel adds one goroutine per broker, which runs the
// callbacks: an actor's callback should only send itself a message. Close
// on either waits until all of its goroutines have ended.
package interbroker
