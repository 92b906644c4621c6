// Package wire is the Kafka protocol as bytes: request and response header
// codecs, message bodies through franz-go's kmsg, the one table of
// advertised API versions, Kafka error codes, the RecordBatch v2 header and
// its CRC-32C, compression codecs, and the hand-written Fetch response
// encoder that leaves file regions for sendfile.
//
// Threading: pure functions and immutable tables; everything is safe for
// concurrent use. wire does no I/O and keeps no clock.
//
// Imports: no other package of this project (design.md).
//
// RecordBatch v2 layout (big-endian; part of the wire and on-disk format):
//
//	0  baseOffset int64        27 baseTimestamp int64
//	8  batchLength int32       35 maxTimestamp int64
//	12 partitionLeaderEpoch    43 producerId int64
//	16 magic int8 (2)          51 producerEpoch int16
//	17 crc uint32 (CRC-32C     53 baseSequence int32
//	   of bytes [21:])         57 recordCount int32
//	21 attributes int16        61 records...
//	23 lastOffsetDelta int32
//
// baseOffset, batchLength, partitionLeaderEpoch and magic are outside the
// CRC, so a broker assigns offsets and epochs in place without recomputing it.
package wire
