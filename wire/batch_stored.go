package wire

import "fmt"

// ValidateStoredBatch is ValidateBatch for a batch read from a log or
// replicated from a leader rather than sent by a producer: the log
// cleaner removes records from batches and keeps each batch's offset
// range (baseOffset, lastOffsetDelta) and producer fields, so a stored
// batch may hold fewer records than lastOffsetDelta+1, or none at all (an
// empty batch kept so a producer's sequence survives compaction; Kafka
// writes them too). Everything else is checked as in ValidateBatch.
func ValidateStoredBatch(b []byte) (BatchHeader, error) {
	h, err := validateBatchFrame(b)
	if err != nil {
		return h, err
	}
	if h.NumRecords < 0 || h.LastOffsetDelta < 0 || int64(h.NumRecords) > int64(h.LastOffsetDelta)+1 {
		return h, fmt.Errorf("%w (lastOffsetDelta %d, records %d)", ErrBatchRecordCount, h.LastOffsetDelta, h.NumRecords)
	}
	return h, nil
}
