package segment

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers map them to Kafka error codes; the batch
// validation errors of package wire (wire.ErrBatchCRC, ...) come wrapped
// in a *BatchError.
var (
	ErrNoBatches        = errors.New("segment: no record batches given")
	ErrRecordTooLarge   = errors.New("segment: record batch larger than max.message.bytes")
	ErrLogFailed        = errors.New("segment: log failed")
	ErrClosed           = errors.New("segment: log closed")
	ErrOffsetOutOfRange = errors.New("segment: offset out of range")
	ErrCorruption       = errors.New("segment: corruption")
	ErrTruncated        = errors.New("segment: offset truncated before it became durable")
	ErrBadOffsets       = errors.New("segment: replicated batches do not continue the log")
	ErrDirClosed        = errors.New("segment: log directory closed")
	ErrAlreadyOpen      = errors.New("segment: log already open")
)

// BatchError says which batch of an append was rejected and why. Err is
// a wire.ErrBatch* error or ErrRecordTooLarge.
type BatchError struct {
	Index    int // 0-based position of the batch in the append
	Position int // byte position of the batch in the append
	Err      error
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("segment: batch %d at byte %d rejected: %v", e.Index, e.Position, e.Err)
}

func (e *BatchError) Unwrap() error { return e.Err }

// CorruptionError reports data that was expected to be intact (before the
// recovery point, or in a segment that must be whole) but is not. It
// matches ErrCorruption with errors.Is.
type CorruptionError struct {
	Path     string // file
	Position int64  // byte position in the file
	Offset   int64  // the offset expected there, or -1
	Err      error  // what was wrong
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("segment: corruption in %s at byte %d (offset %d): %v", e.Path, e.Position, e.Offset, e.Err)
}

func (e *CorruptionError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrCorruption) true.
func (e *CorruptionError) Is(target error) bool { return target == ErrCorruption }

func failedError(cause error) error { return fmt.Errorf("%w: %w", ErrLogFailed, cause) }
