package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// SaslHandshake (v0-1), answered on the loop: the client names the
// mechanism it will use, the broker answers with the mechanisms the
// listener enables.
var saslHandshake = API{Key: kmsg.SASLHandshake, Handle: handleSaslHandshake}

func handleSaslHandshake(s *Services, req *wire.Request) {
	body := req.Body.(*kmsg.SASLHandshakeRequest)
	resp := body.ResponseKind().(*kmsg.SASLHandshakeResponse)
	resp.Version = body.Version
	c := s.SASL.Conn(req.Session)
	if c == nil {
		// Kafka's answer on a listener without SASL.
		resp.ErrorCode = kerr.IllegalSaslState.Int16()
		env.Reply(req, resp)
		return
	}
	resp.SupportedMechanisms = c.Listener().Mechanisms
	if f := c.Handshake(body.Mechanism); f != nil {
		resp.ErrorCode = f.Code
		s.Env.Log.Warn("SASL handshake refused; closing the connection", "client", req.ClientAddr,
			"listener", req.Session.Listener, "mechanism", body.Mechanism, "reason", f.Reason)
		replyAndClose(req, resp)
		return
	}
	if body.Version == 0 {
		// v0 is followed by raw SASL tokens outside Kafka's framing
		// (pre-0.10 clients); no current client sends it and samsa
		// reads framed requests only.
		s.Env.Log.Warn("SASL handshake v0 (unframed SASL tokens) is not supported; closing the connection: use a client that sends SaslHandshake v1 and SaslAuthenticate (Kafka 1.0 or later)",
			"client", req.ClientAddr, "listener", req.Session.Listener, "mechanism", body.Mechanism)
		resp.ErrorCode = kerr.UnsupportedVersion.Int16()
		replyAndClose(req, resp)
		return
	}
	env.Reply(req, resp)
}

// replyAndClose answers req with resp, then closes the connection.
func replyAndClose(req *wire.Request, resp kmsg.Response) {
	b := wire.AppendResponse(nil, req.Header.CorrelationID, resp)
	req.Reply(&wire.Response{Chunks: []wire.Chunk{{Bytes: b}}, CloseAfter: true})
}
