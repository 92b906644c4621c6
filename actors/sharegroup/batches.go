package sharegroup

import (
	"iter"

	"github.com/samsa-io/samsa/wire"
)

// eachWholeBatch yields the position in data and the header of each whole
// record batch at the front of data, in order, stopping at the first
// batch that is cut off or unreadable (a read ends where its byte budget
// ran out, usually inside a batch).
func eachWholeBatch(data []byte) iter.Seq2[int, wire.BatchHeader] {
	return func(yield func(int, wire.BatchHeader) bool) {
		for pos := 0; len(data)-pos >= int(wire.BatchHeaderSize); {
			h, err := wire.ParseBatchHeader(data[pos:])
			if err != nil || h.Size() > int64(len(data)-pos) {
				return
			}
			if !yield(pos, h) {
				return
			}
			pos += int(h.Size())
		}
	}
}
