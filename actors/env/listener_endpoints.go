package env

import (
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/wire"
)

// Clients are told the endpoints of the listener their request came in
// on, as Kafka does: a client of a SASL listener must be sent back to
// SASL listeners, one of an internal listener to internal addresses.

// ClientEndpoint is this broker's endpoint for the client of session:
// the address of its listener (ListenerEndpoints), or Endpoint when the
// listener is unknown (no session: tests, in-process calls).
func (e *Env) ClientEndpoint(session *wire.Session) (metadata.Endpoint, bool) {
	if m := e.ListenerEndpoints.Load(); m != nil && session != nil {
		if ep, ok := (*m)[session.Listener]; ok {
			return ep, true
		}
	}
	if ep := e.Endpoint.Load(); ep != nil {
		return *ep, true
	}
	return metadata.Endpoint{}, false
}

// ClientListenerOf is the listener whose endpoints the client of session
// is told in cluster mode: its own, else ClientListener.
func (e *Env) ClientListenerOf(session *wire.Session) string {
	if session != nil && session.Listener != "" {
		return session.Listener
	}
	return e.ClientListener
}
