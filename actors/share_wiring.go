package actors

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/sharegroup"
	"github.com/samsa-io/samsa/interbroker"
)

// shareLink is the share coordinator's link to the cluster (nil alone):
// share state goes to the state topic's partition leaders, often other
// brokers, with acks=all Produce and is read back with Fetch, over
// connections of its own. Not replication's: a leader answers an acks=all
// Produce once its followers have the records, and a follower on this
// broker fetching over the same connection would wait behind that answer
// (the transaction markers' reason for a link of their own, too).
func (b *Broker) shareLink() *sharegroup.ClusterLink {
	if b.cluster == nil {
		return nil
	}
	cfg := b.cfg
	listener := cfg.Cluster.InterBrokerListener
	b.sharePeers = interbroker.New(interbroker.Config{ClientID: "samsa-share-" + strconv.Itoa(int(cfg.BrokerID)), Log: b.log,
		Security: b.opts.Cluster.InterBroker})
	peers, view := b.sharePeers, b.cluster.View
	return &sharegroup.ClusterLink{
		Me:               cfg.BrokerID,
		StatePartitions:  int32(config.ParseInt(cfg.Value(config.KeyShareStatePartitions))),
		StateReplication: int16(config.ParseInt(cfg.Value(config.KeyShareStateReplicationFactor))),
		StateMinISR:      int16(config.ParseInt(cfg.Value(config.KeyShareStateMinISR))),
		Timeout:          max(b.env.GatherTimeout, 5*time.Second),
		Send: func(ctx context.Context, broker int32, req kmsg.Request, version int16) (kmsg.Response, error) {
			addr, ok := view.Load().Addr(broker, listener)
			if !ok {
				return nil, fmt.Errorf("actors: broker %d has no %s endpoint in the cluster view", broker, listener)
			}
			return peers.Send(ctx, addr, interbroker.Pin(req, version))
		},
	}
}
