package netloop

import (
	"sync/atomic"

	"github.com/samsa-io/samsa/wire"
)

// reply is one request's Reply: it files the response under the request's
// sequence number on its connection. Reply must be called exactly once; a
// second call is logged and its response released.
type reply struct {
	c       *conn
	seq     uint64
	apiKey  int16
	corr    int32
	replied atomic.Bool
}

func (r *reply) send(resp *wire.Response) {
	if !r.replied.CompareAndSwap(false, true) {
		r.c.srv.secondReply(r.c.remote, r.apiKey, r.corr, resp)
		return
	}
	r.c.deliver(r.seq, resp)
}

// secondReply logs and releases the response of a second Reply for one
// request (a handler bug); the first one stands.
func (s *Server) secondReply(remote string, apiKey int16, corr int32, resp *wire.Response) {
	s.log.Error("netloop: Reply called twice for one request; second response dropped",
		"client", remote, "api", wire.APIName(apiKey), "correlation_id", corr)
	release(resp)
}

// abandoner is a request's reply that a panicking Handler left
// unanswered: a gnet connection's reply or a TLS connection's.
type abandoner interface{ abandon() }

// abandon finishes the request without a response if Reply has not been
// called yet.
func (r *reply) abandon() {
	if r.replied.CompareAndSwap(false, true) {
		r.c.deliver(r.seq, nil)
	}
}
