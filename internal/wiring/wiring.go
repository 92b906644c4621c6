package wiring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/samsa-io/samsa/actors"
	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/netloop"
	"github.com/samsa-io/samsa/web"
	"github.com/samsa-io/samsa/web/schemaregistry"
)

// Node is a running broker: its actors and its listeners.
type Node struct {
	Broker *actors.Broker
	Server *netloop.Server
	// Host and Port are the address the broker advertises.
	Host string
	Port int32

	// Web is the HTTP side (samsa.http.listeners), nil when none is
	// configured; its handlers are mounted on it by the caller.
	Web *web.Server

	cluster *clusterNode // cluster mode only

	closeConfluentAPIs func()                   // the Schema Registry's and REST proxy's clients, if they run
	schemaRegistry     *schemaregistry.Registry // nil when it does not run
}

// Start opens the broker's metadata and logs (actors.NewBroker), starts
// netloop on cfg's listeners and advertises the first bound address
// (Advertised), in that order: a client that connects is told an address
// that answers. On failure whatever was opened is closed again, within
// cfg.ShutdownTimeout.
func Start(cfg *config.Broker, logger *slog.Logger) (*Node, error) {
	return StartWith(cfg, logger, nil)
}

// StartWith is Start with netloop's handler wrapped by wrap (nil: the
// broker itself), for tests that watch the requests the broker handles.
// The wrapper must keep the broker's Drain, as embedding *actors.Broker
// does.
func StartWith(cfg *config.Broker, logger *slog.Logger, wrap func(*actors.Broker) netloop.Handler) (*Node, error) {
	w, err := startWeb(cfg, logger)
	if err != nil {
		return nil, err
	}
	node, err := startNode(cfg, logger, wrap, w)
	if err != nil {
		if w != nil {
			ctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
			defer cancel()
			err = errors.Join(err, w.Shutdown(ctx))
		}
		return nil, err
	}
	node.Web = w
	mountMetrics(node, logger)
	startConfluentAPIs(node, cfg, logger)
	mountConsole(node, cfg, logger) // after the registry, whose decoder it uses
	if w != nil {
		w.SetReady(nil)
	}
	return node, nil
}

// startNode opens the broker and its Kafka listeners, alone or in the
// cluster; w (nil when off) hears about readiness changes afterwards.
func startNode(cfg *config.Broker, logger *slog.Logger, wrap func(*actors.Broker) netloop.Handler, w *web.Server) (*Node, error) {
	tlsLis, stores, err := tlsListeners(cfg, logger)
	if err != nil {
		return nil, err
	}
	if cfg.Cluster != nil {
		sec, err := interBrokerSecurity(cfg, stores)
		if err != nil {
			return nil, err
		}
		return startCluster(cfg, logger, wrap, tlsLis, w, stores, sec)
	}
	limits := newLiveLimits(logger)
	broker, err := actors.NewBroker(cfg, logger, actors.Options{OnKeystores: stores.reload(logger), CheckKeystore: stores.check,
		OnLayers: limits.onLayers})
	if err != nil {
		return nil, err
	}
	var h netloop.Handler = broker
	if wrap != nil {
		h = wrap(broker)
	}
	nc := NetloopConfig(cfg, logger)
	nc.TLS = tlsLis
	nc.ConnectionGate = broker.ConnectionQuotas()
	applyFDLimit(&nc, cfg, logger)
	server, err := netloop.New(nc, h)
	if err != nil {
		return nil, errors.Join(err, closeBroker(broker, cfg))
	}
	limits.attach(server, broker.ConnectionQuotas(), nc, cfg)
	if err := server.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("listen: %w", err), closeBroker(broker, cfg))
	}
	host, port := Advertised(cfg, server.Addrs())
	broker.SetAdvertised(host, port)
	if eps := listenerEndpoints(cfg, server.Addrs()); eps != nil {
		broker.SetListenerEndpoints(eps)
	}
	return &Node{Broker: broker, Server: server, Host: host, Port: port}, nil
}

func closeBroker(b *actors.Broker, cfg *config.Broker) error {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		return fmt.Errorf("closing logs: %w", err)
	}
	return nil
}

// Stop shuts the listeners down (no new connections, requests in flight
// finished and answered), then closes the broker (every log closed
// cleanly), both within ctx.
func (n *Node) Stop(ctx context.Context) error {
	if n.Web != nil {
		n.Web.SetReady(errShuttingDown)
	}
	if n.closeConfluentAPIs != nil {
		n.closeConfluentAPIs()
	}
	var err error
	if n.cluster != nil {
		n.cluster.controlledShutdown(ctx)
		err = n.stopLocal(ctx)
		n.cluster.close()
	} else {
		err = n.stopLocal(ctx)
	}
	if n.Web != nil {
		if werr := n.Web.Shutdown(ctx); werr != nil {
			err = errors.Join(err, fmt.Errorf("stopping the http listeners: %w", werr))
		}
	}
	return err
}

