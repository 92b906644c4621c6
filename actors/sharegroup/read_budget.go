package sharegroup

import "github.com/samsa-io/samsa/actors/partition"

// A ShareFetch hands out at most MaxRecords records (a Java share
// consumer asks for max.poll.records, 500 by default), so reading a whole
// partition.ChunkBytes (4 MiB) for each of its partitions read about a
// hundred times what it could hand out, and the partition actor spent
// most of the broker's CPU copying it (docs/performance.md, the share
// group workload). A read now asks for about what the records still to
// acquire take, learnt per share partition from its earlier reads.
const (
	// readRecordBytesGuess is the size assumed per record before a share
	// partition's first read says otherwise.
	readRecordBytesGuess = 1 << 10
	// readBytesMin keeps reads of few records from going batch by batch.
	readBytesMin = 16 << 10
)

// readSizes is the bytes per record each share partition's last read
// found (whole batches: headers included).
type readSizes map[partKey]int

// budget is how many bytes to read from p to acquire records more.
func (s readSizes) budget(p partKey, records int) int {
	per := s[p]
	if per <= 0 {
		per = readRecordBytesGuess
	}
	want := records * per
	want += want / 4 // batches straddle the end; some records are taken
	return min(max(want, readBytesMin), partition.ChunkBytes)
}

// learn records what a read of n bytes from offset from to next found.
func (s readSizes) learn(p partKey, from, next int64, n int) {
	if next <= from || n <= 0 {
		return
	}
	s[p] = max(1, int((int64(n)+next-from-1)/(next-from)))
}
