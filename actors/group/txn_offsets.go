package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// Transactional offset commits (TxnOffsetCommit, Kafka's exactly-once
// consume-transform-produce): the offsets are appended to the group's
// partition as a transactional batch of the producer's, and wait there,
// invisible to OffsetFetch, until the transaction's marker reaches the
// partition; a COMMIT makes them the group's committed offsets, an ABORT
// drops them (CompleteTxn). Until then an OffsetFetch that requires
// stable offsets gets UNSTABLE_OFFSET_COMMIT for them.

// TxnOffsetCommit handles a TxnOffsetCommit (v0-v3). From v3 the member
// and generation are checked like OffsetCommit's (a generation of -1, or
// no member id, skips the check, as Kafka does); a group that does not
// exist is made (Empty).
func (g *Group) TxnOffsetCommit(t Ticket, req *kmsg.TxnOffsetCommitRequest, now time.Time) Effects {
	g.begin()
	code := g.validateTxnCommit(req)
	if code != kerr.None {
		g.reply(t, txnCommitResponse(req, func(string, int32) kerr.Code { return code }))
		return g.end()
	}
	codes := map[topicPartition]kerr.Code{}
	values := map[topicPartition]OffsetValue{}
	var recs []Record
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			tp := topicPartition{rt.Topic, rp.Partition}
			epoch := int32(-1)
			if req.Version >= 2 {
				epoch = rp.LeaderEpoch
			}
			ov, rec, code := g.offsetRecord(tp, rp.Offset, epoch, rp.Metadata, now, -1)
			if code == kerr.None {
				values[tp] = ov
				recs = append(recs, rec)
			}
			codes[tp] = code
		}
	}
	if len(recs) == 0 {
		g.reply(t, txnCommitResponse(req, func(topic string, p int32) kerr.Code { return codes[topicPartition{topic, p}] }))
		return g.end()
	}
	pid := req.ProducerID
	g.nextToken++
	token := g.nextToken
	g.appends[token] = func(code kerr.Code, _ time.Time) {
		for tp, ov := range values {
			if code != kerr.None {
				codes[tp] = offsetAppendError(code)
				continue
			}
			if g.txnOffsets[pid] == nil {
				g.txnOffsets[pid] = map[topicPartition]OffsetValue{}
			}
			g.txnOffsets[pid][tp] = ov
		}
		g.reply(t, txnCommitResponse(req, func(topic string, p int32) kerr.Code { return codes[topicPartition{topic, p}] }))
	}
	g.fx.Appends = append(g.fx.Appends, Append{Group: g.id, Token: token, Records: recs,
		Txn: &TxnProducer{ProducerID: pid, ProducerEpoch: req.ProducerEpoch, TransactionalID: req.TransactionalID}})
	return g.end()
}

// TxnProducer marks an Append as a transaction's: the shell writes the
// records as a transactional batch of this producer (no sequence: the
// coordinator writes it, not the producer).
type TxnProducer struct {
	ProducerID    int64
	ProducerEpoch int16
	// TransactionalID is the request's: the partition verifies the batch
	// with its coordinator (KIP-890) when it opens the transaction there.
	TransactionalID string
}

func (g *Group) validateTxnCommit(req *kmsg.TxnOffsetCommitRequest) kerr.Code {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable
	}
	if req.Version < 3 {
		return kerr.None
	}
	if g.fenced(req.InstanceID, req.MemberID) {
		return kerr.FencedInstanceID
	}
	if req.MemberID != "" && g.get(req.MemberID) == nil {
		return kerr.UnknownMemberID
	}
	if req.Generation >= 0 && req.Generation != g.generation {
		return kerr.IllegalGeneration
	}
	return kerr.None
}

// CompleteTxn applies a transaction's marker: producer pid's pending
// offsets become the committed ones (commit) or are dropped.
func (g *Group) CompleteTxn(pid int64, commit bool) {
	pending, ok := g.txnOffsets[pid]
	if !ok {
		return
	}
	delete(g.txnOffsets, pid)
	if !commit || g.state == Dead {
		return
	}
	for tp, ov := range pending {
		g.offsets[tp] = ov
	}
}

// unstable reports whether a transaction's offset for tp awaits its
// marker.
func (g *Group) unstable(tp topicPartition) bool {
	for _, pending := range g.txnOffsets {
		if _, ok := pending[tp]; ok {
			return true
		}
	}
	return false
}

// ReplayTxn applies one offset record of producer pid's transaction, read
// back from the log: pending until ReplayMarker.
func (g *Group) ReplayTxn(pid int64, key Key, value []byte) error {
	if key.Group != g.id {
		return ErrWrongGroup
	}
	if key.Kind != KeyOffset || value == nil {
		return g.Replay(key, value) // not an offset: applied as it is
	}
	ov, err := DecodeOffsetValue(value)
	if err != nil {
		return err
	}
	if g.txnOffsets[pid] == nil {
		g.txnOffsets[pid] = map[topicPartition]OffsetValue{}
	}
	g.txnOffsets[pid][topicPartition{key.Topic, key.Partition}] = ov
	return nil
}

func txnCommitResponse(req *kmsg.TxnOffsetCommitRequest, code func(topic string, partition int32) kerr.Code) *kmsg.TxnOffsetCommitResponse {
	r := kmsg.NewPtrTxnOffsetCommitResponse()
	r.Version = req.Version
	for _, rt := range req.Topics {
		t := kmsg.NewTxnOffsetCommitResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			p.Partition, p.ErrorCode = rp.Partition, int16(code(rt.Topic, rp.Partition))
			t.Partitions = append(t.Partitions, p)
		}
		r.Topics = append(r.Topics, t)
	}
	return r
}
