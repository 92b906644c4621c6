// Package batchtest builds Kafka RecordBatch v2 bytes for tests: valid
// batches (magic 2, correct length and CRC-32C) with the records, codec,
// producer id/epoch/sequence, timestamps and attribute bits a test asks
// for. Every package's tests may import it; segment's tests may import
// only wire, which is why it lives here.
//
//	b := batchtest.Build(batchtest.Values(1000, []byte("a"), []byte("b")),
//		batchtest.Compression(wire.CodecZstd, wire.Compress),
//		batchtest.Producer(7, 0, 42))
//
// Plain (n records of value "value", one timestamp, any options) and
// Sized (n records of valueSize-byte values, for tests that count bytes)
// are the ready-made batches most tests need.
//
// It encodes the format itself, from Kafka's specification, and imports
// nothing of this project: wire's own (in-package) tests can use it
// without an import cycle, and a mistake in wire's decoder or constants
// is not repeated here. Compression is the one thing it borrows, passed
// in as a function (wire.Compress) for the same reason.
//
// # Layout
//
// The 61-byte header, big-endian: baseOffset int64, batchLength int32
// (bytes after this field), partitionLeaderEpoch int32, magic int8 (2),
// crc uint32 (CRC-32C of everything from attributes on), attributes
// int16, lastOffsetDelta int32, baseTimestamp int64, maxTimestamp int64,
// producerId int64, producerEpoch int16, baseSequence int32, records
// int32; then the records, compressed as a whole when the codec is not
// none. A record: length varint, attributes int8 (0), timestampDelta
// varlong, offsetDelta varint, key and value (varint length, -1 = null),
// header count varint, each header a varint-length key and a value
// (varint length, -1 = null). Varints are zigzag, as in protobuf.
//
// # Threading
//
// Functions only; no state.
package batchtest
