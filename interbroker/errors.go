package interbroker

import "errors"

// The errors Send and the Channel's callbacks return wrap one of these, so
// a caller can tell what to do with errors.Is: a connection failure or a
// timeout is worth retrying on a new connection (the Channel does), an
// unsupported API or version is not.
var (
	// ErrClosed: the Client or Channel was closed.
	ErrClosed = errors.New("interbroker: closed")
	// ErrConnection: the dial, the ApiVersions handshake or the
	// connection failed; the request may or may not have reached the
	// peer. The next Send to the address dials again.
	ErrConnection = errors.New("interbroker: connection failed")
	// ErrTimeout: no response within Config.Timeout. The connection is
	// closed, because a response that comes later would arrive out of
	// order for everything sent after it.
	ErrTimeout = errors.New("interbroker: request timed out")
	// ErrUnsupported: the peer does not serve the request's API, or no
	// version is acceptable to both sides (or the pinned version is not).
	ErrUnsupported = errors.New("interbroker: peer does not support the request")
	// ErrMalformedResponse: the response could not be decoded at the
	// version it was asked for.
	ErrMalformedResponse = errors.New("interbroker: malformed response")
	// ErrAuthentication: the TLS handshake or the SASL exchange failed
	// (wrapped in ErrConnection too: the next Send tries again, as
	// Kafka's brokers do, since a peer's credentials may be fixed
	// without a restart).
	ErrAuthentication = errors.New("interbroker: authentication failed")
	// ErrRemoved: the Channel's broker was removed (or never added)
	// before the request was answered.
	ErrRemoved = errors.New("interbroker: broker removed")
)

// errSessionRenewed closes a connection whose SASL session came due, once
// its last requests have had their time.
var errSessionRenewed = errors.New("SASL session due for renewal; replaced by a new connection")
