package idempotence

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// Marker is what a transaction marker (a control batch's one record)
// says: Kafka's ControlRecordKey (version int16, type int16: 0 ABORT,
// 1 COMMIT) and EndTxnMarker value (version int16, coordinator epoch
// int32).
type Marker struct {
	Commit           bool
	CoordinatorEpoch int32
}

// ErrBadMarker reports a control batch whose record is not a marker this
// broker knows.
var ErrBadMarker = errors.New("idempotence: not a transaction marker")

// ParseMarker reads the marker of a whole control batch (validated).
func ParseMarker(batch []byte) (Marker, error) {
	it, _, err := wire.NewBatchRecordIter(batch, nil, 1<<10)
	if err != nil {
		return Marker{}, fmt.Errorf("%w: %v", ErrBadMarker, err)
	}
	var rec wire.Record
	if !it.Next(&rec) {
		return Marker{}, fmt.Errorf("%w: no record (%v)", ErrBadMarker, it.Err())
	}
	be := binary.BigEndian
	if len(rec.Key) < 4 || len(rec.Value) < 6 {
		return Marker{}, fmt.Errorf("%w: key of %d bytes, value of %d", ErrBadMarker, len(rec.Key), len(rec.Value))
	}
	typ := int16(be.Uint16(rec.Key[2:]))
	if typ != 0 && typ != 1 {
		return Marker{}, fmt.Errorf("%w: control type %d", ErrBadMarker, typ)
	}
	return Marker{Commit: typ == 1, CoordinatorEpoch: int32(be.Uint32(rec.Value[2:]))}, nil
}

// MarkerRecord is the key and value of a marker's record, as Kafka
// writes them (version 0 of both).
func MarkerRecord(m Marker) (key, value []byte) {
	be := binary.BigEndian
	key = make([]byte, 4)
	if m.Commit {
		be.PutUint16(key[2:], 1)
	}
	value = make([]byte, 6)
	be.PutUint32(value[2:], uint32(m.CoordinatorEpoch))
	return key, value
}

// CompletedTxn is a transaction a marker ended: its producer, its first
// offset and the marker's offset, and whether it was aborted (what the
// aborted-transaction index keeps of the aborted ones).
type CompletedTxn struct {
	ProducerID  int64
	FirstOffset int64
	LastOffset  int64
	Aborted     bool
}

// Kafka error codes of markers.
const (
	codeInvalidTxnState   int16 = 48
	codeCoordinatorFenced int16 = 52
)

// CheckMarker decides whether a marker for producer pid at epoch from a
// coordinator at coordinatorEpoch may be appended: not from an older
// producer epoch (INVALID_PRODUCER_EPOCH) nor from an older coordinator
// (TRANSACTION_COORDINATOR_FENCED). A marker for a producer without an
// open transaction is still appended, as Kafka does (the coordinator
// retries markers, and a repeat is harmless).
func (s *State) CheckMarker(pid int64, epoch int16, m Marker) Check {
	p, ok := s.producers[pid]
	if !ok {
		return Check{Verdict: Append}
	}
	switch {
	case epoch < p.Epoch:
		return Check{Verdict: Reject, Code: codeInvalidProducerEpoch,
			Reason: fmt.Sprintf("marker for producer %d at epoch %d, older than its epoch %d", pid, epoch, p.Epoch)}
	case m.CoordinatorEpoch < p.CoordinatorEpoch:
		return Check{Verdict: Reject, Code: codeCoordinatorFenced,
			Reason: fmt.Sprintf("marker for producer %d from coordinator epoch %d, older than %d", pid, m.CoordinatorEpoch, p.CoordinatorEpoch)}
	}
	return Check{Verdict: Append}
}

// RecordMarker applies a marker appended at offset (at timestamp ts):
// the producer's open transaction, if any, ends. A marker at a newer
// epoch (the coordinator fencing a producer) moves the producer to it.
func (s *State) RecordMarker(pid int64, epoch int16, m Marker, offset, ts int64) (CompletedTxn, bool) {
	p, ok := s.producers[pid]
	if !ok {
		p = &Producer{Epoch: epoch, TxnFirstOffset: -1}
		s.producers[pid] = p
	}
	if epoch > p.Epoch {
		p.Epoch = epoch
		p.Batches = p.Batches[:0]
	}
	p.LastTimestamp = ts
	p.CoordinatorEpoch = m.CoordinatorEpoch
	if p.TxnFirstOffset < 0 {
		return CompletedTxn{}, false
	}
	done := CompletedTxn{ProducerID: pid, FirstOffset: p.TxnFirstOffset, LastOffset: offset, Aborted: !m.Commit}
	s.closeTxn(pid, p)
	return done, true
}

