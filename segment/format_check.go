package segment

import (
	"errors"
	"fmt"

	"github.com/samsa-io/samsa/wire"
)

// ErrUnsupportedFormat is returned by opening a log whose durable
// segments hold something other than record batches v2 (magic 2): Kafka's
// message sets v0 and v1 (magic 0 and 1, written before Kafka 0.11 or
// under log.message.format.version < 0.11, which Kafka 3.9 still serves),
// or a format newer than this broker knows. Recovery would take such a
// batch for damage and cut the log there; refusing keeps the data for a
// broker that can read it.
var ErrUnsupportedFormat = errors.New("segment: unsupported log format")

// checkFormats reads the magic byte of the first batch of each segment
// below the recovery point (all of them after a clean shutdown): bytes
// written and flushed by a broker, so a magic other than 2 there is a
// format, not a torn write. Kafka's message sets keep the magic byte at
// the same position as record batches v2 (offset int64, size int32,
// crc or leader epoch int32, magic), so one byte tells them apart.
func (l *Log) checkFormats(clean bool, recoveryPoint int64) error {
	var b [wire.BatchMagicPos + 1]byte
	for _, s := range l.segs {
		if s.size < int64(len(b)) || (!clean && s.base >= recoveryPoint) {
			continue
		}
		f, err := l.d.fs.Open(s.logPath)
		if err != nil {
			return err
		}
		_, err = f.ReadAt(b[:], 0)
		f.Close()
		if err != nil {
			return err
		}
		if magic := int8(b[wire.BatchMagicPos]); magic != 2 {
			return fmt.Errorf("%w: %s starts with a batch of magic %d (%s); samsa reads record batches v2 (Kafka 0.11 and later) only. "+
				"Rewrite the topic's data in the v2 format with Kafka before samsa takes this directory over",
				ErrUnsupportedFormat, s.logPath, magic, magicName(magic))
		}
	}
	return nil
}

func magicName(magic int8) string {
	switch magic {
	case 0, 1:
		return fmt.Sprintf("Kafka's message format v%d", magic)
	default:
		return "a format this broker does not know"
	}
}
