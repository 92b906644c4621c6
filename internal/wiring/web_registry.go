package wiring

import (
	"log/slog"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/sasl"
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
// authentication and ACLs apply to it. Without a PLAINTEXT listener the
// registry logs in on the SASL_PLAINTEXT one with the broker's own PLAIN
// identity (the username/password of its JAAS entry), or is off, and the
// proxy takes authenticated requests only. Nothing when there is no HTTP
// side.
func startConfluentAPIs(node *Node, cfg *config.Broker, logger *slog.Logger) {
	if node.Web == nil {
		return
	}
	plainAddr := listenerAddr(node, cfg, "PLAINTEXT")
	saslAddr, saslListener := saslListenerOf(node, cfg)
	var closers []func()
	handlers := map[string]http.Handler{}
	var reg *schemaregistry.Registry
	kc := schemaregistry.KafkaConfig{Brokers: []string{plainAddr}, Logger: logger}
	if plainAddr == "" && saslAddr != "" {
		if user, pass := brokerPlainLogin(cfg, saslListener); user != "" {
			kc.Brokers, kc.Opts = []string{saslAddr}, []kgo.Opt{kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism())}
		}
	}
	if kc.Brokers[0] == "" {
		logger.Warn("schema registry off: it needs a PLAINTEXT listener, or a SASL_PLAINTEXT one with PLAIN and the broker's own username/password in its JAAS entry, to reach the _schemas topic")
	} else {
		r, log, err := schemaregistry.OpenKafka(kc)
		if err != nil {
			logger.Error("schema registry off", "err", err)
		} else {
			reg = r
			node.schemaRegistry = r
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
		pc.SASL = &restproxy.SASL{Brokers: []string{saslAddr}, Mechanisms: saslListener.Mechanisms}
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

// saslListenerOf is the first SASL_PLAINTEXT listener: a dialable
// address and its settings as the broker reads them ("" and nil when
// there is none, or it does not parse).
func saslListenerOf(node *Node, cfg *config.Broker) (string, *sasl.Listener) {
	addr := listenerAddr(node, cfg, "SASL_PLAINTEXT")
	if addr == "" {
		return "", nil
	}
	for _, l := range cfg.Listeners {
		if l.Protocol == "SASL_PLAINTEXT" {
			sl, err := sasl.NewListener(l.Name, func(key string) string { return cfg.Static[key] })
			if err != nil {
				return "", nil
			}
			return addr, sl
		}
	}
	return "", nil
}

// brokerPlainLogin is the username and password of the listener's PLAIN
// JAAS entry: the broker's own client identity (Kafka's inter-broker
// login), which the registry uses when it has no PLAINTEXT listener. ""
// when PLAIN is off or the entry has none.
func brokerPlainLogin(cfg *config.Broker, l *sasl.Listener) (user, pass string) {
	if !l.Enabled(sasl.Plain) {
		return "", ""
	}
	text := cfg.Static[sasl.ListenerKey(l.Name, strings.ToLower(sasl.Plain)+"."+sasl.KeyJAAS)]
	if text == "" {
		text = cfg.Static[sasl.KeyJAAS]
	}
	j, err := sasl.ParseJAAS(text)
	if err != nil {
		return "", ""
	}
	return j.Options["username"], j.Options["password"]
}

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
