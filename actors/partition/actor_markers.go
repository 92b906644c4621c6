package partition

import "github.com/samsa-io/samsa/wire/kerr"

// writeMarker appends a transaction marker for the coordinator, as
// produce appends a batch: the core checks it against the producer state,
// an ABORT's aborted-transaction entry is made durable first, then the
// control batch is appended and answered once the ISR has it.
func (p *partitionActor) writeMarker(m *WriteMarker) {
	refuse := func(code kerr.Code) {
		m.Out.ErrorCode = int16(code)
		m.Reply.Put(0)
	}
	if p.plog == nil || p.core == nil {
		refuse(p.offline())
		return
	}
	if p.spec.Follower {
		refuse(kerr.NotLeaderOrFollower)
		return
	}
	now := p.nowMs()
	a, entry, fx := p.core.Marker(MarkerWrite{ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch,
		Commit: m.Commit, CoordinatorEpoch: m.CoordinatorEpoch, Ticket: m}, now, p.logState())
	p.carry(fx)
	if a == nil {
		return
	}
	if entry != nil {
		if err := p.plog.AddAbortedTxn(*entry); err != nil {
			p.log.Error("aborted transaction not indexed; marker refused", append(p.attrs(), "producer_id", m.ProducerID, "err", err)...)
			refuse(kerr.KafkaStorageError)
			return
		}
	}
	res, err := p.plog.Append(a.Records, p.spec.LeaderEpoch, now)
	p.carry(p.core.Appended(a, res, err, now, p.logState()))
	p.wakeReplicas()
}