// stopLocal stops the listeners and closes the broker.
func (n *Node) stopLocal(ctx context.Context) error {
	var errs []error
	if err := n.Server.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("stopping listeners: %w", err))
	}
	if err := n.Broker.Close(ctx); err != nil {
		errs = append(errs, fmt.Errorf("closing logs: %w", err))
	}
	return errors.Join(errs...)
}

// Network settings read by name only here (actors/config defines them).
const (
	keyQueuedMaxRequestBytes = "queued.max.request.bytes"
	keyRequestReadTimeout    = "samsa.request.read.timeout.ms"
)

// applyFDLimit raises the descriptor soft limit and, unless
// max.connections is set, derives it from the limit.
func applyFDLimit(nc *netloop.Config, cfg *config.Broker, logger *slog.Logger) {
	soft, hard, err := raiseFDLimit()
	if err != nil {
		logger.Warn("cannot read the file descriptor limit", "err", err)
		return
	}
	if _, set := cfg.Static[config.KeyMaxConnections]; !set {
		nc.MaxConnections = defaultMaxConnections(soft)
	}
	logger.Info("file descriptor limit", "soft", soft, "hard", hard, "max_connections", nc.MaxConnections)
	if soft < 4096 {
		logger.Warn("the file descriptor limit is low for a broker: each connection and each open segment file takes one; "+
			"raise it (ulimit -n, systemd LimitNOFILE=)", "limit", soft, "max_connections", nc.MaxConnections)
	}
}

// NetloopConfig maps the broker's network settings.
func NetloopConfig(cfg *config.Broker, logger *slog.Logger) netloop.Config {
	nc := netloop.Config{
		MaxRequestBytes:     cfg.RequestMaxBytes,
		ConnectionsMaxIdle:  cfg.ConnectionsMaxIdle,
		MaxConnections:      cfg.MaxConnections,
		MaxConnectionsPerIP: cfg.MaxConnectionsPerIP,
		Logger:              logger,
	}
	// The syntax was checked when the configuration loaded; host names
	// are resolved now, once, as Kafka resolves them.
	overrides, unresolved, _ := config.ResolvePerIPOverrides(cfg.Value(config.KeyMaxConnectionsPerIPOverrides), lookupHost)
	nc.MaxConnectionsPerIPOverrides = overrides
	for _, h := range unresolved {
		slogOr(logger).Warn("max.connections.per.ip.overrides names a host that does not resolve; its override is left out", "host", h)
	}
	for l, n := range config.ConnectionLimitsOf(cfg.Layers()).ListenerMaxConnections {
		if nc.ListenerMaxConnections == nil {
			nc.ListenerMaxConnections = map[string]int{}
		}
		nc.ListenerMaxConnections[l] = limitOf(n)
	}
	if cfg.Cluster != nil && len(cfg.Listeners) > 1 {
		nc.ProtectedListener = cfg.Cluster.InterBrokerListener // Kafka spares it max.connections
	}
	if nc.ConnectionsMaxIdle == 0 {
		nc.ConnectionsMaxIdle = -1 // Kafka's 0: never close idle connections
	}
	if nc.QueuedMaxRequestBytes = config.ParseInt(cfg.Value(keyQueuedMaxRequestBytes)); nc.QueuedMaxRequestBytes <= 0 {
		nc.QueuedMaxRequestBytes = -1 // Kafka's -1: unbounded
	}
	if nc.RequestReadTimeout = time.Duration(config.ParseInt(cfg.Value(keyRequestReadTimeout))) * time.Millisecond; nc.RequestReadTimeout == 0 {
		nc.RequestReadTimeout = -1 // 0: never
	}
	if _, set := cfg.Static[config.KeyNetworkThreads]; set {
		nc.EventLoops = cfg.NetworkThreads // else one loop per CPU
	}
	for _, l := range cfg.Listeners {
		nc.Listeners = append(nc.Listeners, l.Address())
		nc.ListenerNames = append(nc.ListenerNames, l.Name)
	}
	return nc
}

// Advertised is the address clients are told: advertised.listeners when
// set, else the first listener with its bound port (port 0 resolves) and,
// for a wildcard host, this machine's name.
func Advertised(cfg *config.Broker, bound []net.Addr) (string, int32) {
	if len(cfg.Advertised) > 0 {
		return cfg.Advertised[0].Host, int32(cfg.Advertised[0].Port)
	}
	var first net.Addr
	if len(bound) > 0 {
		first = bound[0]
	}
	return boundEndpoint(cfg.Listeners[0], first)
}

// boundEndpoint is a listener's address as clients can reach it: its
// bound port (port 0 resolves) and, for a wildcard host, this machine's
// name.
func boundEndpoint(l config.Listener, bound net.Addr) (string, int32) {
	host, port := l.Host, l.Port
	if tcp, ok := bound.(*net.TCPAddr); ok {
		port = tcp.Port
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		if name, err := os.Hostname(); err == nil {
			host = name
		}
	}
	return host, int32(port)
}

// lookupHost resolves a host name of a connection limit.
func lookupHost(host string) ([]netip.Addr, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// slogOr is logger, or the default one when nil.
func slogOr(logger *slog.Logger) *slog.Logger {
	if logger == nil {
		return slog.Default()
	}
	return logger
}
