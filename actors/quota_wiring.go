package actors

import (
	"log/slog"
	"time"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/quota"
	"github.com/samsa-io/samsa/segment/vfs"
)

// newQuotas builds the broker's client quotas: on a single node read
// from and persisted in the first data directory; in a cluster written
// to ZooKeeper in Kafka's layout (any broker may take the change) and
// filled by the config watch, at start and on every change notification
// (see watchQuotas).
func newQuotas(cfg *config.Broker, fsys vfs.FS, cluster *ClusterOptions, log *slog.Logger) (*quota.Manager, error) {
	w := quota.Window{
		Num:  int(config.ParseInt(cfg.Value(config.KeyQuotaWindowNum))),
		Size: time.Duration(config.ParseInt(cfg.Value(config.KeyQuotaWindowSize))) * time.Second,
	}
	if cluster != nil {
		m := quota.NewManager(nil, quota.ZooKeeperPersist(cluster.Store), w, log)
		m.ReadThrough(quota.ZooKeeperRead(cluster.Store), quota.ZooKeeperReadAll(cluster.Store))
		return m, nil
	}
	configs, err := quota.LoadFile(fsys, cfg.LogDirs[0])
	if err != nil {
		return nil, err
	}
	return quota.NewManager(configs, quota.FilePersist(fsys, cfg.LogDirs[0]), w, log), nil
}

// watchQuotas keeps the quotas in step with ZooKeeper: the config watch
// hands it every quota entity's znode, at start and on each change made
// through any broker (or Kafka's tools).
func (b *Broker) watchQuotas(m *quota.Manager) func(entityType, name string, configs map[string]string) {
	return func(entityType, name string, configs map[string]string) {
		e, ok := quota.EntityAt(entityType, name)
		if !ok {
			return
		}
		q, bad := quota.QuotasOf(e, configs)
		for _, k := range bad {
			b.log.Warn("ignoring a malformed client quota in ZooKeeper; set it again with kafka-configs.sh", "entity", e.String(), "key", k, "value", configs[k])
		}
		m.Replace(e, q)
	}
}

// newConnectionQuotas builds the connection creation quotas: the
// broker's and each listener's max.connection.creation.rate as set at
// start, and the ip entities' rates of m. In a cluster the inter-broker
// listener is spared the broker's rate when there are several
// listeners, as in Kafka.
func newConnectionQuotas(cfg *config.Broker, m *quota.Manager) *quota.Connections {
	limits := quota.ConnectionLimits{
		Broker:    float64(config.ParseInt(cfg.Value(config.KeyMaxConnectionCreationRate))),
		Listeners: map[string]float64{},
	}
	for l, v := range cfg.ListenerConnectionCreationRates() {
		limits.Listeners[l] = float64(v)
	}
	if cfg.Cluster != nil && len(cfg.Listeners) > 1 {
		limits.Protected = cfg.Cluster.InterBrokerListener
	}
	return quota.NewConnections(m, limits)
}

// ConnectionQuotas are the broker's connection creation quotas, for
// netloop to consult on every accepted connection
// (netloop.Config.ConnectionGate).
func (b *Broker) ConnectionQuotas() *quota.Connections { return b.connQuotas }
