package txn

import "github.com/samsa-io/samsa/wire/kerr"

// Appended reports the outcome of an Append: err is None once the record
// is durable, or the partition's error. Success applies the transition
// and does what it was for (answer the producer, send markers, forget an
// expired id); failure leaves the state as it was and answers with the
// error Kafka maps the append's to.
func (c *Core) Appended(token uint64, err kerr.Code, now int64) Effects {
	c.begin()
	t := c.open[token]
	if t == nil || t.pending == nil || t.pending.token != token {
		return c.end()
	}
	delete(c.open, token)
	p := t.pending
	t.pending = nil
	if err != kerr.None {
		c.failed(t, p, err)
		c.resume(t.id, now) // requests that waited for this write
		return c.end()
	}
	t.record, t.prevPID, t.lastEpoch = p.to, p.prevPID, p.lastEpoch
	switch p.kind {
	case transitInit:
		c.fx.Replies = append(c.fx.Replies, Reply{Ref: p.ref, ProducerID: t.pid, ProducerEpoch: t.epoch})
	case transitAdd:
		c.reply(p.ref, kerr.None)
	case transitPrepare:
		c.reply(p.ref, kerr.None)
		c.sendMarkers(t)
	case transitFence:
		t.fenceFailed = false
		c.sendMarkers(t)
	case transitExpire:
		delete(c.txns, t.id)
	}
	c.resume(t.id, now) // requests that waited for this write
	return c.end()
}

func (c *Core) failed(t *txn, p *transit, err kerr.Code) {
	switch p.kind {
	case transitFence:
		t.fenceFailed = true // the bumped epoch stays; the next abort try keeps it
	case transitComplete:
		t.completeDue = true // the markers are out; only the record is missing
	}
	if p.ref != nil {
		c.reply(p.ref, appendError(err))
	}
	if t.epoch < 0 && t.state == Empty && p.kind == transitInit {
		// A new id whose first record failed: forget it, as if never asked.
		delete(c.txns, t.id)
	}
}

// appendError is the error a producer gets when its transaction's record
// could not be written: Kafka's mapping, so that clients retry where the
// coordinator may come back or move.
func appendError(err kerr.Code) kerr.Code {
	switch err {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut:
		return kerr.CoordinatorNotAvailable
	case kerr.NotLeaderOrFollower, kerr.KafkaStorageError:
		return kerr.NotCoordinator
	}
	return kerr.UnknownServerError
}
