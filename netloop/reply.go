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
		r.c.srv.log.Error("netloop: Reply called twice for one request; second response dropped",
			"client", r.c.remote, "api", wire.APIName(r.apiKey), "correlation_id", r.corr)
		release(resp)
		return
	}
	r.c.deliver(r.seq, resp)
}

// abandon finishes the request without a response if Reply has not been
// called yet.
func (r *reply) abandon() {
	if r.replied.CompareAndSwap(false, true) {
		r.c.deliver(r.seq, nil)
	}
}
