package partition

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Rules is what a partition checks a produced batch against, taken from
// the topic's effective config (and replaced when it is altered).
type Rules struct {
	MaxMessageBytes int32 // max.message.bytes: the largest batch
	SegmentBytes    int64 // segment.bytes: the largest produce (RECORD_LIST_TOO_LARGE)
	LogAppendTime   bool  // message.timestamp.type=LogAppendTime
	// BeforeMaxMs and AfterMaxMs are message.timestamp.before.max.ms and
	// .after.max.ms; math.MaxInt64 means unlimited.
	BeforeMaxMs int64
	AfterMaxMs  int64
	MinInsync   int  // min.insync.replicas
	Compact     bool // cleanup.policy has compact: every record needs a key
	// Transactions: the broker runs a transaction coordinator, so
	// transactional batches are accepted (else INVALID_REQUEST: with
	// nothing to end them, an open transaction would hold the last
	// stable offset for ever).
	Transactions bool
	// fromCoordinator: the batch is a coordinator's (Produce.Coordinator):
	// a transactional batch written for a producer carries no sequence.
	fromCoordinator bool
}

// transactionsOn is EnableTransactions' switch.
var transactionsOn atomic.Bool

// EnableTransactions makes every partition accept transactional batches
// (Rules.Transactions): the broker runs transaction coordinators. Like
// wire.EnableTransactionAPIs, it holds for the whole process.
func EnableTransactions() { transactionsOn.Store(true) }

// RulesOf maps a topic's effective config to produce rules.
func RulesOf(t config.Topic) Rules {
	ms := func(d time.Duration) int64 {
		if d < 0 || d >= time.Duration(math.MaxInt64) {
			return math.MaxInt64
		}
		return d.Milliseconds()
	}
	seg := t.SegmentBytes
	if seg <= 0 {
		seg = math.MaxInt32
	}
	return Rules{
		MaxMessageBytes: max(t.MaxMessageBytes, 1),
		SegmentBytes:    seg,
		LogAppendTime:   t.LogAppendTime,
		BeforeMaxMs:     ms(t.TimestampBeforeMax),
		AfterMaxMs:      ms(t.TimestampAfterMax),
		MinInsync:       max(t.MinInsyncReplicas, 1),
		Compact:         t.Compact,
		Transactions:    transactionsOn.Load(),
	}
}

// produceVerdict is the outcome of validating one partition's records.
type produceVerdict struct {
	header wire.BatchHeader
	code   kerr.Code // None: valid
	msg    string    // detail for the response's error message (v8+)
	// records names the records the batch was refused for, when the
	// refusal is theirs (INVALID_RECORD, INVALID_TIMESTAMP).
	records []RecordError
}

func rejected(code kerr.Code, format string, args ...any) produceVerdict {
	return produceVerdict{code: code, msg: fmt.Sprintf(format, args...)}
}

