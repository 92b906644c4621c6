package txn

import "github.com/samsa-io/samsa/wire/kerr"

// EndTxn answers EndTxn: an open transaction is prepared to commit or
// abort (one record), the producer is answered once that is durable, and
// the markers go out; a retry of an end already done succeeds again.
func (c *Core) EndTxn(in EndTxn, now int64) Effects {
	c.begin()
	if code := c.check(in.TransactionalID, in.ProducerID, in.ProducerEpoch, true); code != kerr.None {
		c.reply(in.Ref, code)
		return c.end()
	}
	t := c.txns[in.TransactionalID]
	switch t.state {
	case Ongoing:
		to := t.record
		to.state, to.updateMs = PrepareAbort, now
		if in.Commit {
			to.state = PrepareCommit
		}
		c.write(t, transit{to: to, prevPID: t.prevPID, lastEpoch: t.lastEpoch, kind: transitPrepare, ref: in.Ref})
	case CompleteCommit:
		c.reply(in.Ref, okIf(in.Commit))
	case CompleteAbort:
		c.reply(in.Ref, okIf(!in.Commit))
	case PrepareCommit:
		c.reply(in.Ref, concurrentIf(in.Commit))
	case PrepareAbort:
		c.reply(in.Ref, concurrentIf(!in.Commit))
	default: // Empty: nothing to end
		c.reply(in.Ref, kerr.InvalidTxnState)
	}
	return c.end()
}

func okIf(same bool) kerr.Code {
	if same {
		return kerr.None
	}
	return kerr.InvalidTxnState
}

func concurrentIf(same bool) kerr.Code {
	if same {
		return kerr.ConcurrentTransactions
	}
	return kerr.InvalidTxnState
}

// MarkersWritten reports that every partition of the prepared
// transaction (id at pid and epoch) has its marker: the transaction is
// complete, which is one more record. A report for anything else (a
// transaction since fenced or completed) is ignored.
func (c *Core) MarkersWritten(id string, pid int64, epoch int16, now int64) Effects {
	c.begin()
	t := c.txns[id]
	if t != nil && t.pid == pid && t.epoch == epoch && t.pending == nil &&
		(t.state == PrepareCommit || t.state == PrepareAbort) {
		c.complete(t, now)
	}
	return c.end()
}

func (c *Core) complete(t *txn, now int64) {
	t.completeDue = false
	to := t.record
	to.state, to.parts, to.updateMs = CompleteAbort, nil, now
	if t.state == PrepareCommit {
		to.state = CompleteCommit
	}
	c.write(t, transit{to: to, prevPID: t.prevPID, lastEpoch: t.lastEpoch, kind: transitComplete})
}
