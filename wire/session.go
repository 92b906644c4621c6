package wire

import "sync/atomic"

// AnonymousPrincipal is the principal of a client that has not
// authenticated: every client of a PLAINTEXT listener, as in Kafka.
const AnonymousPrincipal = "User:ANONYMOUS"

// Session is what one connection has established about its client: the
// listener it came in on and, once it has authenticated (SASL, a TLS
// client certificate), its principal. netloop makes one per connection
// and hands the same Session with every request of that connection; the
// broker's SASL handlers set the principal, its authorizer reads it.
// Safe for concurrent use.
type Session struct {
	// Listener is the name of the listener the connection came in on
	// ("PLAINTEXT", "SASL_SSL", "INTERNAL", ...), "" when the server's
	// listeners are unnamed.
	Listener  string
	principal atomic.Pointer[string]
	// auth is the broker's authentication progress on the connection
	// (session_auth.go).
	auth atomic.Value
}

// Principal is the connection's authenticated principal ("User:alice"),
// AnonymousPrincipal until one is set. A nil Session is anonymous.
func (s *Session) Principal() string {
	if s == nil {
		return AnonymousPrincipal
	}
	if p := s.principal.Load(); p != nil {
		return *p
	}
	return AnonymousPrincipal
}

// SetPrincipal records the principal the client authenticated as.
func (s *Session) SetPrincipal(principal string) { s.principal.Store(&principal) }
