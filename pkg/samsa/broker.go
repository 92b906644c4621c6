package samsa

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/plugin"
	"github.com/samsa-io/samsa/internal/wiring"
)

// pluginListenerPreference is the order plug-ins pick the broker's
// listener in: they act for the operator, so plaintext first.
var pluginListenerPreference = []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}

// Broker is a running broker with its plug-ins.
type Broker struct {
	node *wiring.Node
	host *plugin.Host
	cfg  *config.Broker
	opts Options
}

// Start starts a broker and then its plug-ins, each a Kafka client of the
// broker's own listener.
func Start(opts Options, plugins ...plugin.Plugin) (*Broker, error) {
	logger := opts.logger()
	cfg, err := loadConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}
	for _, w := range cfg.Warnings {
		logger.Warn("config: " + w)
	}
	node, err := wiring.Start(cfg, logger)
	if err != nil {
		return nil, err
	}
	b := &Broker{node: node, cfg: cfg, opts: opts}
	l, ok := node.LocalListener(cfg, pluginListenerPreference...)
	if !ok {
		return nil, errors.Join(errors.New("no listener for the plug-ins"), b.stopNode())
	}
	popts := opts.Plugins
	clientOpts := []kgo.Opt{kgo.SeedBrokers(l.Addr)}
	if l.TLS != nil {
		clientOpts = append(clientOpts, kgo.DialTLSConfig(l.TLS))
	}
	popts.ClientOptions = append(clientOpts, popts.ClientOptions...)
	if popts.Logger == nil {
		popts.Logger = logger.With("component", "plugin")
	}
	if popts.Metrics == nil {
		// The broker's own registry: plug-in figures show on its /metrics.
		popts.Metrics = node.Broker.Metrics().Registry()
	}
	b.host = plugin.NewHost(popts)
	if err := b.host.Start(plugins...); err != nil {
		return nil, errors.Join(err, b.stopNode())
	}
	return b, nil
}

// Addr is the address the broker advertises, host:port.
func (b *Broker) Addr() string { return net.JoinHostPort(b.node.Host, strconv.Itoa(int(b.node.Port))) }

// Plugins is the host running the plug-ins (their counters).
func (b *Broker) Plugins() *plugin.Host { return b.host }

// Stop stops the plug-ins, then the broker, within ctx.
func (b *Broker) Stop(ctx context.Context) error {
	err := b.host.Stop(ctx)
	return errors.Join(err, b.node.Stop(ctx))
}

func (b *Broker) stopNode() error {
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.ShutdownTimeout)
	defer cancel()
	return b.node.Stop(ctx)
}
