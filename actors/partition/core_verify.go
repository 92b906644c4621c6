package partition

import (
	"fmt"

	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// KIP-890 part 1 (Kafka 3.9's transaction verification): a transactional
// batch that would open its producer's transaction on this partition is
// appended only after the transaction's coordinator said the partition
// is in the transaction open at that producer id and epoch. Without it a
// late batch (a retry of the previous transaction's, or one the producer
// sent before its AddPartitionsToTxn was done) would open a transaction
// no coordinator knows of, which no marker would ever end: the last
// stable offset would stop there for good.
//
// The leader keeps a guard per producer (Kafka's VerificationStateEntry)
// from the moment it asks until the batch is appended: any transactional
// batch or marker of the producer appended meanwhile clears it, so a
// verification answered for a transaction that has since ended (a
// marker came first) does not let the batch in (Kafka's ABA case). A
// batch whose producer already has its transaction open here is not
// verified: the coordinator knew of the partition when it opened. A
// coordinator's transactional batch (TxnOffsetCommit's offsets, which
// carry the transactional id) is verified like a client's, as Kafka's
// group coordinator does; its other appends carry none.

// VerifyNeed asks the shell to have the coordinator of TransactionalID
// verify the batch: then to give it to Produce again with Guard set, or,
// on an error, to answer Ticket with VerificationError's code.
type VerifyNeed struct {
	Ticket          Ticket
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Guard           uint64
}

// verification is one producer's guard and the lowest sequence asked
// for under it: a batch past that sequence is refused until the lower
// one is in (a retried lower batch must not find a higher one appended
// first, which would fail it OUT_OF_ORDER_SEQUENCE_NUMBER for ever).
type verification struct {
	guard     uint64
	lowestSeq int32
	epoch     int16
	createdMs int64
}

// verifyState is the guards by producer id.
type verifyState struct {
	last uint64 // the last guard given
	by   map[int64]*verification
}

func (s *verifyState) clear(pid int64) { delete(s.by, pid) }

// start returns pid's guard, made now if it has none (Kafka's
// maybeCreateVerificationStateEntry).
func (s *verifyState) start(pid int64, seq int32, epoch int16, nowMs int64) *verification {
	if e := s.by[pid]; e != nil {
		switch {
		case epoch > e.epoch:
			e.epoch, e.lowestSeq = epoch, seq
		case epoch == e.epoch && seq < e.lowestSeq:
			e.lowestSeq = seq
		}
		return e
	}
	if s.by == nil {
		s.by = map[int64]*verification{}
	}
	s.last++
	e := &verification{guard: s.last, lowestSeq: seq, epoch: epoch, createdMs: nowMs}
	s.by[pid] = e
	return e
}

// Guards is how many producers have a verification outstanding.
func (c *Core) Guards() int { return len(c.verifying.by) }

// verifyTxn decides whether p's batch (header h) needs verifying first
// (need), may be appended (nil, NONE), or is refused (the code).
func (c *Core) verifyTxn(p Produce, h *wire.BatchHeader, nowMs int64) (*VerifyNeed, kerr.Code, string) {
	if !p.Verify || p.TransactionalID == "" || !h.IsTransactional() || h.IsControl() || h.ProducerID < 0 {
		return nil, kerr.None, ""
	}
	if pr, ok := c.producers.Producer(h.ProducerID); ok && pr.TxnFirstOffset >= 0 {
		return nil, kerr.None, "" // open here already, so the coordinator has the partition
	}
	if p.Guard == 0 {
		e := c.verifying.start(h.ProducerID, h.BaseSequence, h.ProducerEpoch, nowMs)
		return &VerifyNeed{Ticket: p.Ticket, TransactionalID: p.TransactionalID, ProducerID: h.ProducerID,
			ProducerEpoch: h.ProducerEpoch, Guard: e.guard}, kerr.None, ""
	}
	e := c.verifying.by[h.ProducerID]
	if e == nil || e.guard != p.Guard {
		return nil, kerr.InvalidTxnState, "Record was not part of an ongoing transaction"
	}
	if h.BaseSequence > e.lowestSeq {
		return nil, kerr.OutOfOrderSequenceNumber, fmt.Sprintf("Out of order sequence number for producer %d: %d (incoming seq. number), %d (earliest seen sequence)",
			h.ProducerID, h.BaseSequence, e.lowestSeq)
	}
	return nil, kerr.None, ""
}

// VerificationError is what a producer is answered when the coordinator
// did not verify its batch with code, as Kafka 3.9's leader answers
// (AddPartitionsToTxnManager, then ReplicaManager): PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH; a partition not in the transaction is
// TRANSACTION_ABORTABLE for Produce v11+ and INVALID_TXN_STATE before;
// a coordinator that could not answer is NOT_ENOUGH_REPLICAS, which
// every client retries without refreshing its metadata.
func VerificationError(code kerr.Code, produceVersion int16) (kerr.Code, string) {
	switch code {
	case kerr.ProducerFenced:
		return kerr.InvalidProducerEpoch, "the producer's epoch is fenced by a newer one"
	case kerr.TransactionAbortable:
		if produceVersion > 10 {
			return code, "Partition was not added to the transaction"
		}
		return kerr.InvalidTxnState, "Partition was not added to the transaction"
	case kerr.InvalidTxnState:
		return code, "Partition was not added to the transaction"
	case kerr.ConcurrentTransactions, kerr.NetworkException, kerr.CoordinatorLoadInProgress,
		kerr.CoordinatorNotAvailable, kerr.NotCoordinator, kerr.RequestTimedOut:
		return kerr.NotEnoughReplicas, "Unable to verify the partition has been added to the transaction. Underlying error: " + code.String()
	}
	return code, ""
}

// ExpireProducers forgets producers silent for maxAgeMs
// (producer.id.expiration.ms) that have no transaction open here, and
// verifications outstanding as long (Kafka's removeExpiredProducers); it
// also sets the age later snapshots expire at. It returns how many
// producers it forgot.
func (c *Core) ExpireProducers(nowMs, maxAgeMs int64) int {
	if maxAgeMs > 0 {
		c.expireMs = maxAgeMs
	}
	return c.expire(nowMs)
}

func (c *Core) expire(nowMs int64) int {
	age := c.expireMs
	if age <= 0 {
		age = ProducerIDExpirationMs
	}
	c.lastExpiryMs = nowMs
	for pid, e := range c.verifying.by {
		if nowMs-e.createdMs >= age {
			delete(c.verifying.by, pid)
		}
	}
	return c.producers.Expire(nowMs, age)
}
