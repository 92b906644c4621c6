package txn

// Tick runs the coordinator's periodic work at now (the shell calls it
// every transaction.abort.timed.out.transaction.cleanup.interval.ms,
// Kafka's default 10 s): transactions open longer than their timeout are
// aborted at a bumped epoch (fencing their producer), Complete records
// that failed are written again, and ids idle past
// transactional.id.expiration.ms are forgotten (a tombstone).
func (c *Core) Tick(now int64) Effects {
	c.begin()
	c.expireParked(now)
	for _, id := range c.sortedIDs() {
		t := c.txns[id]
		if t.pending != nil {
			continue
		}
		switch t.state {
		case Ongoing:
			if t.startMs >= 0 && now > t.startMs+int64(t.timeoutMs) {
				c.fenceAndAbort(t, now)
			}
		case PrepareCommit, PrepareAbort:
			if t.completeDue {
				c.complete(t, now)
			}
		case Empty, CompleteCommit, CompleteAbort:
			if c.cfg.IDExpirationMs > 0 && now >= t.updateMs+c.cfg.IDExpirationMs {
				c.write(t, transit{to: t.record, prevPID: t.prevPID, lastEpoch: t.lastEpoch, kind: transitExpire})
			}
		}
	}
	return c.end()
}
