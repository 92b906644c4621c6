package env

import "github.com/samsa-io/samsa/wire"

// ClientListenerOf is the listener whose endpoints the client of session
// is told in cluster mode: its own, as Kafka does (a client of a SASL
// listener must be sent back to SASL listeners), else ClientListener.
func (e *Env) ClientListenerOf(session *wire.Session) string {
	if session != nil && session.Listener != "" {
		return session.Listener
	}
	return e.ClientListener
}
