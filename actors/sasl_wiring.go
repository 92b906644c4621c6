package actors

import (
	"fmt"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/sasl"
	"github.com/samsa-io/samsa/segment/vfs"
)

// newSASL builds the broker's SASL service: one sasl.Listener per
// SASL_PLAINTEXT or SASL_SSL listener and the SCRAM credential store, persisted in
// the first data directory alone or in ZooKeeper in a cluster (where the
// config watch fills it, see watchUsers). Settings are read as set at
// start (cfg.Static), per listener first, as Kafka reads them.
func newSASL(cfg *config.Broker, fsys vfs.FS, cluster *ClusterOptions) (*sasl.Service, error) {
	get := func(key string) string { return cfg.Static[key] }
	listeners := map[string]*sasl.Listener{}
	for _, ln := range cfg.Listeners {
		if ln.Protocol != "SASL_PLAINTEXT" && ln.Protocol != "SASL_SSL" {
			continue
		}
		l, err := sasl.NewListener(ln.Name, get)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", config.ErrInvalid, err)
		}
		listeners[ln.Name] = l
	}
	var store *sasl.Store
	if cluster != nil {
		store = sasl.NewStore(nil, sasl.ZooKeeperPersist(cluster.Store))
	} else {
		users, err := sasl.LoadFile(fsys, cfg.LogDirs[0])
		if err != nil {
			return nil, err
		}
		store = sasl.NewStore(users, sasl.FilePersist(fsys, cfg.LogDirs[0]))
	}
	return sasl.NewService(listeners, store), nil
}

// watchUsers keeps the store in step with ZooKeeper's /config/users: the
// config watch hands it every user's configs, at start and on each
// change made through any broker.
func (b *Broker) watchUsers(svc *sasl.Service) func(string, map[string]string) {
	return func(name string, configs map[string]string) {
		creds, bad := sasl.UserCredentials(configs)
		user := sasl.DesanitizeUser(name)
		for _, m := range bad {
			b.log.Warn("ignoring a malformed SCRAM credential in ZooKeeper; set it again with kafka-configs.sh", "user", user, "mechanism", m)
		}
		svc.Store.Replace(user, creds)
	}
}
