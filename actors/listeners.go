package actors

import "github.com/samsa-io/samsa/actors/metadata"

// SetListenerEndpoints sets this broker's advertised endpoint on each
// listener, by name: a client is told the addresses of the listener it
// came in on (env.ClientEndpoint). Call it with SetAdvertised.
func (b *Broker) SetListenerEndpoints(eps map[string]metadata.Endpoint) {
	b.env.ListenerEndpoints.Store(&eps)
}
