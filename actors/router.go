package actors

import (
	"github.com/samsa-io/samsa/actors/api"
	"github.com/samsa-io/samsa/wire"
)

// Handle routes one decoded request. It is called on a gnet event loop and
// never blocks: the API's handler (actors/api) answers directly or sends
// the request to the actor that owns it, which replies through
// req.Reply.
func (b *Broker) Handle(req *wire.Request) {
	a, ok := b.apis[req.Header.APIKey]
	if !ok {
		// wire only decodes keys of its API table; a key without a
		// handler is a table mismatch. No response would desynchronise
		// the client, so answer nothing and let netloop move on.
		b.log.Error("no handler for API; the wire table and the api registry disagree", "api", wire.APIName(req.Header.APIKey), "client", req.ClientAddr)
		req.Reply(nil)
		return
	}
	b.env.Metrics.Track(req)
	if b.saslGate && !api.Admit(b.services, req) {
		return
	}
	if q := b.services.Env.Quotas; q.Enabled() {
		b.handleMetered(a, req, q)
		return
	}
	a.Handle(b.services, req)
}
