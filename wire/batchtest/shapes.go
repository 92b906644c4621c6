package batchtest

// Ready-made batches for tests that need "a batch" rather than particular
// records. Their bytes are fixed, so a test may compute sizes from one and
// expect multiples.

// Plain returns a batch of n records, each with a null key, the value
// "value" and timestamp ts, built with opts: the everyday batch of the
// produce and validation tests. Producer(...) makes it idempotent,
// Compression(...) compresses it.
func Plain(n int, ts int64, opts ...Option) []byte {
	return Build(Repeat(n, Record{Value: []byte("value"), Timestamp: ts}), opts...)
}

// Repeat returns n copies of r.
func Repeat(n int, r Record) []Record {
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = r
	}
	return recs
}

// Sized returns an uncompressed batch of n records with null keys and
// valueSize-byte values (record i's value is the bytes i, i+1, ..., mod
// 256) and timestamps 0, 1, ..., n-1: a batch whose size depends only on
// n and valueSize, for the fetch and log tests that count bytes. Base
// offset 0 and no producer, as a producer sends it.
func Sized(n, valueSize int) []byte {
	recs := make([]Record, n)
	for i := range recs {
		v := make([]byte, valueSize)
		for j := range v {
			v[j] = byte(i + j)
		}
		recs[i] = Record{Value: v, Timestamp: int64(i)}
	}
	return Build(recs)
}
