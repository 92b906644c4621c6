package segment

import (
	"encoding/binary"

	"github.com/samsa-io/samsa/wire"
)

// filterState is what a cleaning carries from batch to batch (see the
// rules in clean.go).
type filterState struct {
	m         *offsetMap
	lastBatch map[int64]int64 // producer id -> base offset of its last batch in the cleaned range
	txnKept   map[int64]bool  // producer id -> its open transaction has a record kept
	markerCut map[int64]bool  // offsets of markers dropped (their aborted-transaction entries go too)

	scratch []byte // decompressed records
	recs    []byte // kept records, encoded
	body    []byte // one record's body
	packed  []byte // compressed records
	out     []byte // the rewritten batch
}

// filter returns what of batch the cleaning keeps: batch itself, a
// rewritten batch (valid until the next call), or nil to drop it.
func (st *filterState) filter(j *CleanJob, h *wire.BatchHeader, batch []byte) ([]byte, error) {
	if st.markerCut == nil {
		st.markerCut = map[int64]bool{}
	}
	now := j.opts.Now
	hasHorizon := h.Attributes&wire.AttrDeleteHorizon != 0
	horizonPassed := hasHorizon && now >= h.BaseTimestamp
	newHorizon := now + max(j.opts.DeleteRetentionMs, 0)
	last := h.ProducerID >= 0 && st.lastBatch[h.ProducerID] == h.BaseOffset
	if h.IsControl() {
		kept := st.txnKept[h.ProducerID]
		delete(st.txnKept, h.ProducerID)
		switch {
		case kept || last && horizonPassed:
			return batch, nil // needed: its transaction has records, or it holds its producer's state
		case horizonPassed:
			st.markerCut[h.LastOffset()] = true
			j.Stats.MarkersCut++
			return nil, nil
		case hasHorizon:
			return batch, nil
		}
		// The transaction is gone: the marker's countdown starts now.
		return st.rewrite(h, batch, newHorizon, true, func(*wire.Record) bool { return true })
	}
	if h.NumRecords == 0 { // an empty batch an earlier cleaning kept
		if last {
			return batch, nil
		}
		return nil, nil
	}
	aborted := h.IsTransactional() && j.isAborted(h.ProducerID, h.BaseOffset)
	var n, kept int32
	tombstone := false
	// decide is pure, so the rewrite's second pass decides as the first.
	decide := func(rec *wire.Record) cut {
		off := h.BaseOffset + int64(rec.OffsetDelta)
		switch {
		case aborted:
			return cutAborted
		case rec.Key == nil || st.m.get(rec.Key) > off:
			return cutSuperseded
		case rec.Value == nil && horizonPassed:
			return cutTombstone
		}
		return kept0
	}
	// A first pass decides; the batch is copied as it is when it keeps
	// everything and needs no horizon (the common case of a clean
	// section), rewritten otherwise.
	it, s, err := wire.NewBatchRecordIter(batch, st.scratch, decompressLimit(batch))
	st.scratch = s
	if err != nil {
		return nil, err
	}
	var rec wire.Record
	for it.Next(&rec) {
		n++
		switch decide(&rec) {
		case kept0:
			kept++
			tombstone = tombstone || rec.Value == nil
		case cutAborted:
			j.Stats.AbortedCut++
		case cutTombstone:
			j.Stats.TombstonesCut++
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	j.Stats.RecordsRead += int64(n)
	j.Stats.RecordsKept += int64(kept)
	if kept > 0 && h.IsTransactional() {
		st.txnKept[h.ProducerID] = true
	}
	needHorizon := tombstone && !hasHorizon
	switch {
	case kept == n && !needHorizon:
		return batch, nil
	case kept == 0 && last:
		return st.empty(h, batch), nil
	case kept == 0:
		return nil, nil
	}
	base := h.BaseTimestamp
	if needHorizon {
		base = newHorizon
	}
	return st.rewrite(h, batch, base, needHorizon, func(rec *wire.Record) bool { return decide(rec) == kept0 })
}

// cut is why a record goes.
type cut int

const (
	kept0 cut = iota // not cut
	cutAborted
	cutSuperseded
	cutTombstone
)

// rewrite re-encodes batch with the records keep accepts, its base
// timestamp set to base (record timestamps kept: their deltas are
// recomputed) and, with horizon, the delete-horizon attribute set. The
// header's offsets and producer fields stay.
func (st *filterState) rewrite(h *wire.BatchHeader, batch []byte, base int64, horizon bool, keep func(*wire.Record) bool) ([]byte, error) {
	it, s, err := wire.NewBatchRecordIter(batch, st.scratch, decompressLimit(batch))
	st.scratch = s
	if err != nil {
		return nil, err
	}
	st.recs = st.recs[:0]
	var count int32
	var rec wire.Record
	for it.Next(&rec) {
		if !keep(&rec) {
			continue
		}
		count++
		st.recs = st.appendRecord(st.recs, &rec, h.BaseTimestamp+rec.TimestampDelta-base)
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	records := st.recs
	if c := h.Codec(); c != wire.CodecNone {
		if st.packed, err = wire.Compress(st.packed[:0], c, records); err != nil {
			return nil, err
		}
		records = st.packed
	}
	attrs := h.Attributes
	if horizon {
		attrs |= wire.AttrDeleteHorizon
	}
	st.out = buildBatch(st.out[:0], batch, attrs, base, count, records)
	return st.out, nil
}

// empty is batch's header with no records (and no compression): kept so
// the producer's last sequence and epoch survive.
func (st *filterState) empty(h *wire.BatchHeader, batch []byte) []byte {
	st.out = buildBatch(st.out[:0], batch, h.Attributes&^wire.AttrCompressionMask, h.BaseTimestamp, 0, nil)
	return st.out
}

// buildBatch appends a batch with orig's header, the given attributes,
// base timestamp, record count and records section, and a new length and
// CRC-32C.
func buildBatch(dst, orig []byte, attrs int16, baseTs int64, count int32, records []byte) []byte {
	start := len(dst)
	dst = append(dst, orig[:wire.BatchHeaderSize]...)
	dst = append(dst, records...)
	b := dst[start:]
	be := binary.BigEndian
	be.PutUint32(b[wire.BatchLengthPos:], uint32(len(b)-wire.BatchLogOverhead))
	be.PutUint16(b[wire.BatchAttributesPos:], uint16(attrs))
	be.PutUint64(b[wire.BatchBaseTimestampPos:], uint64(baseTs))
	be.PutUint32(b[wire.BatchRecordCountPos:], uint32(count))
	be.PutUint32(b[wire.BatchCRCPos:], wire.CRC32C(b[wire.BatchAttributesPos:]))
	return dst
}

// appendRecord encodes rec with timestamp delta tsDelta (see the layout
// in wire.Record).
func (st *filterState) appendRecord(dst []byte, rec *wire.Record, tsDelta int64) []byte {
	b := append(st.body[:0], byte(rec.Attributes))
	b = binary.AppendVarint(b, tsDelta)
	b = binary.AppendVarint(b, int64(rec.OffsetDelta))
	b = appendVarBytes(b, rec.Key)
	b = appendVarBytes(b, rec.Value)
	b = binary.AppendVarint(b, int64(rec.HeaderCount))
	hs := rec.Headers()
	for k, v, ok := hs.Next(); ok; k, v, ok = hs.Next() {
		b = appendVarBytes(b, k)
		b = appendVarBytes(b, v)
	}
	st.body = b
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

func appendVarBytes(dst, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(v)))
	return append(dst, v...)
}
