package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// Admit reports whether req may be served on its connection. On a SASL
// listener a client that has not authenticated (or whose session has
// expired, KIP-368) may only send ApiVersions, SaslHandshake and
// SaslAuthenticate; anything else is refused as Kafka refuses it: one
// log line, no answer, the connection closed. Admit has then disposed of
// the request.
func Admit(s *Services, req *wire.Request) bool {
	switch kmsg.Key(req.Header.APIKey) {
	case kmsg.ApiVersions, kmsg.SASLHandshake, kmsg.SASLAuthenticate:
		return true
	}
	c := s.SASL.Conn(req.Session)
	if c == nil || c.Authenticated(s.Env.Now()) {
		return true
	}
	why := "the client has not authenticated"
	if c.WasAuthenticated() {
		why = "the client's SASL session expired without re-authentication (connections.max.reauth.ms)"
	}
	s.Env.Log.Warn("request on a SASL listener before authentication; closing the connection", "client", req.ClientAddr,
		"listener", req.Session.Listener, "api", wire.APIName(req.Header.APIKey), "reason", why)
	req.Reply(&wire.Response{CloseAfter: true})
	return false
}
