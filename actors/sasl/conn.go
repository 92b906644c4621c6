package sasl

import (
	"fmt"
	"sync"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
)

// Conn is one connection's SASL exchange: the mechanism its handshake
// chose, the SCRAM conversation in progress, and once it succeeds the
// user and until when the session is good. Handlers drive it one request
// at a time; the mutex only keeps a misbehaving pipelining client from
// racing it.
type Conn struct {
	svc      *Service
	listener *Listener

	mu            sync.Mutex
	mech          string // chosen by the last handshake; "" before one
	scram         *scramConv
	oauthErr      string // an OAUTHBEARER token refused: the client's \x01 ends the exchange
	authenticated bool
	user          string
	expires       time.Time // zero: never (connections.max.reauth.ms unset)
}

// Failure is an exchange that failed: Code and Message go to the client
// (Kafka's error codes and wording), Reason to the broker's log.
type Failure struct {
	Code    int16
	Message string
	Reason  string
}

func (f *Failure) Error() string { return f.Message + ": " + f.Reason }

// Kafka's error codes the exchange answers.
var (
	codeUnsupportedMechanism = kerr.UnsupportedSaslMechanism.Int16()
	codeIllegalState         = kerr.IllegalSaslState.Int16()
	codeAuthFailed           = kerr.SaslAuthenticationFailed.Int16()
)

// Handshake picks the mechanism for the exchange that follows. A
// mechanism not enabled on the listener is UNSUPPORTED_SASL_MECHANISM
// (the caller answers with the enabled ones and closes). A handshake in
// the middle of an exchange is ILLEGAL_SASL_STATE; after a completed one
// it starts a re-authentication (KIP-368).
func (c *Conn) Handshake(mech string) *Failure {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.listener.Enabled(mech) {
		return &Failure{Code: codeUnsupportedMechanism, Message: fmt.Sprintf("Unsupported SASL mechanism %s", mech),
			Reason: fmt.Sprintf("client asked for %s; listener %s enables %v", mech, c.listener.Name, c.listener.Mechanisms)}
	}
	if c.mech != "" && c.scram != nil {
		return &Failure{Code: codeIllegalState, Message: "Unexpected handshake request with client mechanism " + mech,
			Reason: "SaslHandshake in the middle of a SCRAM exchange"}
	}
	c.mech, c.scram, c.oauthErr = mech, nil, ""
	return nil
}

// Mechanism is the mechanism of the current exchange ("" before a
// handshake).
func (c *Conn) Mechanism() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mech
}

// Step is one SaslAuthenticate: the client's token in, the broker's
// token out. done is true once the client is authenticated; user is then
// its name. A failure ends the exchange; the caller answers it and
// closes the connection.
func (c *Conn) Step(token []byte, now time.Time) (out []byte, done bool, user string, fail *Failure) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.mech {
	case "":
		return nil, false, "", &Failure{Code: codeIllegalState, Message: "Unexpected SaslAuthenticate request before SaslHandshake",
			Reason: "SaslAuthenticate without a SaslHandshake first"}
	case Plain:
		m, err := ParsePlain(token)
		if err != nil {
			return nil, false, "", &Failure{Code: codeAuthFailed, Message: "Authentication failed: " + err.Error(), Reason: err.Error()}
		}
		if !plainCheck(c.listener.PlainUsers, m.User, m.Password) {
			return nil, false, m.User, &Failure{Code: codeAuthFailed, Message: "Authentication failed: Invalid username or password", Reason: "invalid user name or password"}
		}
		if f := c.succeed(m.User, now); f != nil {
			return nil, false, m.User, f
		}
		return nil, true, m.User, nil
	case OAuthBearer:
		return c.oauthStep(token, now)
	}
	return c.scramStep(token, now)
}

func (c *Conn) scramStep(token []byte, now time.Time) ([]byte, bool, string, *Failure) {
	if c.scram == nil {
		mech, store := c.mech, c.svc.Store
		c.scram = &scramConv{mech: mech, nonce: c.svc.nonce,
			lookup: func(user string) (Credential, bool) { return store.Lookup(user, mech) }}
	}
	out, done, err := c.scram.Step(string(token))
	user := c.scram.user
	if err != nil {
		f := c.scramFailure(err)
		c.mech, c.scram = "", nil
		return nil, false, user, f
	}
	if !done {
		return []byte(out), false, user, nil
	}
	c.scram = nil
	if f := c.succeed(user, now); f != nil {
		return nil, false, user, f
	}
	return []byte(out), true, user, nil
}

// oauthStep checks an OAUTHBEARER token. A refused one is answered, as
// in Kafka (RFC 7628 section 3.2.2), with the error status as the
// server's challenge; the client's \x01 reply then fails the exchange.
func (c *Conn) oauthStep(token []byte, now time.Time) ([]byte, bool, string, *Failure) {
	if c.oauthErr != "" {
		reason := c.oauthErr
		c.mech, c.oauthErr = "", ""
		return nil, false, "", &Failure{Code: codeAuthFailed, Message: "Authentication failed: invalid_token", Reason: reason}
	}
	tok, authzid, err := ParseOAuthBearer(token)
	if err != nil {
		c.mech = ""
		return nil, false, "", &Failure{Code: codeAuthFailed, Message: "Authentication failed: " + err.Error(), Reason: err.Error()}
	}
	user, expires, err := c.listener.OAuth.Validate(tok, now)
	if err == nil && authzid != "" && authzid != user {
		err = fmt.Errorf("authorization id %q is not the token's principal %q", authzid, user)
	}
	if err != nil {
		c.oauthErr = err.Error()
		return []byte(`{"status":"invalid_token"}`), false, "", nil
	}
	if f := c.succeed(user, now); f != nil {
		return nil, false, user, f
	}
	if c.listener.Reauth > 0 && expires.Before(c.expires) {
		c.expires = expires // the session ends with the token (KIP-368)
	}
	return nil, true, user, nil
}

func (c *Conn) scramFailure(err error) *Failure {
	return &Failure{Code: codeAuthFailed,
		Message: fmt.Sprintf("Authentication failed during authentication due to invalid credentials with SASL mechanism %s", c.mech),
		Reason:  err.Error()}
}

// succeed records the authenticated user and when its session ends. A
// re-authentication must be as the same user: Kafka refuses a principal
// change on a connection.
func (c *Conn) succeed(user string, now time.Time) *Failure {
	c.mech = ""
	if c.authenticated && user != c.user {
		return &Failure{Code: codeAuthFailed, Message: "Cannot change principals during re-authentication",
			Reason: fmt.Sprintf("re-authentication as %q on a connection of %q", user, c.user)}
	}
	c.authenticated, c.user = true, user
	if c.listener.Reauth > 0 {
		c.expires = now.Add(c.listener.Reauth)
	}
	return nil
}

// Authenticated reports whether the connection has authenticated and its
// session has not expired at now.
func (c *Conn) Authenticated(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.authenticated && (c.expires.IsZero() || now.Before(c.expires))
}

// SessionLifetime is how long the session just established lasts (0:
// for ever), for SaslAuthenticate v1+'s session_lifetime_ms.
func (c *Conn) SessionLifetime(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.expires.IsZero() {
		return 0
	}
	return c.expires.Sub(now)
}

// Listener is the SASL listener the connection came in on.
func (c *Conn) Listener() *Listener { return c.listener }

// WasAuthenticated reports whether the connection ever authenticated
// (its session may since have expired).
func (c *Conn) WasAuthenticated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.authenticated
}
