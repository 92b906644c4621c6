package coordinator

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/actors/idempotence"
	"github.com/samsa-io/samsa/wire"
)

// BuildBatch encodes records as one uncompressed RecordBatch v2 (no
// producer id, offsets and epoch filled in by the partition), timestamped
// nowMs. A nil value is a tombstone.
func BuildBatch(records []group.Record, nowMs int64) []byte {
	b := make([]byte, wire.BatchHeaderSize, wire.BatchHeaderSize+64*len(records))
	var rec kmsg.Record
	for i, r := range records {
		rec = kmsg.Record{OffsetDelta: int32(i), Key: r.Key, Value: r.Value}
		rec.Length = 0
		start := len(b)
		b = rec.AppendTo(b)
		// AppendTo wrote length 0 (one varint byte): re-encode with the
		// real length of what follows it.
		rec.Length = int32(len(b) - start - 1)
		b = rec.AppendTo(b[:start])
	}
	be := binary.BigEndian
	be.PutUint32(b[wire.BatchLengthPos:], uint32(len(b)-int(wire.BatchLogOverhead)))
	be.PutUint32(b[wire.BatchLeaderEpochPos:], 0xffffffff)
	b[wire.BatchMagicPos] = 2
	be.PutUint16(b[wire.BatchAttributesPos:], 0)
	be.PutUint32(b[wire.BatchLastOffsetDeltaPos:], uint32(len(records)-1))
	be.PutUint64(b[wire.BatchBaseTimestampPos:], uint64(nowMs))
	be.PutUint64(b[wire.BatchMaxTimestampPos:], uint64(nowMs))
	be.PutUint64(b[wire.BatchProducerIDPos:], ^uint64(0))
	be.PutUint16(b[wire.BatchProducerEpochPos:], 0xffff)
	be.PutUint32(b[wire.BatchBaseSequencePos:], 0xffffffff)
	be.PutUint32(b[wire.BatchRecordCountPos:], uint32(len(records)))
	be.PutUint32(b[wire.BatchCRCPos:], wire.CRC32C(b[wire.BatchAttributesPos:]))
	return b
}

// maxDecompressed bounds one batch's records after decompression on load.
const maxDecompressed = 256 << 20

// ReplayBatches feeds every record of data (whole batches) to fn as key
// and value (nil for a tombstone), skipping control batches. It stops at
// the first batch that does not parse. Records may alias data or a fresh
// decompression buffer; neither is reused, so the core may keep them.
func ReplayBatches(data []byte, fn func(key, value []byte)) error {
	return ReplayTransactional(data, func(_ int64, key, value []byte) { fn(key, value) }, func(int64, bool) {})
}

// replayRecords feeds the records of one whole batch to fn.
func replayRecords(batch []byte, fn func(key, value []byte)) error {
	it, _, err := wire.NewBatchRecordIter(batch, nil, maxDecompressed)
	if err != nil {
		return err
	}
	var rec wire.Record
	for it.Next(&rec) {
		fn(rec.Key, rec.Value)
	}
	return it.Err()
}

// MarkTransactional makes batch (BuildBatch's) a transactional batch of
// producer pid at epoch, with no sequence (the coordinator writes it on
// the producer's behalf, as Kafka's does for TxnOffsetCommit), and
// reseals its CRC.
func MarkTransactional(batch []byte, pid int64, epoch int16) {
	be := binary.BigEndian
	be.PutUint16(batch[wire.BatchAttributesPos:], uint16(wire.AttrTransactional))
	be.PutUint64(batch[wire.BatchProducerIDPos:], uint64(pid))
	be.PutUint16(batch[wire.BatchProducerEpochPos:], uint16(epoch))
	be.PutUint32(batch[wire.BatchCRCPos:], wire.CRC32C(batch[wire.BatchAttributesPos:]))
}

// ReplayTransactional is ReplayBatches that keeps transactions apart:
// each record goes to fn with its batch's producer id when the batch is
// transactional (-1 otherwise), and each transaction marker (a control
// batch) to marker with its producer and outcome.
func ReplayTransactional(data []byte, fn func(pid int64, key, value []byte), marker func(pid int64, commit bool)) error {
	for len(data) > 0 {
		h, err := wire.ParseBatchHeader(data)
		if err != nil {
			return err
		}
		size := h.Size()
		if size > int64(len(data)) {
			return fmt.Errorf("coordinator: batch of %d bytes, %d left", size, len(data))
		}
		batch := data[:size]
		data = data[size:]
		if h.IsControl() {
			m, err := idempotence.ParseMarker(batch)
			if err != nil {
				return err
			}
			marker(h.ProducerID, m.Commit)
			continue
		}
		pid := int64(-1)
		if h.IsTransactional() {
			pid = h.ProducerID
		}
		if err := replayRecords(batch, func(key, value []byte) { fn(pid, key, value) }); err != nil {
			return err
		}
	}
	return nil
}
