package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// SaslAuthenticate (v0-2), answered on the loop: one step of the
// exchange the handshake chose. On success the connection's principal
// becomes User:<name>; a failure is answered SASL_AUTHENTICATION_FAILED
// with Kafka's message, logged once (client, mechanism, user), and the
// connection is closed: the rest of the broker carries on.
var saslAuthenticate = API{Key: kmsg.SASLAuthenticate, Handle: handleSaslAuthenticate}

func handleSaslAuthenticate(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.SASLAuthenticateRequest)
	resp := body.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	resp.Version = body.Version
	c := s.SASL.Conn(req.Session)
	if c == nil {
		resp.ErrorCode = kerr.IllegalSaslState.Int16()
		resp.ErrorMessage = kmsg.StringPtr("SaslAuthenticate request received on a listener without SASL")
		env.Reply(req, resp)
		return
	}
	mech := c.Mechanism()
	now := s.Env.Now()
	out, done, user, f := c.Step(body.SASLAuthBytes, now)
	if f != nil {
		resp.ErrorCode, resp.ErrorMessage = f.Code, kmsg.StringPtr(f.Message)
		s.Env.Log.Warn("SASL authentication failed; closing the connection", "client", req.ClientAddr,
			"listener", req.Session.Listener, "mechanism", mech, "user", user, "reason", f.Reason)
		replyAndClose(req, resp)
		return
	}
	resp.SASLAuthBytes = out
	if done {
		req.Session.SetPrincipal("User:" + user)
		resp.SessionLifetimeMillis = c.SessionLifetime(now).Milliseconds()
	}
	env.Reply(req, resp)
}
