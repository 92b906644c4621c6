package wiring

import (
	"log/slog"
	"maps"
	"math"
	"sync"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/quota"
	"github.com/samsa-io/samsa/netloop"
)

// liveLimits applies the connection limits the broker's configuration
// layers resolve while it runs, as Kafka's dynamic max.connections,
// listener.name.<l>.max.connections, max.connections.per.ip(.overrides)
// and (listener.name.<l>.)max.connection.creation.rate: the metadata
// actor hands it the layers at start and after each change
// (actors.Options.OnLayers), before the server exists too; the server
// and the connection quotas are attached once made, and get the latest.
type liveLimits struct {
	logger *slog.Logger

	mu     sync.Mutex
	layers *config.Layers
	server *netloop.Server
	rates  *quota.Connections
	// unsetMax is max.connections when no layer sets it (derived from the
	// descriptor limit); protected is the listener spared the broker's
	// limits.
	unsetMax  int
	protected string
	applied   config.ConnectionLimits
	attached  bool
	// overrides caches max.connections.per.ip.overrides resolved (host
	// names looked up once per value, as Kafka does).
	overrides         string
	overridesResolved map[string]int
}

func newLiveLimits(logger *slog.Logger) *liveLimits { return &liveLimits{logger: slogOr(logger)} }

// onLayers is actors.Options.OnLayers.
func (ll *liveLimits) onLayers(layers config.Layers) {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	ll.layers = &layers
	ll.applyLocked()
}

// attach hands the limits the server (made from nc) and the connection
// creation quotas: the limits of the latest layers apply from now on.
func (ll *liveLimits) attach(server *netloop.Server, rates *quota.Connections, nc netloop.Config, cfg *config.Broker) {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	ll.server, ll.rates, ll.unsetMax, ll.protected = server, rates, nc.MaxConnections, nc.ProtectedListener
	// NetloopConfig resolved the static overrides already.
	ll.overrides, ll.overridesResolved = cfg.Value(config.KeyMaxConnectionsPerIPOverrides), nc.MaxConnectionsPerIPOverrides
	ll.applyLocked()
}

// applyLocked applies the latest layers' limits when they differ from
// those applied last; ll.mu is held.
func (ll *liveLimits) applyLocked() {
	if ll.server == nil || ll.layers == nil {
		return
	}
	c := config.ConnectionLimitsOf(*ll.layers)
	if ll.attached && equalLimits(c, ll.applied) {
		return
	}
	first := !ll.attached
	ll.attached, ll.applied = true, c
	if c.PerIPOverrides != ll.overrides {
		resolved, unresolved, err := config.ResolvePerIPOverrides(c.PerIPOverrides, lookupHost)
		if err != nil {
			ll.logger.Error("max.connections.per.ip.overrides does not parse; the previous overrides stay", "err", err)
			resolved = ll.overridesResolved
		}
		for _, h := range unresolved {
			ll.logger.Warn("max.connections.per.ip.overrides names a host that does not resolve; its override is left out", "host", h)
		}
		ll.overrides, ll.overridesResolved = c.PerIPOverrides, resolved
	}
	maxConns := ll.unsetMax
	if c.MaxConnectionsSet {
		maxConns = limitOf(c.MaxConnections)
	}
	nl := netloop.ConnectionLimits{Max: maxConns, PerIP: limitOf(c.MaxConnectionsPerIP), PerIPOverrides: ll.overridesResolved,
		Listeners: map[string]int{}}
	for l, n := range c.ListenerMaxConnections {
		nl.Listeners[l] = limitOf(n)
	}
	if err := ll.server.SetConnectionLimits(nl); err != nil {
		ll.logger.Error("cannot apply the connection limits", "err", err)
		return
	}
	rl := quota.ConnectionLimits{Broker: float64(c.CreationRate), Listeners: map[string]float64{}, Protected: ll.protected}
	for l, n := range c.ListenerCreationRates {
		rl.Listeners[l] = float64(n)
	}
	if ll.rates != nil {
		ll.rates.SetLimits(rl)
	}
	if !first {
		ll.logger.Info("connection limits changed", "max_connections", nl.Max, "listener_max_connections", nl.Listeners,
			"max_connections_per_ip", nl.PerIP, "max_connections_per_ip_overrides", nl.PerIPOverrides,
			"max_connection_creation_rate", rl.Broker, "listener_max_connection_creation_rate", rl.Listeners)
	}
}

// limitOf maps Kafka's "no limit" (Int.MaxValue and up) to netloop's 0.
func limitOf(n int64) int {
	if n >= math.MaxInt32 || n < 0 {
		return 0
	}
	return int(n)
}

func equalLimits(a, b config.ConnectionLimits) bool {
	return a.MaxConnections == b.MaxConnections && a.MaxConnectionsSet == b.MaxConnectionsSet &&
		a.MaxConnectionsPerIP == b.MaxConnectionsPerIP && a.PerIPOverrides == b.PerIPOverrides && a.CreationRate == b.CreationRate &&
		maps.Equal(a.ListenerMaxConnections, b.ListenerMaxConnections) && maps.Equal(a.ListenerCreationRates, b.ListenerCreationRates)
}
