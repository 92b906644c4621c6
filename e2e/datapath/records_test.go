package datapath

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The records of the round-trip tests are built from their index alone, so
// a consumer checks each one it reads without remembering what was sent:
//
//	key       "key-<i>"
//	value     valueSize(i) bytes (24..99): a pseudo-random half seeded by
//	          i, then a compressible run of letters
//	header    "idx" = i as 8 bytes big-endian, then "codec" = the codec
//	timestamp base + i milliseconds (create time)
//
// Producers send record i to partition i % partitions, so each
// partition's records must come back with increasing indexes.

const idxHeader = "idx"

func recordKey(i int) []byte { return strconv.AppendInt([]byte("key-"), int64(i), 10) }

func valueSize(i int) int { return 24 + (i*37)%76 }

func recordValue(i int) []byte {
	v := make([]byte, valueSize(i))
	x := uint64(i)*0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D
	half := len(v) / 2
	for j := 0; j < half; j++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v[j] = byte(x)
	}
	for j := half; j < len(v); j++ {
		v[j] = 'a' + byte((i+j)%26)
	}
	return v
}

func indexBytes(i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)) }

// recordTime is record i's create timestamp. The base is a whole
// millisecond an hour ago: Kafka's timestamps have millisecond
// precision, and the default log.message.timestamp.after.max.ms (one
// hour) refuses timestamps further in the future than that.
func recordTime(base time.Time, i int) time.Time {
	return base.Add(time.Duration(i) * time.Millisecond)
}

func timeBase() time.Time { return time.UnixMilli(time.Now().Add(-time.Hour).UnixMilli()) }

// header is one record header as a consumer saw it.
type header struct {
	Key   string
	Value []byte
}

// consumed is one record as any client returned it.
type consumed struct {
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	Headers   []header
	Timestamp time.Time
}

// verifier checks a consumed stream against the record model: every index
// exactly once, byte-identical, offsets dense from 0 and indexes
// increasing within each partition. It is safe for concurrent use.
type verifier struct {
	n          int
	partitions int32
	codec      string
	base       time.Time
	checkTime  bool // false for clients that cannot set a create time
	ordered    bool // false where the client may reorder a partition

	mu        sync.Mutex
	seen      []bool
	count     int
	dups      int
	nextOff   []int64
	lastIndex []int
	problems  []string
	nProblems int
}

func newVerifier(n int, partitions int32, codec string, base time.Time) *verifier {
	v := &verifier{n: n, partitions: partitions, codec: codec, base: base, checkTime: true, ordered: true,
		seen: make([]bool, n), nextOff: make([]int64, partitions), lastIndex: make([]int, partitions)}
	for p := range v.lastIndex {
		v.lastIndex[p] = -1
	}
	return v
}

func (v *verifier) problem(format string, args ...any) {
	v.nProblems++
	if len(v.problems) < 20 {
		v.problems = append(v.problems, fmt.Sprintf(format, args...))
	}
}

// add checks one record.
func (v *verifier) add(r consumed) {
	v.mu.Lock()
	defer v.mu.Unlock()
	where := fmt.Sprintf("partition %d offset %d", r.Partition, r.Offset)
	if r.Partition < 0 || r.Partition >= v.partitions {
		v.problem("%s: partition out of range", where)
		return
	}
	if want := v.nextOff[r.Partition]; r.Offset != want {
		v.problem("%s: offset not dense, want %d next", where, want)
	}
	v.nextOff[r.Partition] = r.Offset + 1

	i, ok := v.index(r, where)
	if !ok {
		return
	}
	if v.seen[i] {
		v.dups++
		v.problem("%s: record %d delivered twice", where, i)
		return
	}
	v.seen[i] = true
	v.count++
	if want := int32(i % int(v.partitions)); r.Partition != want {
		v.problem("%s: record %d belongs in partition %d", where, i, want)
	}
	if v.ordered && i <= v.lastIndex[r.Partition] {
		v.problem("%s: record %d after record %d: order lost", where, i, v.lastIndex[r.Partition])
	}
	v.lastIndex[r.Partition] = i
	if !bytes.Equal(r.Key, recordKey(i)) {
		v.problem("%s: record %d key %q, want %q", where, i, r.Key, recordKey(i))
	}
	if want := recordValue(i); !bytes.Equal(r.Value, want) {
		v.problem("%s: record %d value differs (%d bytes, want %d)", where, i, len(r.Value), len(want))
	}
	if len(r.Headers) != 2 || r.Headers[1].Key != "codec" || string(r.Headers[1].Value) != v.codec {
		v.problem("%s: record %d headers %v, want idx and codec=%s", where, i, r.Headers, v.codec)
	}
	if v.checkTime && !r.Timestamp.Equal(recordTime(v.base, i)) {
		v.problem("%s: record %d timestamp %d, want %d", where, i, r.Timestamp.UnixMilli(), recordTime(v.base, i).UnixMilli())
	}
}

// index reads the record's index from its idx header.
func (v *verifier) index(r consumed, where string) (int, bool) {
	if len(r.Headers) == 0 || r.Headers[0].Key != idxHeader || len(r.Headers[0].Value) != 8 {
		v.problem("%s: no idx header (headers %v, key %q)", where, r.Headers, r.Key)
		return 0, false
	}
	i := int(binary.BigEndian.Uint64(r.Headers[0].Value))
	if i < 0 || i >= v.n {
		v.problem("%s: idx %d out of range", where, i)
		return 0, false
	}
	return i, true
}

// done reports whether every record has been seen.
func (v *verifier) done() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.count == v.n
}

// Count is how many distinct records were seen.
func (v *verifier) Count() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.count
}

// result describes everything wrong, or "" when the stream is complete
// and correct.
func (v *verifier) result() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var b strings.Builder
	if v.count != v.n {
		var missing []int
		for i, ok := range v.seen {
			if !ok && len(missing) < 10 {
				missing = append(missing, i)
			}
		}
		fmt.Fprintf(&b, "%d of %d records consumed; first missing: %v\n", v.count, v.n, missing)
	}
	if v.nProblems > 0 {
		fmt.Fprintf(&b, "%d problems (%d duplicates), the first ones:\n  %s\n", v.nProblems, v.dups,
			strings.Join(v.problems, "\n  "))
	}
	return b.String()
}
