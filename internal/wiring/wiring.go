package wiring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/samsa-io/samsa/actors"
	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/netloop"
)

// Node is a running broker: its actors and its listeners.
type Node struct {
	Broker *actors.Broker
	Server *netloop.Server
	// Host and Port are the address the broker advertises.
	Host string
	Port int32
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
	broker, err := actors.NewBroker(cfg, logger)
	if err != nil {
		return nil, err
	}
	var h netloop.Handler = broker
	if wrap != nil {
		h = wrap(broker)
	}
	server, err := netloop.New(NetloopConfig(cfg, logger), h)
	if err != nil {
		return nil, errors.Join(err, closeBroker(broker, cfg))
	}
	if err := server.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("listen: %w", err), closeBroker(broker, cfg))
	}
	host, port := Advertised(cfg, server.Addrs())
	broker.SetAdvertised(host, port)
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
	var errs []error
	if err := n.Server.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("stopping listeners: %w", err))
	}
	if err := n.Broker.Close(ctx); err != nil {
		errs = append(errs, fmt.Errorf("closing logs: %w", err))
	}
	return errors.Join(errs...)
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
	if nc.ConnectionsMaxIdle == 0 {
		nc.ConnectionsMaxIdle = -1 // Kafka's 0: never close idle connections
	}
	if _, set := cfg.Static[config.KeyNetworkThreads]; set {
		nc.EventLoops = cfg.NetworkThreads // else one loop per CPU
	}
	for _, l := range cfg.Listeners {
		nc.Listeners = append(nc.Listeners, l.Address())
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
	host, port := cfg.Listeners[0].Host, cfg.Listeners[0].Port
	if len(bound) > 0 {
		if tcp, ok := bound[0].(*net.TCPAddr); ok {
			port = tcp.Port
		}
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		if name, err := os.Hostname(); err == nil {
			host = name
		}
	}
	return host, int32(port)
}
