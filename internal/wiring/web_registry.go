package wiring

import (
	"log/slog"
	"net"
	"strconv"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/web/schemaregistry"
)

// startSchemaRegistry mounts the Schema Registry (Confluent's paths:
// /subjects, /schemas, /config, /mode, /compatibility) on the HTTP side,
// backed by the `_schemas` topic through a client on the broker's first
// PLAINTEXT listener; in cluster mode the brokers elect one writer
// through ZooKeeper (web_registry_election.go) and the others forward
// writes to it. Nothing when there is no HTTP side; a broker with
// no PLAINTEXT listener serves no registry (its client does not yet
// speak TLS or SASL) and says so.
func startSchemaRegistry(node *Node, cfg *config.Broker, logger *slog.Logger) {
	if node.Web == nil {
		return
	}
	addr := ""
	bound := node.Server.Addrs()
	for i, l := range cfg.Listeners {
		if l.Protocol == "PLAINTEXT" && i < len(bound) {
			addr = loopbackIfWildcard(bound[i])
			break
		}
	}
	if addr == "" {
		logger.Warn("schema registry off: it needs a PLAINTEXT listener to reach the _schemas topic")
		return
	}
	reg, log, err := schemaregistry.OpenKafka(schemaregistry.KafkaConfig{Brokers: []string{addr}, Logger: logger})
	if err != nil {
		logger.Error("schema registry off", "err", err)
		return
	}
	node.closeRegistry = log.Close
	if node.cluster != nil {
		election := startRegistryElection(node.cluster.zk, registryURL(node), logger)
		reg.SetLeadership(election)
		node.closeRegistry = func() {
			election.close()
			log.Close()
		}
	}
	for pattern, h := range reg.Handlers() {
		node.Web.Handle(pattern, h)
	}
}

// registryURL is where the other brokers reach this one's registry: its
// first HTTP listener, at the broker's advertised host when the listener
// is bound to every address.
func registryURL(node *Node) string {
	a := node.Web.Addrs()[0]
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = node.Host
	}
	return "http://" + net.JoinHostPort(host, port)
}

// loopbackIfWildcard is a dialable form of a bound address: 0.0.0.0 and
// :: become the loopback address.
func loopbackIfWildcard(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	ip := tcp.IP
	if ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(tcp.Port))
}