// validateProduce checks one partition's records of a Produce request of
// the given version against the rules, at broker time now (ms). It reads
// the batch, never changes it. scratch is a reusable decompression buffer
// (only touched when a per-record check needs the records). verifyCRC
// false skips the CRC-32C, for a caller that appends through
// segment.Log.Append, which verifies it before writing anything (a CRC
// pass over every byte costs about as much as the rest of the produce
// path); a corrupt batch is then refused by the append, with the same
// CORRUPT_MESSAGE, after the producer-sequence checks instead of before.
//
// What is checked, and what Kafka does differently:
//
//   - exactly one RecordBatch v2 (Produce v3+ allows no more): none or
//     several is INVALID_RECORD; magic 0/1 is UNSUPPORTED_FOR_MESSAGE_FORMAT
//     (Kafka 4 answers INVALID_RECORD there; both are fatal to the batch);
//   - the whole header: length, CRC-32C, codec, record count against
//     lastOffsetDelta (wire.ValidateBatch; codes per wire.ErrorCodeOf);
//     zstd before Produce v7 is UNSUPPORTED_COMPRESSION_TYPE;
//   - size: a batch over max.message.bytes is MESSAGE_TOO_LARGE, records
//     over segment.bytes RECORD_LIST_TOO_LARGE;
//   - control batches from clients and idempotent batches without a base
//     sequence are INVALID_RECORD; transactional batches INVALID_REQUEST
//     unless Rules.Transactions (the broker runs a transaction
//     coordinator);
//   - timestamps, only with message.timestamp.type=CreateTime: Kafka checks
//     every record (decompressing). The newest record is the batch's
//     maxTimestamp, so the after.max.ms bound (default one hour) is checked
//     on the header first; the oldest record is not in the header, so the
//     records are read (and decompressed) only when before.max.ms is set
//     below its unlimited default, or to find which records are too new.
//     Records without a timestamp (-1) pass. A batch the producer marked
//     LogAppendTime is refused on a LogAppendTime topic, and on a
//     CreateTime topic unless its max timestamp (which then stands for
//     every record) is in range;
//   - on compacted topics every record needs a key (INVALID_RECORD), as in
//     Kafka: the records are read (and decompressed) for it.
//
// The per-record rules (keys, timestamps) are checked on every record and
// the refusal lists each bad record (RecordError, at most maxRecordErrors):
// Produce v8+ clients learn which records of the batch were at fault.
//
// Not checked (Kafka checks it while it decompresses anyway): each
// record's offset delta.
func validateProduce(records []byte, version int16, r Rules, now int64, verifyCRC bool, scratch *[]byte) produceVerdict {
	if len(records) == 0 {
		return rejected(kerr.InvalidRecord, "produce v%d needs exactly one record batch per partition, got none", version)
	}
	if int64(len(records)) > r.SegmentBytes {
		return rejected(kerr.RecordListTooLarge, "%d bytes of records exceed segment.bytes %d", len(records), r.SegmentBytes)
	}
	if len(records) < wire.BatchHeaderSize {
		return rejected(kerr.CorruptMessage, "%d bytes is shorter than a record batch header", len(records))
	}
	if magic := int8(records[wire.BatchMagicPos]); magic != 2 {
		return rejected(kerr.UnsupportedForMessageFormat, "record batch magic %d; only magic 2 (Kafka 0.11+ clients) is accepted", magic)
	}
	size := int64(int32(binary.BigEndian.Uint32(records[wire.BatchLengthPos:]))) + wire.BatchLogOverhead
	if size < wire.BatchHeaderSize || size > int64(len(records)) {
		return rejected(kerr.CorruptMessage, "record batch length field says %d bytes, %d given", size, len(records))
	}
	if size < int64(len(records)) {
		return rejected(kerr.InvalidRecord, "produce v%d needs exactly one record batch per partition, got more", version)
	}
	var h wire.BatchHeader
	var err error
	if verifyCRC {
		h, err = wire.ValidateBatch(records)
	} else {
		h, err = validateHeader(records)
	}
	if err != nil {
		return produceVerdict{header: h, code: wire.ErrorCodeOf(err), msg: err.Error()}
	}
	if size > int64(r.MaxMessageBytes) {
		return rejected(kerr.MessageTooLarge, "record batch of %d bytes exceeds max.message.bytes %d", size, r.MaxMessageBytes)
	}
	if h.Codec() == wire.CodecZstd && version < 7 {
		return rejected(kerr.UnsupportedCompressionType, "zstd needs produce v7 or later, got v%d", version)
	}
	if h.IsControl() {
		return rejected(kerr.InvalidRecord, "clients may not write control batches")
	}
	if h.IsTransactional() && !r.Transactions {
		return rejected(kerr.InvalidRequest, "transactions are turned off on this broker (samsa.transactions.enable=false)")
	}
	if h.ProducerID >= 0 && (h.BaseSequence < 0 || h.ProducerEpoch < 0) && !coordinatorTxnBatch(&h, r) {
		return rejected(kerr.InvalidRecord, "idempotent batch of producer %d without a sequence or epoch", h.ProducerID)
	}
	if v := checkRecords(records, &h, r, now, scratch); v.code != kerr.None {
		return v
	}
	return produceVerdict{header: h}
}

// coordinatorTxnBatch reports whether h is a transactional batch a
// coordinator wrote for a producer: it has an epoch but no sequence.
func coordinatorTxnBatch(h *wire.BatchHeader, r Rules) bool {
	return r.fromCoordinator && h.IsTransactional() && h.ProducerEpoch >= 0
}

// validateHeader is wire.ValidateBatch without the CRC: the length field
// (already checked by the caller), the codec and the record count.
func validateHeader(b []byte) (wire.BatchHeader, error) {
	h, err := wire.ParseBatchHeader(b)
	switch {
	case err != nil:
		return h, err
	case h.Codec() > wire.CodecZstd:
		return h, fmt.Errorf("%w (%d)", wire.ErrBatchCodec, h.Codec())
	case h.NumRecords <= 0:
		return h, wire.ErrBatchEmpty
	case h.LastOffsetDelta != h.NumRecords-1:
		return h, fmt.Errorf("%w (lastOffsetDelta %d, records %d)", wire.ErrBatchRecordCount, h.LastOffsetDelta, h.NumRecords)
	}
	return h, nil
}

// RecordError names one record of a batch that was refused because of
// it (KIP-467: Produce v8+ answers them as record_errors): its index in
// the batch and why. The other records of the batch are refused with it,
// for being in a batch with a bad record.
type RecordError struct {
	Index int32
	Msg   string // "" past the first recordErrorMessages of a batch
}

// Bounds on a batch's record errors. A batch holds at most
// max.message.bytes of records, but a compressed one may expand 32-fold,
// so a hostile batch of tiny keyless records could otherwise make the
// broker list millions: past maxRecordErrors the rest are counted in the
// partition's error message but not listed, and only the first
// recordErrorMessages carry a message of their own (clients show the
// partition's error message for the others; Java does).
const (
	maxRecordErrors     = 1 << 16
	recordErrorMessages = 100
	// summarized is how many record errors the partition's error message
	// quotes.
	summarized = 3
)

