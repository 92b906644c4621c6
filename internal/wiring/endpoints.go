package wiring

import (
	"net"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/metadata"
)

// listenerEndpoints is each listener's advertised address, by listener
// name, for a single-node broker with several listeners (nil with one):
// a client is told the address of the listener it came in on, as Kafka
// does, so a client of the SSL listener is not sent to the PLAINTEXT one.
// advertised.listeners names the address when it lists the listener;
// else it is the bound one. A listener advertised.listeners leaves out
// gets the broker's first advertised address, as before.
func listenerEndpoints(cfg *config.Broker, bound []net.Addr) map[string]metadata.Endpoint {
	if len(cfg.Listeners) < 2 {
		return nil
	}
	eps := make(map[string]metadata.Endpoint, len(cfg.Listeners))
	for i, l := range cfg.Listeners {
		if cfg.Advertised != nil {
			for _, a := range cfg.Advertised {
				if a.Name == l.Name {
					eps[l.Name] = metadata.Endpoint{Host: a.Host, Port: int32(a.Port)}
				}
			}
			continue
		}
		var addr net.Addr
		if i < len(bound) {
			addr = bound[i]
		}
		host, port := boundEndpoint(l, addr)
		eps[l.Name] = metadata.Endpoint{Host: host, Port: port}
	}
	return eps
}
