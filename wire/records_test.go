package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

func checkRecords(t *testing.T, it RecordIter, want []kmsg.Record) {
	t.Helper()
	var rec Record
	i := 0
	for it.Next(&rec) {
		if i >= len(want) {
			t.Fatalf("extra record %d", i)
		}
		w := want[i]
		if rec.OffsetDelta != int32(i) || rec.TimestampDelta != w.TimestampDelta64 {
			t.Fatalf("record %d: offset delta %d ts delta %d", i, rec.OffsetDelta, rec.TimestampDelta)
		}
		if (rec.Key == nil) != (w.Key == nil) || !bytes.Equal(rec.Key, w.Key) {
			t.Fatalf("record %d: key %q (nil %v), want %q (nil %v)", i, rec.Key, rec.Key == nil, w.Key, w.Key == nil)
		}
		if (rec.Value == nil) != (w.Value == nil) || !bytes.Equal(rec.Value, w.Value) {
			t.Fatalf("record %d: value differs", i)
		}
		if rec.HeaderCount != len(w.Headers) {
			t.Fatalf("record %d: %d headers", i, rec.HeaderCount)
		}
		h := rec.Headers()
		for j := 0; ; j++ {
			k, v, ok := h.Next()
			if !ok {
				if j != len(w.Headers) {
					t.Fatalf("record %d: header iterator stopped at %d", i, j)
				}
				break
			}
			if string(k) != w.Headers[j].Key || !bytes.Equal(v, w.Headers[j].Value) || (v == nil) != (w.Headers[j].Value == nil) {
				t.Fatalf("record %d header %d: %q=%q", i, j, k, v)
			}
		}
		i++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if i != len(want) {
		t.Fatalf("read %d records, want %d", i, len(want))
	}
}

func TestRecordIterEveryCodec(t *testing.T) {
	for _, codec := range allCodecs {
		batch := testBatch(codec, 1700000000000, sampleRecords()...)
		h, err := ValidateBatch(batch)
		if err != nil {
			t.Fatalf("codec %d: %v", codec, err)
		}
		if h.Codec() != codec || h.NumRecords != 4 {
			t.Fatalf("codec %d: header %+v", codec, h)
		}
		it, scratch, err := NewBatchRecordIter(batch, nil, 1<<20)
		if err != nil {
			t.Fatalf("codec %d: %v", codec, err)
		}
		if codec == CodecNone && scratch != nil {
			t.Fatal("uncompressed batch used scratch")
		}
		checkRecords(t, it, sampleRecords())
	}
}

func TestRecordIterErrors(t *testing.T) {
	var section []byte
	for _, r := range sampleRecords() {
		section = append(section, encodeRecord(r)...)
	}
	one := encodeRecord(kmsg.Record{Key: []byte("k"), Value: []byte("v")})
	tests := []struct {
		name  string
		src   []byte
		count int32
		want  error
	}{
		{"fewer records than count", section, 5, ErrRecordCount},
		{"more records than count", section, 3, ErrRecordCount},
		{"negative count", one, -1, ErrRecordCount},
		{"truncated", section[:len(section)-1], 4, ErrRecordLength},
		{"length beyond buffer", []byte{0x7e, 0}, 1, ErrRecordLength}, // 63
		{"negative length", []byte{0x01, 0, 0}, 1, ErrRecordLength},   // -1
		{"varint too long", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 1, ErrRecordVarint},
		{"varint cut", []byte{0x80}, 1, ErrRecordVarint},
		{"empty record", []byte{0}, 1, ErrRecordLength},
		{"key length -2", []byte{8, 0, 0, 0, 3, 0, 0, 0, 0}, 1, ErrRecordLength},
		{"fields shorter than length", append([]byte{byte(2 * len(one))}, append(append([]byte{}, one[1:]...), 0)...), 1, ErrRecordLength},
		{"null header key", []byte{14, 0, 0, 0, 1, 1, 2, 1, 0, 0, 0, 0, 0, 0}, 1, ErrRecordLength},
		{"header count beyond", []byte{12, 0, 0, 0, 1, 1, 0x7e, 0, 0, 0, 0, 0}, 1, ErrRecordLength},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it := NewRecordIter(tc.src, tc.count)
			var rec Record
			for it.Next(&rec) {
			}
			if !errors.Is(it.Err(), tc.want) || !errors.Is(it.Err(), ErrInvalidRecord) {
				t.Fatalf("error %v, want %v", it.Err(), tc.want)
			}
			if it.Next(&rec) {
				t.Fatal("Next after an error")
			}
		})
	}
	// The one-record section is valid as such.
	it := NewRecordIter(one, 1)
	var rec Record
	if !it.Next(&rec) || it.Next(&rec) || it.Err() != nil || it.Index() != 1 {
		t.Fatalf("valid single record: %v", it.Err())
	}
}

