package sasl

import "github.com/samsa-io/samsa/wire"

// Service is the broker's SASL side: its SASL listeners and the SCRAM
// credentials.
type Service struct {
	Listeners map[string]*Listener // by listener name
	Store     *Store

	nonce func() string // the server's part of SCRAM nonces
}

// NewService is a service for listeners, reading SCRAM credentials from
// store.
func NewService(listeners map[string]*Listener, store *Store) *Service {
	return &Service{Listeners: listeners, Store: store, nonce: serverNonce}
}

// Conn is session's exchange, made on first use; nil when the session's
// listener does not use SASL (or there is no session).
func (s *Service) Conn(session *wire.Session) *Conn {
	if s == nil || session == nil {
		return nil
	}
	if c, ok := session.AuthState().(*Conn); ok {
		return c
	}
	l := s.Listeners[session.Listener]
	if l == nil {
		return nil
	}
	c := &Conn{svc: s, listener: l}
	session.SetAuthState(c)
	return c
}

// Listener is name's SASL settings; nil when it is not a SASL listener.
func (s *Service) Listener(name string) *Listener {
	if s == nil {
		return nil
	}
	return s.Listeners[name]
}
