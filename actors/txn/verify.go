package txn

import (
	"context"
	"errors"
	"sync"
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
		c.batcher.add(c.RemoteVerify, leader, remoteAsk{id: id, pid: pid, epoch: epoch, tp: tp, done: done})
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

// remoteAsk is one verification for a coordinator on another broker.
type remoteAsk struct {
	id    string
	pid   int64
	epoch int16
	tp    TopicPartition
	done  func(kerr.Code)
}

// verifyBatcher sends the verifications for other brokers' coordinators
// as Kafka's AddPartitionsToTxnManager does: one AddPartitionsToTxn in
// flight per broker, the verifications asked meanwhile gathered into the
// next (a transactional id once, with every partition asked for it).
type verifyBatcher struct {
	mu sync.Mutex
	by map[int32]*verifyQueue
}

type verifyQueue struct {
	busy    bool
	pending []remoteAsk
}

func (b *verifyBatcher) add(send RemoteVerify, broker int32, ask remoteAsk) {
	var refused []func()
	defer func() {
		for _, f := range refused {
			f()
		}
	}()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.by == nil {
		b.by = map[int32]*verifyQueue{}
	}
	q := b.by[broker]
	if q == nil {
		q = &verifyQueue{}
		b.by[broker] = q
	}
	// One transactional id goes at one producer id and epoch (Kafka's
	// addTxnData): an older epoch than one waiting is refused at once; a
	// newer one (or another producer id at the same epoch) replaces the
	// waiting asks, which are refused.
	kept := q.pending[:0]
	for _, w := range q.pending {
		if w.id != ask.id || (w.pid == ask.pid && w.epoch == ask.epoch) {
			kept = append(kept, w)
			continue
		}
		if ask.epoch < w.epoch {
			q.pending = append(kept, q.pending[len(kept):]...)
			refused = append(refused, func() { ask.done(kerr.InvalidProducerEpoch) })
			return
		}
		code := kerr.NetworkException
		if w.epoch < ask.epoch {
			code = kerr.InvalidProducerEpoch
		}
		refused = append(refused, func() { w.done(code) })
	}
	clear(q.pending[len(kept):])
	q.pending = append(kept, ask)
	if !q.busy {
		q.busy = true
		go b.drain(send, broker, q)
	}
}

// drain sends broker's queue, one request at a time, until it is empty.
func (b *verifyBatcher) drain(send RemoteVerify, broker int32, q *verifyQueue) {
	for {
		b.mu.Lock()
		asks := q.pending
		q.pending = nil
		if len(asks) == 0 {
			q.busy = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		verifyRemote(send, broker, asks)
	}
}

// verifyRemote asks broker, the coordinator's, about asks (at most one
// producer id and epoch per transactional id: add sees to it) with one
// AddPartitionsToTxn v4 VerifyOnly, and answers each.
func verifyRemote(send RemoteVerify, broker int32, asks []remoteAsk) {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	byID := map[string]int{} // index in req.Transactions
	for _, a := range asks {
		i, seen := byID[a.id]
		if !seen {
			t := kmsg.NewAddPartitionsToTxnRequestTransaction()
			t.TransactionalID, t.ProducerID, t.ProducerEpoch, t.VerifyOnly = a.id, a.pid, a.epoch, true
			i = len(req.Transactions)
			byID[a.id] = i
			req.Transactions = append(req.Transactions, t)
		}
		t := &req.Transactions[i]
		if n := len(t.Topics); n > 0 && t.Topics[n-1].Topic == a.tp.Topic {
			t.Topics[n-1].Partitions = append(t.Topics[n-1].Partitions, a.tp.Partition)
		} else {
			rt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
			rt.Topic, rt.Partitions = a.tp.Topic, []int32{a.tp.Partition}
			t.Topics = append(t.Topics, rt)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), verifyTimeout)
	defer cancel()
	resp, err := send(ctx, broker, req)
	for _, a := range asks {
		switch {
		case errors.Is(err, ErrVerifyUnsupported):
			a.done(kerr.None)
		case err != nil:
			a.done(kerr.NetworkException)
		default:
			a.done(verifyAnswer(resp, a.id, a.tp))
		}
	}
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
