package actors

import (
	"errors"
	"log/slog"
	"time"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/quota"
	"github.com/samsa-io/samsa/segment/vfs"
)

// errQuotasInCluster refuses client quota changes in a cluster: Kafka
// keeps them in ZooKeeper's /config/users and /config/clients, which
// samsa does not write or watch for quotas yet, and quotas held by one
// broker alone would be enforced by that broker only.
var errQuotasInCluster = errors.New("client quotas are not supported in cluster mode yet")

// newQuotas builds the broker's client quotas: on a single node read
// from and persisted in the first data directory. In a cluster none are
// set and changes are refused (errQuotasInCluster).
func newQuotas(cfg *config.Broker, fsys vfs.FS, cluster *ClusterOptions, log *slog.Logger) (*quota.Manager, error) {
	w := quota.Window{
		Num:  int(config.ParseInt(cfg.Value(config.KeyQuotaWindowNum))),
		Size: time.Duration(config.ParseInt(cfg.Value(config.KeyQuotaWindowSize))) * time.Second,
	}
	if cluster != nil {
		refuse := func([]quota.Entity, quota.Configs) error { return errQuotasInCluster }
		return quota.NewManager(nil, refuse, w, log), nil
	}
	configs, err := quota.LoadFile(fsys, cfg.LogDirs[0])
	if err != nil {
		return nil, err
	}
	return quota.NewManager(configs, quota.FilePersist(fsys, cfg.LogDirs[0]), w, log), nil
}
