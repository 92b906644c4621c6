package idempotence

import (
	"fmt"

	"github.com/samsa-io/samsa/wire"
)

// BatchesToRetain is how many recent batches per producer are remembered
// for duplicate detection.
const BatchesToRetain = 5

// Verdict is the outcome of checking a batch against the producer state.
type Verdict int

const (
	// Append: the batch is new and in sequence; append it, then Record it.
	Append Verdict = iota
	// Duplicate: the batch was appended before; answer with Prior.
	Duplicate
	// Reject: the batch must not be appended; answer with Code.
	Reject
)

// Check is the result of State.Check.
type Check struct {
	Verdict Verdict
	Code    int16       // Kafka error code when Verdict is Reject
	Reason  string      // human-readable detail for the error message
	Prior   BatchRecord // the original append when Verdict is Duplicate
}

// BatchRecord is what is remembered of one appended batch.
type BatchRecord struct {
	FirstSeq    int32
	LastSeq     int32
	FirstOffset int64
	LastOffset  int64
	Timestamp   int64 // the batch's max timestamp, or the log append time
}

// Producer is the remembered state of one producer id.
type Producer struct {
	Epoch int16
	// Batches are the most recent batches, oldest first, at most
	// BatchesToRetain.
	Batches []BatchRecord
	// LastTimestamp is when the producer last wrote (ms), for expiry.
	LastTimestamp int64
	// TxnFirstOffset is the first offset of the producer's open
	// transaction, or -1 when none is open.
	TxnFirstOffset int64
	// CoordinatorEpoch is the epoch of the transaction coordinator that
	// wrote the producer's last marker (0 before any); an older one is
	// fenced.
	CoordinatorEpoch int32
}

// State maps producer ids to their state.
type State struct {
	producers map[int64]*Producer
	open      map[int64]int64 // producer id -> first offset of its open transaction
	firstOpen int64           // the smallest of open's values; -1: to recompute
}

// New returns an empty producer state.
func New() *State { return &State{producers: make(map[int64]*Producer), firstOpen: -1} }

// Len is the number of producers remembered.
func (s *State) Len() int { return len(s.producers) }

// Producer returns the state of producer id, if any.
func (s *State) Producer(id int64) (Producer, bool) {
	p, ok := s.producers[id]
	if !ok {
		return Producer{}, false
	}
	return *p, true
}

// Kafka error codes returned by Check.
const (
	codeOutOfOrderSequence   int16 = 45
	codeInvalidProducerEpoch int16 = 47
)

// Check decides what to do with a batch whose header is h. It changes
// nothing: call Record after a successful append.
func (s *State) Check(h *wire.BatchHeader) Check {
	if h.ProducerID < 0 {
		return Check{Verdict: Append}
	}
	p, ok := s.producers[h.ProducerID]
	if !ok {
		return Check{Verdict: Append}
	}
	switch {
	case h.ProducerEpoch < p.Epoch:
		return Check{Verdict: Reject, Code: codeInvalidProducerEpoch,
			Reason: fmt.Sprintf("producer %d epoch %d is older than the current epoch %d", h.ProducerID, h.ProducerEpoch, p.Epoch)}
	case h.ProducerEpoch > p.Epoch:
		if h.BaseSequence > 0 { // (a coordinator's batch has none: -1)
			return Check{Verdict: Reject, Code: codeOutOfOrderSequence,
				Reason: fmt.Sprintf("producer %d new epoch %d must start at sequence 0, got %d", h.ProducerID, h.ProducerEpoch, h.BaseSequence)}
		}
		return Check{Verdict: Append}
	}
	if c, bad := checkTxn(h, p); bad {
		return c
	}
	if h.BaseSequence < 0 {
		return Check{Verdict: Append} // a coordinator's batch for the producer: no sequence to check
	}
	last := h.LastSequence()
	for _, b := range p.Batches {
		if b.FirstSeq == h.BaseSequence && b.LastSeq == last {
			return Check{Verdict: Duplicate, Prior: b}
		}
	}
	if len(p.Batches) == 0 {
		return Check{Verdict: Append}
	}
	prev := p.Batches[len(p.Batches)-1].LastSeq
	if h.BaseSequence != nextSequence(prev) {
		return Check{Verdict: Reject, Code: codeOutOfOrderSequence,
			Reason: fmt.Sprintf("producer %d epoch %d: expected sequence %d, got %d", h.ProducerID, h.ProducerEpoch, nextSequence(prev), h.BaseSequence)}
	}
	return Check{Verdict: Append}
}

// nextSequence is the sequence after s; sequences wrap at the int32
// maximum to 0.
func nextSequence(s int32) int32 {
	if s == 1<<31-1 {
		return 0
	}
	return s + 1
}

// Record remembers a batch that was appended at firstOffset with header h
// (h.BaseOffset may not be set yet, so the offset is explicit). timestamp
// is the batch's max timestamp or log append time. Batches without a
// producer id are ignored. Record is also how recovery replays the log.
func (s *State) Record(h *wire.BatchHeader, firstOffset, timestamp int64) {
	if h.ProducerID < 0 {
		return
	}
	p, ok := s.producers[h.ProducerID]
	if !ok {
		p = &Producer{Epoch: h.ProducerEpoch, TxnFirstOffset: -1}
		s.producers[h.ProducerID] = p
	}
	if h.ProducerEpoch != p.Epoch {
		// A new epoch starts a fresh sequence space: old batches can no
		// longer be retried.
		p.Epoch = h.ProducerEpoch
		p.Batches = p.Batches[:0]
	}
	p.LastTimestamp = timestamp
	if h.IsControl() {
		return // markers go through RecordMarker
	}
	if h.IsTransactional() && p.TxnFirstOffset < 0 {
		s.openTxn(h.ProducerID, p, firstOffset)
	}
	if h.BaseSequence < 0 {
		return
	}
	rec := BatchRecord{
		FirstSeq:    h.BaseSequence,
		LastSeq:     h.LastSequence(),
		FirstOffset: firstOffset,
		LastOffset:  firstOffset + int64(h.LastOffsetDelta),
		Timestamp:   timestamp,
	}
	if len(p.Batches) == BatchesToRetain {
		copy(p.Batches, p.Batches[1:])
		p.Batches = p.Batches[:BatchesToRetain-1]
	}
	p.Batches = append(p.Batches, rec)
}

// TruncateTo forgets batches at or after offset (the log was truncated
// there); producers left with no batches are forgotten, so their next
// batch is accepted at any sequence.
func (s *State) TruncateTo(offset int64) {
	for id, p := range s.producers {
		kept := p.Batches[:0]
		for _, b := range p.Batches {
			if b.LastOffset < offset {
				kept = append(kept, b)
			}
		}
		p.Batches = kept
		if p.TxnFirstOffset >= offset {
			s.closeTxn(id, p)
		}
		if len(kept) == 0 && p.TxnFirstOffset < 0 {
			delete(s.producers, id)
		}
	}
}

// Expire forgets producers silent for maxAgeMs or more
// (producer.id.expiration.ms), as Kafka's isProducerExpired, except
// those with a transaction open.
func (s *State) Expire(nowMs, maxAgeMs int64) int {
	n := 0
	for id, p := range s.producers {
		if nowMs-p.LastTimestamp >= maxAgeMs && p.TxnFirstOffset < 0 { // Kafka keeps producers with a transaction open
			delete(s.producers, id)
			n++
		}
	}
	return n
}
