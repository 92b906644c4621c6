package partition

import (
	"fmt"

	"github.com/samsa-io/samsa/actors/idempotence"
	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Transactions on the partition: a producer's transactional batches open
// its transaction (the producer state records where), the coordinator's
// marker (WriteTxnMarkers) ends it, and the last stable offset, the end
// of what read_committed consumers may read, stops at the oldest open
// transaction's first offset.

// MarkerWrite is one partition's part of WriteTxnMarkers: end producer
// ProducerID's transaction at ProducerEpoch with a COMMIT or ABORT
// marker, for the coordinator at CoordinatorEpoch.
type MarkerWrite struct {
	ProducerID       int64
	ProducerEpoch    int16
	Commit           bool
	CoordinatorEpoch int32
	Ticket           Ticket
}

// endedTxn is a transaction whose marker is in the log but not yet
// below the high watermark: until it is, the transaction is undecided
// for readers (Kafka's unreplicated transactions), so the last stable
// offset cannot pass its first offset, and a new leader that lacks the
// marker never shows read_committed readers less than they saw.
type endedTxn struct{ first, marker int64 }

// LastStableOffset is the end of what read_committed readers may see:
// the high watermark, or the first offset of the oldest transaction that
// is open or whose marker the high watermark has not passed, when that is
// lower. (It forgets the ended transactions the high watermark passed.)
func (c *Core) LastStableOffset() int64 {
	lso := c.hw
	if first, ok := c.producers.FirstUnstableOffset(); ok && first < lso {
		lso = first
	}
	kept := c.ended[:0]
	for _, e := range c.ended {
		if e.marker >= c.hw {
			kept = append(kept, e)
			lso = min(lso, e.first)
		}
	}
	c.ended = kept
	return lso
}

// Marker checks a marker against the producer state and returns the
// Append of its control batch and, for an ABORT that ends an open
// transaction, the aborted-transaction entry the shell must write before
// appending (segment.Log.AddAbortedTxn). Like acks=all, it is answered
// once the ISR has it. A refused marker is answered at once.
func (c *Core) Marker(m MarkerWrite, nowMs int64, log LogState) (*Append, *segment.AbortedTxn, Effects) {
	var fx Effects
	if isr := c.isrSize(); isr < c.rules.MinInsync {
		c.answer(&fx, Ack{Ticket: m.Ticket}, kerr.NotEnoughReplicas,
			fmt.Sprintf("a transaction marker needs min.insync.replicas=%d in sync; the ISR has %d", c.rules.MinInsync, isr))
		return nil, nil, fx
	}
	marker := idempotence.Marker{Commit: m.Commit, CoordinatorEpoch: m.CoordinatorEpoch}
	if chk := c.producers.CheckMarker(m.ProducerID, m.ProducerEpoch, marker); chk.Verdict == idempotence.Reject {
		c.answer(&fx, Ack{Ticket: m.Ticket}, kerr.Code(chk.Code), chk.Reason)
		return nil, nil, fx
	}
	batch := idempotence.MarkerBatch(m.ProducerID, m.ProducerEpoch, marker, nowMs)
	h, err := wire.ParseBatchHeader(batch)
	if err != nil {
		panic("partition: a marker batch that does not parse: " + err.Error())
	}
	a := &Append{Records: batch, header: h, ticket: m.Ticket, all: true, marker: &marker}
	var entry *segment.AbortedTxn
	if e, ok := c.abortedEntry(m.ProducerID, marker, log.End); ok {
		entry = &e
	}
	return a, entry, fx
}

// recordAppended updates the producer state for a batch appended at
// first (timestamp ts): a marker ends its producer's transaction, and
// reports whether one ended (the last stable offset may have moved).
func (c *Core) recordAppended(h *wire.BatchHeader, marker *idempotence.Marker, first, ts int64) bool {
	if h.IsTransactional() {
		c.verifying.clear(h.ProducerID) // the transaction is open here now, or ended
	}
	if marker != nil {
		done, ended := c.producers.RecordMarker(h.ProducerID, h.ProducerEpoch, *marker, first, ts)
		if ended {
			c.ended = append(c.ended, endedTxn{first: done.FirstOffset, marker: first})
		}
		return ended
	}
	c.producers.Record(h, first, ts)
	return false
}

// replicatedBatch updates the producer state for a batch a follower
// appended (whole, at its leader's offsets): a marker ends its producer's
// transaction, and an ABORT's aborted-transaction entry goes to the
// shell to write (after the append: a crash between the two leaves a
// marker the next open's replay finds and indexes again).
func (c *Core) replicatedBatch(h *wire.BatchHeader, batch []byte, fx *Effects) {
	if !h.IsControl() {
		c.producers.Record(h, h.BaseOffset, h.MaxTimestamp)
		return
	}
	m, err := idempotence.ParseMarker(batch)
	if err != nil {
		fx.Problem = &Problem{Msg: fmt.Sprintf("replicated control batch at offset %d is not a transaction marker; ignored", h.BaseOffset), Err: err}
		return
	}
	if a, ok := c.abortedEntry(h.ProducerID, m, h.BaseOffset); ok {
		fx.AbortedTxns = append(fx.AbortedTxns, a)
	}
	c.recordAppended(h, &m, h.BaseOffset, h.MaxTimestamp)
}

// abortedEntry is the aborted-transaction entry of an ABORT marker for
// pid at offset, if it ends an open transaction.
func (c *Core) abortedEntry(pid int64, m idempotence.Marker, offset int64) (segment.AbortedTxn, bool) {
	return AbortedEntry(c.producers, pid, m, offset)
}

// AbortedEntry is the aborted-transaction entry an ABORT marker for pid
// at offset makes, given the producer state before the marker: none for
// a COMMIT or when pid has no transaction open. Its stable offset is the
// oldest other open transaction's first offset, or the marker's next.
func AbortedEntry(producers *idempotence.State, pid int64, m idempotence.Marker, offset int64) (segment.AbortedTxn, bool) {
	p, ok := producers.Producer(pid)
	if !ok || p.TxnFirstOffset < 0 || m.Commit {
		return segment.AbortedTxn{}, false
	}
	stable := offset + 1
	if first, ok := producers.FirstUnstableOffsetWithout(pid); ok {
		stable = first
	}
	return segment.AbortedTxn{ProducerID: pid, FirstOffset: p.TxnFirstOffset, LastOffset: offset, LastStableOffset: stable}, true
}
