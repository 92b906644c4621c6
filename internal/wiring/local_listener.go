package wiring

import (
	"crypto/tls"
	"net"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/actors/config"
)

// LocalListener is one of the broker's own Kafka listeners as a client in
// the broker's process dials it: the web console and plug-ins are such
// clients.
type LocalListener struct {
	config.Listener
	// Addr is the bound address, a wildcard host made loopback.
	Addr string
	// TLS is set for SSL and SASL_SSL listeners. The client dials its own
	// broker on loopback, while the certificate names the advertised
	// host, so the certificate is not checked.
	TLS *tls.Config
	// Mechanisms are the SASL mechanisms of a SASL listener.
	Mechanisms []string
}

// LocalListener picks the first listener of the node whose security
// protocol comes first in preference (PLAINTEXT, SSL, SASL_PLAINTEXT,
// SASL_SSL); false when none has one of them.
func (n *Node) LocalListener(cfg *config.Broker, preference ...string) (LocalListener, bool) {
	bound := n.Server.Addrs()
	best, bestRank := -1, len(preference)
	for i, l := range cfg.Listeners {
		for rank, p := range preference {
			if l.Protocol == p && rank < bestRank && i < len(bound) {
				best, bestRank = i, rank
			}
		}
	}
	if best < 0 {
		return LocalListener{}, false
	}
	l := cfg.Listeners[best]
	ll := LocalListener{Listener: l, Addr: dialable(bound[best])}
	if strings.HasPrefix(l.Protocol, "SASL_") {
		mechs := cfg.Static["listener.name."+strings.ToLower(l.Name)+".sasl.enabled.mechanisms"]
		if mechs == "" {
			mechs = cfg.Value("sasl.enabled.mechanisms")
		}
		ll.Mechanisms = config.ParseList(mechs)
	}
	if strings.HasSuffix(l.Protocol, "SSL") {
		ll.TLS = &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // own listener on loopback
	}
	return ll, true
}

// dialable is a bound address a local client can dial: a wildcard host
// becomes loopback.
func dialable(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	ip := tcp.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
		if tcp.IP != nil && tcp.IP.To4() == nil {
			ip = net.IPv6loopback
		}
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(tcp.Port))
}
