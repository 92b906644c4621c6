package txn

import "github.com/samsa-io/samsa/wire/kerr"

// AddPartitions answers AddPartitionsToTxn (and AddOffsetsToTxn, whose
// one partition is the group's __consumer_offsets partition): the
// partitions join the transaction, opening it if none is open.
func (c *Core) AddPartitions(in AddPartitions, now int64) Effects {
	c.begin()
	if code := c.check(in.TransactionalID, in.ProducerID, in.ProducerEpoch, true); code != kerr.None {
		c.reply(in.Ref, code)
		return c.end()
	}
	t := c.txns[in.TransactionalID]
	switch t.state {
	case PrepareCommit, PrepareAbort:
		c.reply(in.Ref, kerr.ConcurrentTransactions)
		return c.end()
	case Ongoing:
		sorted := union(nil, in.Partitions)
		if contains(t.parts, sorted) {
			c.reply(in.Ref, kerr.None)
			return c.end()
		}
	}
	to := t.record
	if t.state != Ongoing {
		to.startMs, to.parts = now, nil
	}
	to.state, to.parts, to.updateMs = Ongoing, union(to.parts, in.Partitions), now
	c.write(t, transit{to: to, prevPID: t.prevPID, lastEpoch: t.lastEpoch, kind: transitAdd, ref: in.Ref})
	return c.end()
}

// check is the producer's identity check every request after
// InitProducerId makes: the id must be known at this producer id, the
// epoch current, and no write in flight.
func (c *Core) check(id string, pid int64, epoch int16, exactEpoch bool) kerr.Code {
	t := c.txns[id]
	switch {
	case t == nil || t.pid != pid:
		return kerr.InvalidProducerIDMapping
	case epoch < t.epoch || (exactEpoch && epoch != t.epoch):
		return kerr.ProducerFenced
	case t.pending != nil:
		return kerr.ConcurrentTransactions
	}
	return kerr.None
}
