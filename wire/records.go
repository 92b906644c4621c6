package wire

import (
	"errors"
	"fmt"
)

// Record validation errors. Each wraps ErrInvalidRecord, which callers map
// to Kafka's INVALID_RECORD (or CORRUPT_MESSAGE); the iterator adds the
// record's index as detail.
var (
	ErrInvalidRecord = errors.New("wire: invalid record")
	ErrRecordCount   = fmt.Errorf("%w: record count does not match the records section", ErrInvalidRecord)
	ErrRecordVarint  = fmt.Errorf("%w: malformed varint", ErrInvalidRecord)
	ErrRecordLength  = fmt.Errorf("%w: length out of bounds or inconsistent", ErrInvalidRecord)
)

// Record is one record of a RecordBatch v2, as read by RecordIter. Key,
// Value and the header bytes are sub-slices of the records section the
// iterator reads (the batch, or its decompressed copy): they are valid as
// long as that buffer is, and must not be modified.
//
// Record layout (varints are zigzag, as in protobuf):
//
//	length varint          bytes after this field
//	attributes int8        unused, 0
//	timestampDelta varlong from the batch's baseTimestamp
//	offsetDelta varint     from the batch's baseOffset
//	keyLength varint, key  -1 = null
//	valueLength varint, value  -1 = null
//	headerCount varint
//	headers: keyLength varint, key (not null), valueLength varint, value (-1 = null)
type Record struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	Key            []byte // nil when null
	Value          []byte // nil when null
	HeaderCount    int
	headers        []byte // the validated header section
}

// Headers returns an iterator over the record's headers.
func (r *Record) Headers() HeaderIter { return HeaderIter{src: r.headers, left: r.HeaderCount} }

// HeaderIter walks a record's headers, which RecordIter has validated.
type HeaderIter struct {
	src  []byte
	left int
}

// Next returns the next header's key and value (nil for a null value), or
// ok=false after the last one.
func (h *HeaderIter) Next() (key, value []byte, ok bool) {
	if h.left <= 0 {
		return nil, nil, false
	}
	h.left--
	r := recReader{b: h.src}
	key = r.bytes()
	value = r.bytes()
	h.src = r.b
	return key, value, true
}

// RecordIter reads the records of a batch one at a time without allocating.
// It checks every length against the bytes present, every varint for
// overflow, that each record's fields fill exactly its length, and that the
// section holds exactly the batch's record count.
//
//	it := NewRecordIter(records, h.NumRecords)
//	var rec Record
//	for it.Next(&rec) { ... }
//	if err := it.Err(); err != nil { ... } // wraps ErrInvalidRecord
type RecordIter struct {
	src   []byte
	count int32
	index int32
	err   error
}

// NewRecordIter returns an iterator over src, the (decompressed) records
// section of a batch that declares count records.
func NewRecordIter(src []byte, count int32) RecordIter {
	return RecordIter{src: src, count: count}
}

// NewBatchRecordIter returns an iterator over the records of batch, a
// whole RecordBatch v2 (ValidateBatch it first). A compressed records
// section is decompressed into scratch (grown as needed, reset to length 0
// first) with at most limit bytes of output; the returned scratch is for
// reuse by the caller and backs the records' slices.
func NewBatchRecordIter(batch, scratch []byte, limit int) (RecordIter, []byte, error) {
	h, err := ParseBatchHeader(batch)
	if err != nil {
		return RecordIter{}, scratch, err
	}
	end := min(int64(len(batch)), h.Size())
	if end < BatchHeaderSize {
		return RecordIter{}, scratch, ErrBatchLength
	}
	records := batch[BatchHeaderSize:end]
	if h.Codec() != CodecNone {
		scratch, err = Decompress(scratch[:0], h.Codec(), records, limit)
		if err != nil {
			return RecordIter{}, scratch, err
		}
		records = scratch
	}
	return NewRecordIter(records, h.NumRecords), scratch, nil
}

