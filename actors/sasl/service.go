package sasl

import (
	"errors"
	"time"

	"github.com/xdg-go/scram"

	"github.com/samsa-io/samsa/wire"
)

// Service is the broker's SASL side: its SASL listeners, the SCRAM
// credentials, and the SCRAM servers that read them.
type Service struct {
	Listeners map[string]*Listener // by listener name
	Store     *Store
	// Reauth is connections.max.reauth.ms: how long an authenticated
	// session lasts before the client must re-authenticate (0: for
	// ever).
	Reauth time.Duration

	scramServers map[string]*scram.Server
}

// errNoCredential keeps the reason an unknown user failed out of the
// client's answer (the same as a wrong password's).
var errNoCredential = errors.New("no SCRAM credential for the user and mechanism")

// NewService is a service for listeners, reading SCRAM credentials from
// store.
func NewService(listeners map[string]*Listener, store *Store, reauth time.Duration) (*Service, error) {
	s := &Service{Listeners: listeners, Store: store, Reauth: reauth, scramServers: map[string]*scram.Server{}}
	for mech, gen := range map[string]scram.HashGeneratorFcn{ScramSHA256: scram.SHA256, ScramSHA512: scram.SHA512} {
		srv, err := gen.NewServer(s.lookup(mech))
		if err != nil {
			return nil, err
		}
		s.scramServers[mech] = srv
	}
	return s, nil
}

func (s *Service) lookup(mech string) scram.CredentialLookup {
	return func(user string) (scram.StoredCredentials, error) {
		c, ok := s.Store.Lookup(user, mech)
		if !ok {
			return scram.StoredCredentials{}, errNoCredential
		}
		return scram.StoredCredentials{KeyFactors: scram.KeyFactors{Salt: string(c.Salt), Iters: c.Iterations},
			StoredKey: c.StoredKey, ServerKey: c.ServerKey}, nil
	}
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
