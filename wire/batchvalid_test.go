package wire

import (
	"encoding/binary"
	"testing"
)

// TestBatchValidMatchesValidateBatch holds the append path's fast check
// to the reference: for single-byte and single-bit corruptions of every
// header and body byte, and for fields changed under a recomputed CRC,
// BatchValid accepts exactly what ValidateBatch accepts.
func TestBatchValidMatchesValidateBatch(t *testing.T) {
	check := func(b []byte, what string) {
		t.Helper()
		_, err := ValidateBatch(b)
		if got := BatchValid(b); got != (err == nil) {
			t.Fatalf("%s: BatchValid %v, ValidateBatch %v", what, got, err)
		}
	}
	for _, orig := range [][]byte{testBatch(CodecNone, 1000, sampleRecords()...), testBatch(CodecGzip, 5, sampleRecords()[:1]...)} {
		check(orig, "intact")
		for pos := BatchLengthPos; pos < len(orig); pos++ {
			for _, v := range []byte{0, 1, 2, 3, 4, 5, 7, 0x80, 0xff} {
				b := append([]byte(nil), orig...)
				b[pos] = v
				check(b, "byte set")
			}
			for bit := range 8 {
				b := append([]byte(nil), orig...)
				b[pos] ^= 1 << bit
				check(b, "bit flip")
			}
		}
		// Changed fields with a CRC recomputed: only the semantic checks
		// can reject these.
		for _, f := range []struct {
			pos  int
			vals []uint32
		}{
			{BatchRecordCountPos, []uint32{0, 1, 2, 3, 4, 0x80000000, 0xffffffff}},
			{BatchLastOffsetDeltaPos, []uint32{0, 1, 2, 3, 0x7fffffff, 0xffffffff}},
		} {
			for _, v := range f.vals {
				b := append([]byte(nil), orig...)
				binary.BigEndian.PutUint32(b[f.pos:], v)
				binary.BigEndian.PutUint32(b[BatchCRCPos:], CRC32C(b[BatchAttributesPos:]))
				check(b, "field with valid CRC")
			}
		}
		for _, rd := range [][2]uint32{{0, 0xffffffff}, {0x80000000, 0x7fffffff}, {2, 1}, {0xffffffff, 0xfffffffe}} {
			b := append([]byte(nil), orig...)
			binary.BigEndian.PutUint32(b[BatchRecordCountPos:], rd[0])
			binary.BigEndian.PutUint32(b[BatchLastOffsetDeltaPos:], rd[1])
			binary.BigEndian.PutUint32(b[BatchCRCPos:], CRC32C(b[BatchAttributesPos:]))
			check(b, "records and lastOffsetDelta with valid CRC")
		}
		for attrs := range 1 << 8 {
			b := append([]byte(nil), orig...)
			binary.BigEndian.PutUint16(b[BatchAttributesPos:], uint16(attrs))
			binary.BigEndian.PutUint32(b[BatchCRCPos:], CRC32C(b[BatchAttributesPos:]))
			check(b, "attributes with valid CRC")
		}
	}
}