// Next reads the next record into rec and reports whether there was one.
// It returns false at the end or on the first error (see Err).
func (it *RecordIter) Next(rec *Record) bool {
	if it.err != nil {
		return false
	}
	if it.index >= it.count || it.count < 0 {
		if len(it.src) != 0 || it.count < 0 {
			it.fail(ErrRecordCount, fmt.Sprintf("%d bytes after record %d of %d", len(it.src), it.index, it.count))
		}
		return false
	}
	if len(it.src) == 0 {
		it.fail(ErrRecordCount, fmt.Sprintf("section ends after %d of %d records", it.index, it.count))
		return false
	}
	r := recReader{b: it.src}
	n := r.varint()
	if r.err != nil {
		it.fail(r.err, "record length")
		return false
	}
	if n < 0 || int64(n) > int64(len(r.b)) {
		it.fail(ErrRecordLength, fmt.Sprintf("record length %d with %d bytes left", n, len(r.b)))
		return false
	}
	body := recReader{b: r.b[:n]}
	it.src = r.b[n:]
	if len(body.b) == 0 {
		it.fail(ErrRecordLength, "empty record")
		return false
	}
	rec.Attributes = int8(body.b[0])
	body.b = body.b[1:]
	rec.TimestampDelta = body.varlong()
	rec.OffsetDelta = body.varint()
	rec.Key = body.bytes()
	rec.Value = body.bytes()
	hc := body.varint()
	if body.err == nil && (hc < 0 || int64(hc) > int64(len(body.b))) {
		body.err = ErrRecordLength
	}
	headers := body.b
	for i := int32(0); i < hc && body.err == nil; i++ {
		if k := body.bytes(); k == nil && body.err == nil {
			body.err = ErrRecordLength // header keys are never null
		}
		body.bytes()
	}
	if body.err == nil && len(body.b) != 0 {
		body.err = ErrRecordLength // fields end before the record does
	}
	if body.err != nil {
		it.fail(body.err, "")
		return false
	}
	rec.HeaderCount = int(hc)
	rec.headers = headers
	it.index++
	return true
}

// Err returns the first validation error, or nil if every record read so
// far was valid and the section held exactly count records.
func (it *RecordIter) Err() error { return it.err }

// Index is the number of records read so far.
func (it *RecordIter) Index() int32 { return it.index }

func (it *RecordIter) fail(kind error, detail string) {
	if detail == "" {
		it.err = fmt.Errorf("%w (record %d)", kind, it.index)
	} else {
		it.err = fmt.Errorf("%w (record %d: %s)", kind, it.index, detail)
	}
	it.src = nil
}

// recReader reads record fields with a sticky error.
type recReader struct {
	b   []byte
	err error
}

// uvarint reads an unsigned varint of at most maxBytes bytes.
func (r *recReader) uvarint(maxBytes int) uint64 {
	if r.err != nil {
		return 0
	}
	var x uint64
	for i := 0; i < maxBytes; i++ {
		if i >= len(r.b) {
			r.err = ErrRecordVarint
			return 0
		}
		c := r.b[i]
		if i == 9 && c > 1 {
			break // beyond 64 bits
		}
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			r.b = r.b[i+1:]
			return x
		}
	}
	r.err = ErrRecordVarint
	return 0
}

// varint reads a zigzag int32 (at most 5 bytes, value within int32).
func (r *recReader) varint() int32 {
	u := r.uvarint(5)
	if u > 0xffffffff {
		r.err = ErrRecordVarint
		return 0
	}
	return int32(uint32(u)>>1) ^ -int32(uint32(u)&1)
}

// varlong reads a zigzag int64 (at most 10 bytes).
func (r *recReader) varlong() int64 {
	u := r.uvarint(10)
	return int64(u>>1) ^ -int64(u&1)
}

// bytes reads a varint length and that many bytes; -1 is null (nil).
func (r *recReader) bytes() []byte {
	n := r.varint()
	if r.err != nil {
		return nil
	}
	if n == -1 {
		return nil
	}
	if n < 0 || int64(n) > int64(len(r.b)) {
		r.err = ErrRecordLength
		return nil
	}
	b := r.b[:n:n]
	r.b = r.b[n:]
	return b
}
