package txn

import "github.com/samsa-io/samsa/wire/kerr"

// AddPartitions answers AddPartitionsToTxn (and AddOffsetsToTxn, whose
// one partition is the group's __consumer_offsets partition): the
// partitions join the transaction, opening it if none is open.
//
// A request that finds the previous transaction still completing (its
// markers or complete record in flight) or another write of the id out
// waits for it, up to ParkMaxMs, instead of being answered
// CONCURRENT_TRANSACTIONS at once as Kafka answers it: the client would
// retry only after its backoff (20 ms in franz-go and Java), and with
// durable markers the previous transaction usually completes well
// within that. Past ParkMaxMs it gets CONCURRENT_TRANSACTIONS, as from
// Kafka.
func (c *Core) AddPartitions(in AddPartitions, now int64) Effects {
	c.begin()
	c.addPartitions(in, now, now)
	return c.end()
}

// addPartitions is AddPartitions for a request that arrived at at.
func (c *Core) addPartitions(in AddPartitions, now, at int64) {
	code := c.check(in.TransactionalID, in.ProducerID, in.ProducerEpoch, true)
	if code == kerr.ConcurrentTransactions {
		c.park(in, at)
		return
	}
	if code != kerr.None {
		c.reply(in.Ref, code)
		return
	}
	t := c.txns[in.TransactionalID]
	switch t.state {
	case PrepareCommit, PrepareAbort:
		c.park(in, at)
		return
	case Ongoing:
		sorted := union(nil, in.Partitions)
		if contains(t.parts, sorted) {
			c.reply(in.Ref, kerr.None)
			return
		}
	}
	to := t.record
	if t.state != Ongoing {
		to.startMs, to.parts = now, nil
	}
	to.state, to.parts, to.updateMs = Ongoing, union(to.parts, in.Partitions), now
	c.write(t, transit{to: to, prevPID: t.prevPID, lastEpoch: t.lastEpoch, kind: transitAdd, ref: in.Ref})
}

// ParkMaxMs is how long an AddPartitionsToTxn waits for the previous
// transaction of its id to complete before it is answered
// CONCURRENT_TRANSACTIONS: well under any client's request timeout.
const ParkMaxMs = 1000

// parkedAdd is an AddPartitionsToTxn waiting for its id's transaction
// to complete.
type parkedAdd struct {
	in AddPartitions
	at int64
}

func (c *Core) park(in AddPartitions, at int64) {
	c.parked[in.TransactionalID] = append(c.parked[in.TransactionalID], parkedAdd{in: in, at: at})
	c.fx.RecheckMs = ParkMaxMs
}

// resume runs again, in arrival order, the requests parked on id once
// nothing of it is in flight any more. The first may start a write; the
// others then park again behind it, keeping their order and their
// arrival time.
func (c *Core) resume(id string, now int64) {
	waiting := c.parked[id]
	if len(waiting) == 0 {
		return
	}
	if t := c.txns[id]; t != nil && (t.pending != nil || t.state == PrepareCommit || t.state == PrepareAbort) {
		return
	}
	delete(c.parked, id)
	for _, w := range waiting {
		c.addPartitions(w.in, now, w.at)
	}
}

// expireParked answers CONCURRENT_TRANSACTIONS to the requests that
// waited ParkMaxMs, and asks to be called again while any still wait.
func (c *Core) expireParked(now int64) {
	for _, id := range sortedKeys(c.parked) {
		kept := c.parked[id][:0]
		for _, w := range c.parked[id] {
			if now-w.at >= ParkMaxMs {
				c.reply(w.in.Ref, kerr.ConcurrentTransactions)
			} else {
				kept = append(kept, w)
			}
		}
		if len(kept) == 0 {
			delete(c.parked, id)
			continue
		}
		c.parked[id] = kept
		c.fx.RecheckMs = ParkMaxMs
	}
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
