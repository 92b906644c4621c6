package main

import (
	"bytes"
	"fmt"
	"strconv"
)

// The record every checker of the matrix writes and reads back (the same
// in interop/python/check.py, interop/node/check.js and the Java Main):
//
//	key        "key-<i>" when i is even, none (null) when i is odd
//	value      "value-<i>-" then 'a'+(i+j)%26 for each byte j, 100 bytes
//	headers    seq=<i>, client=<client name>, pad="x"*(i%3) (may be empty)
//	timestamp  ts0 + i milliseconds, create time
const ts0 = int64(1700000000000)

// partitions is how many partitions the runner gives each topic.
const partitions = 3

// codecs are the compression codecs of the matrix, one topic each.
var codecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

func keyOf(i int) []byte {
	if i%2 == 1 {
		return nil
	}
	return []byte("key-" + strconv.Itoa(i))
}

func valueOf(i int) []byte {
	v := make([]byte, 0, 100)
	v = append(v, "value-"+strconv.Itoa(i)+"-"...)
	for j := len(v); j < 100; j++ {
		v = append(v, byte('a'+(i+j)%26))
	}
	return v
}

type header struct {
	Key   string
	Value []byte
}

func headersOf(i int, client string) []header {
	return []header{
		{"seq", []byte(strconv.Itoa(i))},
		{"client", []byte(client)},
		{"pad", bytes.Repeat([]byte("x"), i%3)},
	}
}

// location is where a broker acknowledged a record.
type location struct {
	Partition int32
	Offset    int64
}

// consumed is one record as a client handed it over.
type consumed struct {
	Topic      string
	Partition  int32
	Offset     int64
	Key        []byte // nil for a null key
	Value      []byte
	Headers    []header
	Timestamp  int64 // milliseconds
	CreateTime bool  // the timestamp type is create time
}

// verifier checks consumed records against the record spec and, when the
// producer reported them, the acknowledged locations. Without locations
// (clients that do not report per-record offsets) it checks that each
// partition's offsets are dense from 0, which holds because one producer
// wrote each topic.
type verifier struct {
	client string
	placed map[string]map[int]location // topic -> i -> location
	counts map[string]int
	seen   map[string]map[int]bool
	nextOf map[string]map[int32]int64
	errs   []featureError
}

type featureError struct {
	Feature, Topic, Msg string
}

func newVerifier(client string, placed map[string]map[int]location, counts map[string]int) *verifier {
	v := &verifier{client: client, placed: placed, counts: counts,
		seen: map[string]map[int]bool{}, nextOf: map[string]map[int32]int64{}}
	for t := range counts {
		v.seen[t] = map[int]bool{}
		v.nextOf[t] = map[int32]int64{}
	}
	return v
}

func (v *verifier) done() bool {
	for t, n := range v.counts {
		if len(v.seen[t]) < n {
			return false
		}
	}
	return true
}

func (v *verifier) fail(feature, topic, format string, args ...any) {
	if len(v.errs) < 40 {
		v.errs = append(v.errs, featureError{feature, topic, fmt.Sprintf(format, args...)})
	}
}

func (v *verifier) check(r consumed) {
	at := fmt.Sprintf("%s[%d]@%d", r.Topic, r.Partition, r.Offset)
	var seqs [][]byte
	for _, h := range r.Headers {
		if h.Key == "seq" {
			seqs = append(seqs, h.Value)
		}
	}
	if len(seqs) != 1 {
		v.fail("headers", r.Topic, "%s: headers %s have no single seq", at, fmtHeaders(r.Headers))
		return
	}
	i, err := strconv.Atoi(string(seqs[0]))
	n, known := v.counts[r.Topic]
	if err != nil || !known || i < 0 || i >= n {
		v.fail("consume", r.Topic, "%s: unexpected record seq %q", at, seqs[0])
		return
	}
	if v.seen[r.Topic][i] {
		v.fail("consume", r.Topic, "%s: record %d delivered twice", at, i)
		return
	}
	v.seen[r.Topic][i] = true
	if want := headersOf(i, v.client); fmtHeaders(r.Headers) != fmtHeaders(want) {
		v.fail("headers", r.Topic, "%s: record %d headers %s, want %s", at, i, fmtHeaders(r.Headers), fmtHeaders(want))
	}
	if want := keyOf(i); (want == nil) != (r.Key == nil) || !bytes.Equal(want, r.Key) {
		v.fail("consume", r.Topic, "%s: record %d key %q (null %v), want %q", at, i, r.Key, r.Key == nil, want)
	}
	if !bytes.Equal(r.Value, valueOf(i)) {
		v.fail("consume", r.Topic, "%s: record %d value %.40q", at, i, r.Value)
	}
	if !r.CreateTime || r.Timestamp != ts0+int64(i) {
		v.fail("consume", r.Topic, "%s: record %d timestamp %d (create time %v), want %d", at, i, r.Timestamp, r.CreateTime, ts0+int64(i))
	}
	if where, ok := v.placed[r.Topic][i]; ok {
		if where != (location{r.Partition, r.Offset}) {
			v.fail("consume", r.Topic, "%s: record %d was acknowledged at partition %d offset %d", at, i, where.Partition, where.Offset)
		}
		return
	}
	if want := v.nextOf[r.Topic][r.Partition]; r.Offset != want {
		v.fail("consume", r.Topic, "%s: record %d: offsets not dense, want offset %d", at, i, want)
	}
	v.nextOf[r.Topic][r.Partition] = r.Offset + 1
}

func fmtHeaders(hs []header) string {
	var b bytes.Buffer
	b.WriteByte('[')
	for k, h := range hs {
		if k > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%q", h.Key, h.Value)
	}
	b.WriteByte(']')
	return b.String()
}
