package wiring

import (
	"log/slog"
	"maps"
	"net"
	"net/http"
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
// The REST proxy also acts as a request's HTTP Basic user through the
// first SASL_PLAINTEXT listener, if there is one, so the broker's
// authentication and ACLs apply to it. Nothing when there is no HTTP
// side; without a PLAINTEXT listener there is no registry (its client
// does not speak TLS or SASL yet) and the proxy takes authenticated
// requests only.
func startConfluentAPIs(node *Node, cfg *config.Broker, logger *slog.Logger) {
	if node.Web == nil {
		return
	}
	plainAddr, saslAddr := listenerAddr(node, cfg, "PLAINTEXT"), listenerAddr(node, cfg, "SASL_PLAINTEXT")
	var closers []func()
	handlers := map[string]http.Handler{}
	var reg *schemaregistry.Registry
	if plainAddr == "" {
		logger.Warn("schema registry off: it needs a PLAINTEXT listener to reach the _schemas topic")
	} else {
		r, log, err := schemaregistry.OpenKafka(schemaregistry.KafkaConfig{Brokers: []string{plainAddr}, Logger: logger})
		if err != nil {
			logger.Error("schema registry off", "err", err)
		} else {
			reg = r
			closers = append(closers, log.Close)
			if node.cluster != nil {
				election := startRegistryElection(node.cluster.zk, registryURL(node), logger)
				reg.SetLeadership(election)
				closers = append([]func(){election.close}, closers...)
			}
			maps.Copy(handlers, reg.Handlers())
		}
	}
	pc := restproxy.Config{Registry: reg, Logger: logger}
	if plainAddr != "" {
		pc.Brokers = []string{plainAddr}
	}
	if saslAddr != "" {
		pc.SASL = &restproxy.SASL{Brokers: []string{saslAddr}, Mechanisms: config.ParseList(cfg.Value(keySASLMechanisms))}
	}
	if plainAddr == "" && saslAddr == "" {
		logger.Warn("REST proxy off: it needs a PLAINTEXT or SASL_PLAINTEXT listener")
	} else if proxy, err := restproxy.New(pc); err != nil {
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

// keySASLMechanisms is read by name only here (actors/config defines it).
const keySASLMechanisms = "sasl.enabled.mechanisms"

// listenerAddr is a dialable address of the first listener of protocol,
// "" if there is none.
func listenerAddr(node *Node, cfg *config.Broker, protocol string) string {
	bound := node.Server.Addrs()
	for i, l := range cfg.Listeners {
		if l.Protocol == protocol && i < len(bound) {
			return loopbackIfWildcard(bound[i])
		}
	}
	return ""
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
