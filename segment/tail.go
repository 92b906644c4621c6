package segment

import "sort"

// tailBatches is how many of a segment's newest batches it remembers.
// A consumer that keeps up reads from the last few; 32 entries are 1 KiB
// per partition that is being written to. A power of two, so ring
// positions are a mask, not a division.
const tailBatches = 32

// batchSpan is where a batch lies: its offsets and its bytes in the
// segment file.
type batchSpan struct {
	base, last int64 // first and last offset
	pos, size  int64 // byte position in the .log file and total size
}

// batchTail remembers the spans of the newest batches appended to a
// segment, so that a read near the end (a consumer that keeps up, the
// case of every long-polling fetch) finds its batches without reading
// headers from the file: before it, each such read cost an index lookup
// and a pread per batch header between the index entry and the end.
//
// The spans are contiguous and in order. The tail answers only while its
// last span ends exactly at the segment's size: a truncation shortens the
// segment behind its back, and the next append, not continuing the last
// span, starts it afresh (add). So nothing outside append needs to know
// it exists. Owned by the log's goroutine.
type batchTail struct {
	ring  [tailBatches]batchSpan
	first int   // index of the oldest span in ring
	n     int   // spans held
	end   int64 // where the newest span ends
}

// add records a batch appended at pos. A batch that does not continue
// the last span (the segment was truncated in between) starts over.
func (t *batchTail) add(b batchSpan) {
	if t.end != b.pos {
		t.n = 0
	}
	if t.n == tailBatches {
		t.first = (t.first + 1) & (tailBatches - 1)
		t.n--
	}
	t.ring[(t.first+t.n)&(tailBatches-1)] = b
	t.n++
	t.end = b.pos + b.size
}

// at returns the i-th span, oldest first.
func (t *batchTail) at(i int) *batchSpan { return &t.ring[(t.first+i)&(tailBatches-1)] }

// valid reports whether the tail describes the end of a segment of size
// bytes.
func (t *batchTail) valid(size int64) bool {
	return t != nil && t.n > 0 && t.end == size
}

// locate answers segment.locate from memory when offset is at or after
// the first remembered batch: the index of the first span whose last
// offset is at or after offset (t.n when none is), and ok.
func (t *batchTail) locate(size, offset int64) (i int, ok bool) {
	if !t.valid(size) || offset < t.at(0).base {
		return 0, false
	}
	return sort.Search(t.n, func(i int) bool { return t.at(i).last >= offset }), true
}

// indexOfPos returns the index of the span starting at pos, if remembered.
func (t *batchTail) indexOfPos(size, pos int64) (int, bool) {
	if !t.valid(size) || pos < t.at(0).pos {
		return 0, false
	}
	i := sort.Search(t.n, func(i int) bool { return t.at(i).pos >= pos })
	return i, i < t.n && t.at(i).pos == pos
}
