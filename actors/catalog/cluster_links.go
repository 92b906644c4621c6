package catalog

import (
	"strconv"
	"sync"

	"github.com/samsa-io/samsa/interbroker"
)

// clusterLinks are the goroutines that keep a cluster-mode broker in
// step with the cluster beyond the controller's requests: the config
// watch (cluster_config_watch.go) and the producer-id blocks it asks the
// controller for (cluster_producer_ids.go). The first incarnation of the metadata
// actor starts them; they outlive its restarts (they reach it by its
// PID, which a restart keeps) and stop when it stops for good.
type clusterLinks struct {
	once  sync.Once
	watch *configWatch
	pids  *clusterProducerIDs
}

// startClusterLinks starts the links, once per broker.
func (a *metadataActor) startClusterLinks() {
	l := &a.cfg.Cluster.links
	l.once.Do(func() {
		self, root := a.ctx.Self(), a.env.System.Root
		hook := a.cfg.Cluster.OnConfigs
		send := func(msg any) {
			root.Send(self, msg)
			if hook != nil {
				hook(msg)
			}
		}
		l.watch = newConfigWatch(a.cfg.Cluster.Store, a.env.BrokerID(), send, a.env.Log.With("component", "config-watch"), a.env.Now, a.cfg.Stopped)
		l.watch.onUsers = a.cfg.Cluster.OnUserConfigs
		l.watch.onQuotas = a.cfg.Cluster.OnQuotaConfigs
		l.watch.onSynced = a.cfg.Cluster.markSynced
		go l.watch.run()
		// Kafka's brokers name themselves by id to the controller.
		me := a.env.BrokerID()
		client := interbroker.New(interbroker.Config{ClientID: strconv.Itoa(int(me)), Log: a.env.Log, Security: a.cfg.Cluster.InterBroker})
		stopped := a.cfg.Stopped
		go func() {
			<-stopped
			client.Close()
		}()
		fetch := allocateFromController(client, a.cfg.Cluster, me, a.env.Config.Cluster.InterBrokerListener)
		l.pids = newClusterProducerIDs(fetch, a.env.Log.With("component", "producer-ids"), stopped)
	})
}

// refreshConfigs has the config watch read again the configs of topics
// just placed here (leaderAndIsrConfigs), so that a change made since
// their first read reaches their logs.
func (a *metadataActor) refreshConfigs(configs map[string]map[string]string) {
	if a.cl == nil || a.cfg.Cluster.links.watch == nil {
		return
	}
	topics := make([]string, 0, len(configs))
	for t := range configs {
		topics = append(topics, t)
	}
	a.cfg.Cluster.links.watch.refresh(topics)
}
