package env

import (
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/wire"
)

// EndpointFor is the address a client of req's listener is given: that
// listener's (Endpoints), else Endpoint. Nil before the listeners are
// bound.
func (e *Env) EndpointFor(req *wire.Request) *metadata.Endpoint {
	if m := e.Endpoints.Load(); m != nil && req.Session != nil {
		if ep, ok := (*m)[req.Session.Listener]; ok {
			return &ep
		}
	}
	return e.Endpoint.Load()
}
