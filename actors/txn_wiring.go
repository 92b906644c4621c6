package actors

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/actors/txn"
	"github.com/samsa-io/samsa/interbroker"
)

// txnLink is the partitions' link to the broker's transactions: the
// config layers the metadata actor publishes (static ones until then) and
// the verifier, set once the transaction coordinators exist.
func txnLink(cfg *config.Broker) *partition.TxnLink { return partition.NewTxnLink(cfg.Layers()) }

// remoteVerify is how a partition leader asks the transaction coordinator
// on another broker (AddPartitionsToTxn v4, VerifyOnly, over the
// inter-broker listener); nil alone. v4 is pinned: a lower version has no
// VerifyOnly and would add the partition instead; a peer without v4 is
// ErrVerifyUnsupported, and the batch goes unverified, as in Kafka.
func (b *Broker) remoteVerify() txn.RemoteVerify {
	if b.peers == nil || b.cluster == nil {
		return nil
	}
	listener := b.cfg.Cluster.InterBrokerListener
	return func(ctx context.Context, broker int32, req *kmsg.AddPartitionsToTxnRequest) (*kmsg.AddPartitionsToTxnResponse, error) {
		v := b.cluster.View.Load()
		if v == nil {
			return nil, errNoView
		}
		addr, ok := v.Addr(broker, listener)
		if !ok {
			return nil, fmt.Errorf("actors: broker %d has no %s endpoint in the cluster view", broker, listener)
		}
		resp, err := b.peers.Send(ctx, addr, interbroker.Pin(req, 4))
		if errors.Is(err, interbroker.ErrUnsupported) {
			return nil, txn.ErrVerifyUnsupported
		}
		if err != nil {
			return nil, err
		}
		return resp.(*kmsg.AddPartitionsToTxnResponse), nil
	}
}
