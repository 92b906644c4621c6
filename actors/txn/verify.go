package txn

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/wire/kerr"
)

// KIP-890 part 1 on the partition leader's side (Kafka's
// AddPartitionsToTxnManager): before a transactional batch opens its
// producer's transaction on a partition, the leader asks the
// transaction's coordinator whether the partition is in it. The
// coordinator is an actor here, or another broker's, asked with
// AddPartitionsToTxn v4 VerifyOnly.

// RemoteVerify sends an AddPartitionsToTxn (v4+, VerifyOnly) to another
// broker (cluster mode); nil when every coordinator is local.
type RemoteVerify func(ctx context.Context, broker int32, req *kmsg.AddPartitionsToTxnRequest) (*kmsg.AddPartitionsToTxnResponse, error)

// ErrVerifyUnsupported is what a RemoteVerify returns when the
// coordinator's broker does not serve AddPartitionsToTxn v4: Kafka then
// skips the verification (the partition appends as before KIP-890).
var ErrVerifyUnsupported = errors.New("txn: the coordinator's broker does not serve AddPartitionsToTxn v4")

// verifyTimeout bounds a remote verification; past it the leader answers
// as Kafka does for a network failure (the producer retries).
const verifyTimeout = 10 * time.Second

// Verify asks the coordinator of transactional id id whether partition
// tp is in the transaction open at producer pid and epoch, and calls
// done once with the coordinator's code for it (Core.Verify's, or
// COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS or NETWORK_EXCEPTION when it could not be
// asked). done runs on some other goroutine; Verify never blocks.
func (c *Coordinators) Verify(id string, pid int64, epoch int16, topic string, partition int32, done func(kerr.Code)) {
	tp := TopicPartition{Topic: topic, Partition: partition}
	local := func(n int32) {
		pids := c.PIDs()
		if int(n) >= len(pids) || pids[n] == nil {
			done(kerr.NotCoordinator)
			return
		}
		c.env.Send(pids[n], &Call{In: VerifyPartitions{TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch,
			Partitions: []TopicPartition{tp}, Answer: func(codes []kerr.Code) { done(codes[0]) }}})
	}
	if c.env.Cluster == nil {
		_, n, ok := c.Of(id)
		if !ok {
			done(kerr.CoordinatorNotAvailable)
			return
		}
		local(n)
		return
	}
	n, leader := coordinatorOf(c.env.Cluster.Load(), id)
	switch {
	case leader < 0:
		done(kerr.CoordinatorNotAvailable)
	case leader == c.env.BrokerID():
		local(n)
	case c.RemoteVerify == nil:
		done(kerr.CoordinatorNotAvailable)
	default:
		go func() { done(c.verifyRemote(leader, id, pid, epoch, tp)) }()
	}
}

// coordinatorOf is the __transaction_state partition of id and its
// leader in the cluster view (-1: none known).
func coordinatorOf(v *cluster.View, id string) (int32, int32) {
	if v == nil {
		return -1, -1
	}
	t := v.Topics[TransactionTopic]
	if t == nil || len(t.Partitions) == 0 {
		return -1, -1
	}
	n := PartitionFor(id, int32(len(t.Partitions)))
	p := t.Partition(n)
	if p == nil || p.Leader < 0 {
		return n, -1
	}
	return n, p.Leader
}

// verifyRemote asks broker, the coordinator's, with AddPartitionsToTxn
// v4 VerifyOnly, and maps its answer as Kafka's AddPartitionsToTxnManager
// does.
func (c *Coordinators) verifyRemote(broker int32, id string, pid int64, epoch int16, tp TopicPartition) kerr.Code {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	t := kmsg.NewAddPartitionsToTxnRequestTransaction()
	t.TransactionalID, t.ProducerID, t.ProducerEpoch, t.VerifyOnly = id, pid, epoch, true
	rt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
	rt.Topic, rt.Partitions = tp.Topic, []int32{tp.Partition}
	t.Topics = append(t.Topics, rt)
	req.Transactions = append(req.Transactions, t)
	ctx, cancel := context.WithTimeout(context.Background(), verifyTimeout)
	defer cancel()
	resp, err := c.RemoteVerify(ctx, broker, req)
	switch {
	case errors.Is(err, ErrVerifyUnsupported):
		return kerr.None
	case err != nil:
		return kerr.NetworkException
	}
	return verifyAnswer(resp, id, tp)
}

// verifyAnswer is tp's code in a VerifyOnly response: the top-level error
// if any (CLUSTER_AUTHORIZATION_FAILED becomes INVALID_TXN_STATE, as
// Kafka hides it from the producer), else the partition's; a response
// without the partition is a network failure (the producer retries).
func verifyAnswer(resp *kmsg.AddPartitionsToTxnResponse, id string, tp TopicPartition) kerr.Code {
	if code := kerr.Code(resp.ErrorCode); code != kerr.None {
		if code == kerr.ClusterAuthorizationFailed {
			return kerr.InvalidTxnState
		}
		return code
	}
	for _, t := range resp.Transactions {
		if t.TransactionalID != id {
			continue
		}
		for _, rt := range t.Topics {
			if rt.Topic != tp.Topic {
				continue
			}
			for _, p := range rt.Partitions {
				if p.Partition == tp.Partition {
					return kerr.Code(p.ErrorCode)
				}
			}
		}
	}
	return kerr.NetworkException
}

// sameCode is n copies of code.
func sameCode(n int, code kerr.Code) []kerr.Code {
	out := make([]kerr.Code, n)
	for i := range out {
		out[i] = code
	}
	return out
}