// FirstUnstableOffset is the first offset of the oldest open
// transaction; ok is false when none is open. The last stable offset is
// the smaller of it and the high watermark.
func (s *State) FirstUnstableOffset() (offset int64, ok bool) {
	if len(s.open) == 0 {
		return 0, false
	}
	if s.firstOpen < 0 {
		s.firstOpen = -1
		for _, first := range s.open {
			if s.firstOpen < 0 || first < s.firstOpen {
				s.firstOpen = first
			}
		}
	}
	return s.firstOpen, true
}

// OpenTransactions is how many transactions are open.
func (s *State) OpenTransactions() int { return len(s.open) }

// openTxn starts p's transaction at first.
func (s *State) openTxn(pid int64, p *Producer, first int64) {
	p.TxnFirstOffset = first
	if s.open == nil {
		s.open = map[int64]int64{}
	}
	s.open[pid] = first
	if s.firstOpen >= 0 && first < s.firstOpen {
		s.firstOpen = first
	}
	if len(s.open) == 1 {
		s.firstOpen = first
	}
}

// closeTxn ends p's transaction.
func (s *State) closeTxn(pid int64, p *Producer) {
	if p.TxnFirstOffset == s.firstOpen {
		s.firstOpen = -1 // recomputed when next asked
	}
	p.TxnFirstOffset = -1
	delete(s.open, pid)
}

// checkTxn is Check's transactional rule: a producer with a transaction
// open writes only transactional batches until its marker.
func checkTxn(h *wire.BatchHeader, p *Producer) (Check, bool) {
	if p.TxnFirstOffset >= 0 && !h.IsTransactional() {
		return Check{Verdict: Reject, Code: codeInvalidTxnState,
			Reason: fmt.Sprintf("producer %d has a transaction open since offset %d; a non-transactional batch must wait for its end", h.ProducerID, p.TxnFirstOffset)}, true
	}
	return Check{}, false
}

// MarkerBatch is the control batch a partition leader appends for a
// marker: one record (MarkerRecord), producer id and epoch set, no
// sequence, the control and transactional attributes, timestamped nowMs;
// offsets and leader epoch are the log's to fill in.
func MarkerBatch(pid int64, epoch int16, m Marker, nowMs int64) []byte {
	key, value := MarkerRecord(m)
	b := make([]byte, wire.BatchHeaderSize, wire.BatchHeaderSize+32)
	rec := kmsg.Record{Key: key, Value: value}
	b = rec.AppendTo(b)
	// AppendTo wrote length 0 (one varint byte): re-encode with the real
	// length of what follows it.
	rec.Length = int32(len(b) - wire.BatchHeaderSize - 1)
	b = rec.AppendTo(b[:wire.BatchHeaderSize])
	be := binary.BigEndian
	be.PutUint32(b[wire.BatchLengthPos:], uint32(len(b)-int(wire.BatchLogOverhead)))
	be.PutUint32(b[wire.BatchLeaderEpochPos:], 0xffffffff)
	b[wire.BatchMagicPos] = 2
	be.PutUint16(b[wire.BatchAttributesPos:], uint16(wire.AttrControl|wire.AttrTransactional))
	be.PutUint32(b[wire.BatchLastOffsetDeltaPos:], 0)
	be.PutUint64(b[wire.BatchBaseTimestampPos:], uint64(nowMs))
	be.PutUint64(b[wire.BatchMaxTimestampPos:], uint64(nowMs))
	be.PutUint64(b[wire.BatchProducerIDPos:], uint64(pid))
	be.PutUint16(b[wire.BatchProducerEpochPos:], uint16(epoch))
	be.PutUint32(b[wire.BatchBaseSequencePos:], 0xffffffff)
	be.PutUint32(b[wire.BatchRecordCountPos:], 1)
	be.PutUint32(b[wire.BatchCRCPos:], wire.CRC32C(b[wire.BatchAttributesPos:]))
	return b
}

// FirstUnstableOffsetWithout is FirstUnstableOffset as it will be once
// pid's transaction has ended: the stable point an aborted transaction's
// index entry records.
func (s *State) FirstUnstableOffsetWithout(pid int64) (int64, bool) {
	first, found := int64(0), false
	for id, off := range s.open {
		if id != pid && (!found || off < first) {
			first, found = off, true
		}
	}
	return first, found
}
