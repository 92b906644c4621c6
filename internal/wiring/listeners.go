package wiring

import (
	"net"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/metadata"
)

// ListenerEndpoints is the address clients of each listener are told:
// its advertised.listeners entry when there is one, else its bound
// address, resolved as Advertised resolves the first (port 0 to the
// bound port, a wildcard host to this machine's name). bound is in
// cfg.Listeners' order, as netloop binds them.
func ListenerEndpoints(cfg *config.Broker, bound []net.Addr) map[string]metadata.Endpoint {
	eps := make(map[string]metadata.Endpoint, len(cfg.Listeners))
	for i, l := range cfg.Listeners {
		one := &config.Broker{Listeners: []config.Listener{l}}
		for _, a := range cfg.Advertised {
			if a.Name == l.Name {
				one.Advertised = []config.Listener{a}
			}
		}
		var addrs []net.Addr
		if i < len(bound) {
			addrs = bound[i : i+1]
		}
		host, port := Advertised(one, addrs)
		eps[l.Name] = metadata.Endpoint{Host: host, Port: port}
	}
	return eps
}