// checkRecords applies message.timestamp.before/after.max.ms, the
// compacted topics' key rule and the rule that producers do not stamp
// LogAppendTime themselves (see validateProduce), reading the records
// only when a rule may refuse one. Like Kafka's LogValidator it checks
// every record and refuses the batch naming each bad record (one reason
// per record, the key first): INVALID_TIMESTAMP if any record's timestamp
// is at fault, else INVALID_RECORD.
func checkRecords(batch []byte, h *wire.BatchHeader, r Rules, now int64, scratch *[]byte) produceVerdict {
	createTime := !r.LogAppendTime
	tooNew := func(ts int64) bool {
		return createTime && ts != -1 && r.AfterMaxMs != math.MaxInt64 && ts > now && ts-now > r.AfterMaxMs
	}
	tooOld := func(ts int64) bool {
		return createTime && ts != -1 && r.BeforeMaxMs != math.MaxInt64 && ts < now && now-ts > r.BeforeMaxMs
	}
	// A batch the producer marked LogAppendTime gives every record the
	// batch's max timestamp (Kafka reads it so); without one to check, or
	// on a LogAppendTime topic, each record is refused for the marking.
	logTimeBatch := h.Attributes&wire.AttrTimestampLogTime != 0
	markedWrong := logTimeBatch && (!createTime || h.MaxTimestamp == -1)
	// The newest record is the batch's max timestamp, and no non-negative
	// timestamp can be too old with before.max.ms >= now: most batches
	// need no record read.
	oldPossible := createTime && r.BeforeMaxMs != math.MaxInt64 && r.BeforeMaxMs < now
	if !r.Compact && !oldPossible && !markedWrong && !tooNew(h.MaxTimestamp) {
		return produceVerdict{}
	}
	it, buf, err := wire.NewBatchRecordIter(batch, (*scratch)[:0], 32*int(r.MaxMessageBytes))
	*scratch = buf
	if err != nil {
		return produceVerdict{code: wire.ErrorCodeOf(err), msg: err.Error()}
	}
	var (
		errs      []RecordError
		bad       int32 // records refused, listed or not
		timestamp bool  // some record was refused for its timestamp
		rec       wire.Record
	)
	for it.Next(&rec) {
		i := it.Index() - 1
		ts := h.BaseTimestamp + rec.TimestampDelta
		if logTimeBatch {
			ts = h.MaxTimestamp
		}
		var why func() string
		switch {
		case r.Compact && rec.Key == nil:
			why = func() string {
				return fmt.Sprintf("record %d has no key; a compacted topic (cleanup.policy=compact) needs one", i)
			}
		case markedWrong:
			timestamp = true
			why = func() string {
				return fmt.Sprintf("record %d is in a batch marked LogAppendTime; producers send CreateTime batches and the broker stamps LogAppendTime itself", i)
			}
		case tooOld(ts):
			timestamp = true
			why = func() string {
				return fmt.Sprintf("record %d timestamp %d is more than message.timestamp.before.max.ms (%d) before the broker's time %d",
					i, ts, r.BeforeMaxMs, now)
			}
		case tooNew(ts):
			timestamp = true
			why = func() string {
				return fmt.Sprintf("record %d timestamp %d is more than message.timestamp.after.max.ms (%d) after the broker's time %d",
					i, ts, r.AfterMaxMs, now)
			}
		default:
			continue
		}
		bad++
		if len(errs) < maxRecordErrors {
			e := RecordError{Index: i}
			if len(errs) < recordErrorMessages {
				e.Msg = why()
			}
			errs = append(errs, e)
		}
	}
	if err := it.Err(); err != nil {
		return produceVerdict{code: wire.ErrorCodeOf(err), msg: err.Error()}
	}
	if bad == 0 {
		return produceVerdict{}
	}
	v := produceVerdict{code: kerr.InvalidRecord, records: errs}
	if timestamp {
		v.code = kerr.InvalidTimestamp
	}
	v.msg = summarizeRecordErrors(errs, bad, h.NumRecords)
	return v
}

// summarizeRecordErrors is a refused batch's error message: how many of
// its records are bad, the first few reasons, and whether all are listed.
func summarizeRecordErrors(errs []RecordError, bad, total int32) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of the batch's %d records rejected, so the batch is refused", bad, total)
	for i, e := range errs[:min(len(errs), summarized)] {
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		b.WriteString(sep)
		b.WriteString(e.Msg)
	}
	if int(bad) > summarized {
		b.WriteString("; ...")
	}
	if int(bad) > len(errs) {
		fmt.Fprintf(&b, " (record_errors lists the first %d)", len(errs))
	}
	return b.String()
}
