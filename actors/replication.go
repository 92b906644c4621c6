package actors

import (
	"strconv"
	"time"

	"github.com/samsa-io/samsa/actors/catalog"
	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/actors/replica"
	"github.com/samsa-io/samsa/interbroker"
)

// startReplication builds a cluster-mode broker's replication: the
// follower fetchers and the leaders' ISR changes, over one inter-broker
// client; the metadata actor drives them as the controller assigns roles.
func (b *Broker) startReplication(metaCfg *catalog.ActorConfig) {
	cfg := b.cfg
	ms := func(key string) time.Duration {
		return time.Duration(config.ParseInt(cfg.Value(key))) * time.Millisecond
	}
	listener := cfg.Cluster.InterBrokerListener
	b.peers = interbroker.New(interbroker.Config{ClientID: "samsa-replica-" + strconv.Itoa(int(cfg.BrokerID)), Log: b.log})
	throttles := replica.NewThrottles(cfg.BrokerID)
	b.fetchers = replica.New(replica.Config{
		Me: cfg.BrokerID, Root: b.env.System.Root, Client: b.peers, View: b.cluster.View, Listener: listener, Log: b.log,
		MaxWait: ms(config.KeyReplicaFetchWaitMax), MinBytes: int32(config.ParseInt(cfg.Value(config.KeyReplicaFetchMinBytes))),
		MaxBytes:          int32(config.ParseInt(cfg.Value(config.KeyReplicaFetchResponseMaxBytes))),
		PartitionMaxBytes: int32(config.ParseInt(cfg.Value(config.KeyReplicaFetchMaxBytes))),
		Backoff:           ms(config.KeyReplicaFetchBackoff),
		Throttle:          throttles.Follower,
	})
	isr := &replica.ISRSender{Me: cfg.BrokerID, Epoch: &b.cluster.BrokerEpoch, Client: b.peers, View: b.cluster.View, Listener: listener, Log: b.log}
	metaCfg.Replication = &partition.Replication{Me: cfg.BrokerID, LagMax: ms(config.KeyReplicaLagTimeMax), AlterISR: isr.AlterISR,
		LeaderThrottle: throttles.Leader}
	metaCfg.Followers = followers{b.fetchers}
	metaCfg.Throttles = throttles
}

// stopReplication stops the fetchers before the partitions close.
func (b *Broker) stopReplication() {
	if b.fetchers != nil {
		b.fetchers.Close()
	}
	if b.peers != nil {
		b.peers.Close()
	}
}

// followers adapts replica.Fetchers to the metadata actor.
type followers struct{ fs *replica.Fetchers }

func (f followers) Follow(p catalog.FollowedPartition) {
	f.fs.Follow(replica.Followed{Topic: p.Topic, ID: p.ID, Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, PID: p.PID, InSync: p.InSync})
}

func (f followers) Unfollow(topic string, partition int32) { f.fs.Unfollow(topic, partition) }
