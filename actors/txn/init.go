package txn

import (
	"math"

	"github.com/samsa-io/samsa/wire/kerr"
)

// epochExhausted is Kafka's rule: an epoch this high cannot be bumped
// again, so the next bump moves the producer to a new producer id.
func epochExhausted(e int16) bool { return e >= math.MaxInt16-1 }

// InitProducerID answers InitProducerId for a transactional id, as Kafka
// does: a new id gets a producer id at epoch 0; a known one gets its
// epoch bumped (fencing any older producer of the id), or a new producer
// id once the epoch is exhausted; an id with a transaction open has it
// aborted first, the producer being told CONCURRENT_TRANSACTIONS until
// that is done.
func (c *Core) InitProducerID(in InitProducerID, now int64) Effects {
	c.begin()
	c.initProducerID(in, now)
	return c.end()
}

func (c *Core) initProducerID(in InitProducerID, now int64) {
	if in.TimeoutMs <= 0 || in.TimeoutMs > c.cfg.MaxTimeoutMs {
		c.reply(in.Ref, kerr.InvalidTransactionTimeout)
		return
	}
	t := c.txns[in.TransactionalID]
	if t == nil {
		if in.NewProducerID < 0 {
			c.fx.NeedProducerID = append(c.fx.NeedProducerID, in)
			return
		}
		// Kafka's putTransactionStateIfNotExists: known from now on, at
		// epoch -1 until the Empty record below is written.
		t = &txn{id: in.TransactionalID, prevPID: -1, lastEpoch: -1, record: record{
			pid: in.NewProducerID, epoch: -1, timeoutMs: in.TimeoutMs, state: Empty, startMs: -1, updateMs: now,
		}}
		c.txns[t.id] = t
		in.NewProducerID = -1 // used
	}
	if t.pending != nil {
		c.reply(in.Ref, kerr.ConcurrentTransactions)
		return
	}
	expected := in.ProducerID >= 0
	if expected && !t.mayBe(in.ProducerID, in.ProducerEpoch) {
		c.reply(in.Ref, kerr.ProducerFenced)
		return
	}
	switch t.state {
	case PrepareCommit, PrepareAbort:
		c.reply(in.Ref, kerr.ConcurrentTransactions)
	case Ongoing:
		// Fence the producer of the open transaction and abort it; the
		// new producer retries until the abort is complete.
		c.fenceAndAbort(t, now)
		c.reply(in.Ref, kerr.ConcurrentTransactions)
	case Empty, CompleteCommit, CompleteAbort:
		if epochExhausted(t.epoch) && (!expected || in.ProducerEpoch == t.epoch) {
			if in.NewProducerID < 0 {
				c.fx.NeedProducerID = append(c.fx.NeedProducerID, in)
				return
			}
			last := int16(-1)
			if expected {
				last = t.epoch
			}
			to := t.record
			to.pid, to.epoch, to.timeoutMs, to.state, to.parts, to.startMs, to.updateMs =
				in.NewProducerID, 0, in.TimeoutMs, Empty, nil, -1, now
			c.write(t, transit{to: to, prevPID: t.pid, lastEpoch: last, kind: transitInit, ref: in.Ref})
			return
		}
		epoch, last := t.epoch+1, int16(-1)
		if expected {
			switch {
			case t.epoch < 0 || in.ProducerEpoch == t.epoch:
				last = t.epoch
			case in.ProducerEpoch == t.lastEpoch:
				// A retry of a bump whose answer the producer lost: the
				// same id and epoch again.
				epoch, last = t.epoch, t.lastEpoch
			default:
				c.reply(in.Ref, kerr.ProducerFenced)
				return
			}
		}
		to := t.record
		to.epoch, to.timeoutMs, to.state, to.parts, to.startMs, to.updateMs = epoch, in.TimeoutMs, Empty, nil, -1, now
		c.write(t, transit{to: to, prevPID: t.prevPID, lastEpoch: last, kind: transitInit, ref: in.Ref})
	default: // Dead, PrepareEpochFence: never at rest
		c.reply(in.Ref, kerr.ConcurrentTransactions)
	}
}

// fenceAndAbort aborts t's open transaction at a bumped epoch, so the
// producer that opened it is fenced on every partition by the markers.
func (c *Core) fenceAndAbort(t *txn, now int64) {
	if !t.fenceFailed && t.epoch < math.MaxInt16 {
		t.epoch++ // in memory at once: the old producer is fenced even if the write fails
		t.lastEpoch = -1
	}
	to := t.record
	to.state, to.updateMs = PrepareAbort, now
	c.write(t, transit{to: to, prevPID: t.prevPID, lastEpoch: -1, kind: transitFence})
}

// mayBe is Kafka's isValidProducerId: whether a producer that says it is
// pid at epoch may be this id's producer. True when the id was just
// created, when pid is the current one (its epoch is checked next), or
// when pid is the one before a rotation and its epoch the exhausted one
// (a retry of the rotation whose answer was lost).
func (t *txn) mayBe(pid int64, epoch int16) bool {
	return t.epoch < 0 || pid == t.pid || (pid == t.prevPID && epochExhausted(epoch))
}