func TestRecordIterNoAllocs(t *testing.T) {
	batch := testBatch(CodecNone, 0, sampleRecords()...)
	allocs := testing.AllocsPerRun(100, func() {
		it, _, _ := NewBatchRecordIter(batch, nil, 1<<20)
		var rec Record
		n := 0
		for it.Next(&rec) {
			h := rec.Headers()
			for _, _, ok := h.Next(); ok; _, _, ok = h.Next() {
			}
			n++
		}
		if n != 4 || it.Err() != nil {
			panic("bad iteration")
		}
	})
	if allocs != 0 {
		t.Fatalf("iterating allocated %v times", allocs)
	}
}

// FuzzRecords: any section and count either iterates to a clean end or
// stops with an ErrInvalidRecord, never panicking, never reading past src.
func FuzzRecords(f *testing.F) {
	for _, e := range recordSeeds() {
		f.Add(e.args[0].([]byte), e.args[1].(int64))
	}
	f.Fuzz(func(t *testing.T, src []byte, count64 int64) {
		count := int32(count64)
		it := NewRecordIter(src, count)
		var rec Record
		total := 0
		for it.Next(&rec) {
			total += len(rec.Key) + len(rec.Value)
			h := rec.Headers()
			for k, v, ok := h.Next(); ok; k, v, ok = h.Next() {
				total += len(k) + len(v)
			}
		}
		if total > len(src) {
			t.Fatal("records cover more bytes than the section")
		}
		if err := it.Err(); err != nil && !errors.Is(err, ErrInvalidRecord) {
			t.Fatalf("untyped error %v", err)
		}
		if it.Err() == nil && it.Index() != count {
			t.Fatalf("clean end after %d of %d records", it.Index(), count)
		}
	})
}

func recordSeeds() []corpusEntry {
	var section []byte
	for _, r := range sampleRecords() {
		section = append(section, encodeRecord(r)...)
	}
	return []corpusEntry{
		{"four", []any{section, int64(4)}},
		{"one", []any{encodeRecord(kmsg.Record{Key: []byte("k"), Value: []byte("v")}), int64(1)}},
	}
}

// FuzzValidateBatch: any bytes either fail ValidateBatch with an ErrBatch*
// error or pass; a passing batch's records iterate (with bounded
// decompression) without panicking.
func FuzzValidateBatch(f *testing.F) {
	for _, e := range batchSeeds() {
		f.Add(e.args[0].([]byte))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		validateAndIterate(t, b)
		// Random bytes almost never carry a right length and CRC; fix
		// both in a copy so the fuzzer reaches the codecs and records.
		if len(b) >= BatchHeaderSize {
			fixed := append([]byte{}, b...)
			binary.BigEndian.PutUint32(fixed[BatchLengthPos:], uint32(len(fixed)-BatchLogOverhead))
			binary.BigEndian.PutUint32(fixed[BatchCRCPos:], CRC32C(fixed[BatchAttributesPos:]))
			validateAndIterate(t, fixed)
		}
	})
}

func validateAndIterate(t *testing.T, b []byte) {
	h, err := ValidateBatch(b)
	if BatchValid(b) != (err == nil) {
		t.Fatalf("BatchValid %v, ValidateBatch %v", BatchValid(b), err)
	}
	if err != nil {
		if ErrorCodeOf(err) == kerr.UnknownServerError {
			t.Fatalf("untyped error %v", err)
		}
		return
	}
	if h.Size() != int64(len(b)) || h.NumRecords <= 0 || h.LastOffsetDelta != h.NumRecords-1 {
		t.Fatalf("accepted header %+v for %d bytes", h, len(b))
	}
	it, out, err := NewBatchRecordIter(b, nil, 1<<20)
	if err != nil {
		if ErrorCodeOf(err) == kerr.UnknownServerError {
			t.Fatalf("untyped error %v", err)
		}
		return
	}
	if len(out) > 1<<20 {
		t.Fatal("decompressed past the limit")
	}
	var rec Record
	for it.Next(&rec) {
	}
	if err := it.Err(); err != nil && ErrorCodeOf(err) != kerr.InvalidRecord {
		t.Fatalf("record error %v maps to %s", err, ErrorCodeOf(err).String())
	}
}

func batchSeeds() []corpusEntry {
	var out []corpusEntry
	for _, codec := range allCodecs {
		out = append(out, corpusEntry{fmt.Sprintf("codec%d", codec), []any{testBatch(codec, 1700000000000, sampleRecords()...)}})
	}
	return out
}

func init() {
	extraCorporaFns["FuzzRecords"] = recordSeeds
	extraCorporaFns["FuzzValidateBatch"] = batchSeeds
}
