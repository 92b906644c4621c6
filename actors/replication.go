package actors

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/catalog"
	"github.com/samsa-io/samsa/actors/cluster"
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
	b.peers = interbroker.New(interbroker.Config{ClientID: "samsa-replica-" + strconv.Itoa(int(cfg.BrokerID)), Log: b.log,
		Security: b.opts.Cluster.InterBroker})
	throttles := replica.NewThrottles(cfg.BrokerID)
	b.fetchers = replica.New(replica.Config{
		Me: cfg.BrokerID, Root: b.env.System.Root, Client: b.peers, View: b.cluster.View, Listener: listener, Log: b.log,
		MaxWait: ms(config.KeyReplicaFetchWaitMax), MinBytes: int32(config.ParseInt(cfg.Value(config.KeyReplicaFetchMinBytes))),
		MaxBytes:          int32(config.ParseInt(cfg.Value(config.KeyReplicaFetchResponseMaxBytes))),
		PartitionMaxBytes: int32(config.ParseInt(cfg.Value(config.KeyReplicaFetchMaxBytes))),
		Backoff:           ms(config.KeyReplicaFetchBackoff),
		Epoch:             &b.cluster.BrokerEpoch,
		Throttle:          throttles.Follower,
	})
	isr := &replica.ISRSender{Me: cfg.BrokerID, Epoch: &b.cluster.BrokerEpoch, Client: b.peers, View: b.cluster.View, Listener: listener, Log: b.log}
	metaCfg.Replication = &partition.Replication{Me: cfg.BrokerID, LagMax: ms(config.KeyReplicaLagTimeMax), AlterISR: isr.AlterISR,
		RackAware:      strings.TrimSpace(cfg.Value(config.KeyReplicaSelectorClass)) == config.RackAwareReplicaSelector,
		RackOf:         rackOf(b.cluster.View, ClientListener(cfg)),
		LeaderThrottle: throttles.Leader, Parked: partition.NewParkedReplicaFetches()}
	metaCfg.Followers = followers{b.fetchers}
	metaCfg.Throttles = throttles
}

// rackOf is a live broker's rack from the cluster view, for KIP-392's
// selector: false for a broker the view does not list or that has no
// endpoint on the clients' listener (a consumer could not go there).
func rackOf(view *cluster.Table, listener string) func(int32) (string, bool) {
	return func(id int32) (string, bool) {
		v := view.Load()
		if v == nil {
			return "", false
		}
		b, ok := v.Brokers[id]
		if !ok {
			return "", false
		}
		if _, ok := b.Endpoint(listener); !ok {
			return "", false
		}
		return b.Rack, true
	}
}

// stopReplication stops the fetchers before the partitions close.
func (b *Broker) stopReplication() {
	if b.fetchers != nil {
		b.fetchers.Close()
	}
	if b.peers != nil {
		b.peers.Close()
	}
	if b.markerPeers != nil {
		b.markerPeers.Close()
	}
	if b.sharePeers != nil {
		b.sharePeers.Close()
	}
}

// followers adapts replica.Fetchers to the metadata actor.
type followers struct{ fs *replica.Fetchers }

func (f followers) Follow(p catalog.FollowedPartition) {
	f.fs.Follow(replica.Followed{Topic: p.Topic, ID: p.ID, Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, PID: p.PID, InSync: p.InSync})
}

func (f followers) Unfollow(topic string, partition int32) { f.fs.Unfollow(topic, partition) }

// remoteMarkers is how the transaction coordinators reach partitions
// other brokers lead (WriteTxnMarkers over the inter-broker listener);
// nil alone, where every partition is local.
func (b *Broker) remoteMarkers() func(ctx context.Context, broker int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	if b.peers == nil || b.cluster == nil {
		return nil
	}
	listener := b.cfg.Cluster.InterBrokerListener
	// Markers have connections of their own, as Kafka's marker channel
	// does: a leader answers WriteTxnMarkers once its followers have the
	// markers, and a follower on this broker fetching over the same
	// connection would get its Fetch answer only after that one (answers
	// go in request order): the two waited for each other until the 30 s
	// request timeout cut the connection.
	b.markerPeers = interbroker.New(interbroker.Config{ClientID: "samsa-txn-markers-" + strconv.Itoa(int(b.cfg.BrokerID)), Log: b.log,
		Security: b.opts.Cluster.InterBroker})
	return func(ctx context.Context, broker int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
		v := b.cluster.View.Load()
		if v == nil {
			return nil, errNoView
		}
		addr, ok := v.Addr(broker, listener)
		if !ok {
			return nil, fmt.Errorf("actors: broker %d has no %s endpoint in the cluster view", broker, listener)
		}
		resp, err := b.markerPeers.Send(ctx, addr, req)
		if err != nil {
			return nil, err
		}
		return resp.(*kmsg.WriteTxnMarkersResponse), nil
	}
}

var errNoView = errors.New("actors: no cluster view yet")
