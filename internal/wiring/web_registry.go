package wiring

import (
	"log/slog"
	"maps"
	"net"
	"strconv"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/web/restproxy"
	"github.com/samsa-io/samsa/web/schemaregistry"
)

// startConfluentAPIs mounts the Schema Registry (Confluent's paths:
// /subjects, /schemas, /config, /mode, /compatibility) and the REST
// proxy (/v3/clusters..., /consumers...) on the HTTP side. Both reach
// the broker through clients on its first PLAINTEXT listener: the
// registry keeps its state in the `_schemas` topic; in cluster mode the
// brokers elect one registry writer through ZooKeeper
// (web_registry_election.go) and the others forward writes to it.
// Nothing when there is no HTTP side; a broker with no PLAINTEXT
// listener serves neither (the clients do not yet speak TLS or SASL)
// and says so.
func startConfluentAPIs(node *Node, cfg *config.Broker, logger *slog.Logger) {
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
		logger.Warn("schema registry and REST proxy off: they need a PLAINTEXT listener to reach the broker")
		return
	}
	reg, log, err := schemaregistry.OpenKafka(schemaregistry.KafkaConfig{Brokers: []string{addr}, Logger: logger})
	if err != nil {
		logger.Error("schema registry and REST proxy off", "err", err)
		return
	}
	closers := []func(){log.Close}
	if node.cluster != nil {
		election := startRegistryElection(node.cluster.zk, registryURL(node), logger)
		reg.SetLeadership(election)
		closers = append([]func(){election.close}, closers...)
	}
	handlers := reg.Handlers()
	if proxy, err := restproxy.New(restproxy.Config{Brokers: []string{addr}, Registry: reg, Logger: logger}); err != nil {
		logger.Error("REST proxy off", "err", err)
	} else {
		closers = append([]func(){proxy.Close}, closers...)
		maps.Copy(handlers, proxy.Handlers())
	}
	node.closeConfluentAPIs = func() {
		for _, c := range closers {
			c()
		}
	}
	for pattern, h := range handlers {
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
