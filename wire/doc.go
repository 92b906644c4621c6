// Package wire is the Kafka protocol as bytes: request and response header
// codecs, message bodies through franz-go's kmsg, the one table of
// advertised API versions and the ApiVersions handler built from it, the
// RecordBatch v2 header and its CRC-32C, a record iterator, compression
// codecs, and the hand-written Fetch response encoder that leaves file
// regions for sendfile. Kafka error codes are in the sub-package wire/kerr.
//
// Threading: pure functions and immutable tables; everything is safe for
// concurrent use (codec state lives in sync.Pools). wire does no I/O other
// than RegionFile.ReadAt in Response.AppendTo, and keeps no clock.
//
// Imports: no other package of this project, and not net (so not kgo):
// design.md and internal/lint.
//
// # Files
//
//	exchange.go     Request, Response, Chunk, RegionFile: the netloop/actors contract
//	codec.go        DecodeRequest, AppendResponse, EncodeResponse
//	apis.go         APIs (served), plannedAPIs (next), LookupAPI, Accepts
//	apiversions.go  HandleApiVersions
//	batch.go        RecordBatch v2 header, ValidateBatch, in-place setters
//	records.go      RecordIter, Record, HeaderIter
//	compress.go     Decompress, Compress (gzip, snappy, lz4, zstd)
//	fetch.go        EncodeFetchResponse (Fetch v4-17)
//	kerr/           Code: error numbers, names, retriability, messages
//
// # Framing
//
// Every request and response on a connection is an int32 big-endian size
// followed by that many bytes. netloop splits frames and enforces the size
// limit; DecodeRequest takes one frame without its size.
//
// Request header v1, used by non-flexible API versions:
//
//	apiKey int16 | apiVersion int16 | correlationId int32 | clientId nullable string (int16 length)
//
// Request header v2, used by flexible versions, adds a tagged-field section
// after clientId. The client id stays a classic int16-length string even
// there (clients send it before they know the broker's versions); a null
// client id reads as "". Header v0 (no client id) only ever served
// ControlledShutdown v0, which the broker does not implement.
//
// Response header v0 is the correlationId; v1 adds an empty tagged-field
// section (one 0 byte) and is used for flexible versions. ApiVersions
// responses always use v0, whatever the version, so that a client that
// sent a version the broker does not know can still read the error code at
// a fixed offset. An ApiVersions request of an unknown version is
// answered, not refused (KIP-511): a v0 body with UNSUPPORTED_VERSION and
// the ApiVersions row, after which the client retries with a version both
// sides know. Produce with acks=0 gets no response at all (Request.Reply
// with nil).
//
// DecodeRequest refuses, with a *DecodeError that carries the header read
// so far, a frame too short for its header, a key the broker does not serve
// (ErrUnknownAPI), a version outside the API's accepted range
// (ErrUnsupportedVersion) and a body kmsg cannot read (ErrMalformedBody).
// The caller logs one line with the client's address and the error, and
// closes the connection: that is what Kafka does, and the client's own
// ApiVersions negotiation makes it rare. No input panics the decoder; the
// fuzz targets (FuzzDecodeRequest and friends, seeds in testdata/fuzz/) are
// the evidence.
//
// # Versions
//
// APIs is the one table that both builds the ApiVersions response and
// decides what DecodeRequest accepts, so the broker never advertises what
// it refuses, nor serves what it does not advertise. A row has an
// advertised [Min, Max] and an accepted [Accept, Max]. Only served APIs are
// listed (advertising an unserved API makes clients use it: Java pushes
// telemetry if keys 71/72 appear); the rows still waiting for a handler are
// in plannedAPIs, and enabling an API is moving its row in the same commit
// as its handler (the seed corpus and round-trip tests already cover it).
// Ranges are subsets of what Kafka 4.x brokers advertise, widened
// downwards where a mainstream client needs an old version (facts from
// reference/kafka-protocol.md §1c-d, checked by TestRangesServeEveryClient):
//
//   - ApiVersions 0-4: kafka-go and kafka-python 2.0 send v0, kafkajs 2.2.4
//     v2, librdkafka and sarama v3, Java and franz-go v4.
//   - Metadata 0-12: kafka-go's Conn and kafka-python 2.0 send v1,
//     librdkafka 2.0 at most v4, kafkajs at most v6.
//   - Produce is advertised from 0 but accepted from 3, as Kafka 4 does
//     (KAFKA-18659): librdkafka before 2.10 disables compression unless
//     Produce overlaps [0,0]; v3 is the first RecordBatch v2 version, and
//     kafkajs and librdkafka 2.0 send at most 7. Produce 12 and EndTxn 5
//     (transactions v2, KIP-890) stay out until implemented.
//   - Fetch from 4, the first RecordBatch-only version and what
//     kafka-python 2.0 sends; librdkafka 2.0 and kafkajs send at most 11.
//     13 names topics by ID (the topic IDs the metadata persists); 17,
//     what Kafka 3.9 serves and its followers send, is the highest
//     version EncodeFetchResponse writes.
//   - JoinGroup from 0: librdkafka < 2.11 derives SASL/GSSAPI support from
//     a [0,0] overlap; kafka-go <= 0.4.47 and sarama <= 1.40 send v1.
//     Heartbeat, SyncGroup, LeaveGroup and FindCoordinator from 0: kafka-go
//     sends v0. OffsetCommit from 2 and OffsetFetch from 1: kafka-go and
//     kafka-python 2.0.
//   - CreateTopics and DeleteTopics from 0: kafka-go <= 0.4.47 sends v0
//     without negotiating (Kafka 4.0 dropped those and broke it).
//     DescribeConfigs from 0: sarama with Config.Version < 1.1 sends v0.
//   - OffsetForLeaderEpoch 2-4: librdkafka >= 2.1 sends exactly v2 without
//     checking; Java validates positions only when the max is >= 3.
//   - InitProducerId from 0, AddPartitionsToTxn and AddOffsetsToTxn from 0:
//     kafkajs sends v0-1, librdkafka v0 only. AddPartitionsToTxn up to 5
//     and EndTxn up to 4, as Kafka 3.9: clients stop AddPartitionsToTxn at
//     3, and 4+ is the partition leaders' KIP-890 verification (VerifyOnly);
//     EndTxn 4 only says the client knows TRANSACTION_ABORTABLE.
//
// No features (SupportedFeatures, FinalizedFeatures) are advertised, so
// Java producers use the classic transaction protocol.
//
// # Borrowing
//
// A decoded Request's Frame is the frame given to DecodeRequest, and its
// Body keeps byte fields (Produce records, group member metadata and
// assignments, SASL bytes) as sub-slices of Frame: the frame must not be
// reused or returned to a pool until the request and everything taken from
// its body are done with (a Produce frame lives until its batches are
// appended). Strings (topic names, client id, group ids) are copied and may
// outlive the frame. Records from RecordIter alias the section they were
// read from (the batch, or the scratch buffer it was decompressed into).
// EncodeFetchResponse places the caller's record chunks in the Response as
// they are; Response.Done is where the caller releases them.
//
// # Error codes
//
// Clients only ever see Kafka error codes and messages (wire/kerr), never
// Go error text. Inside the broker, errors are typed Go errors with a
// package prefix ("wire: ..."); the handler that builds a response maps
// them to a kerr.Code (kerr.CodeOf finds a Code wrapped in an error chain,
// anything else is UNKNOWN_SERVER_ERROR). The mapping for this package's
// errors:
//
//	ErrBatchTooShort, ErrBatchLength, ErrBatchCRC       CORRUPT_MESSAGE
//	ErrBatchMagic                                       UNSUPPORTED_FOR_MESSAGE_FORMAT
//	ErrBatchCodec, ErrCodecUnknown                      UNSUPPORTED_COMPRESSION_TYPE
//	ErrBatchEmpty, ErrBatchRecordCount, ErrInvalidRecord INVALID_RECORD
//	ErrCorruptCompressed                                CORRUPT_MESSAGE
//	ErrDecompressLimit                                  MESSAGE_TOO_LARGE
//
// Request-level decode errors have no code: the connection is closed.
//
// # RecordBatch v2 layout
//
// Big-endian; part of the wire and on-disk format:
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
// CRC, so a broker assigns offsets and epochs in place without recomputing
// it. Attributes: bits 0-2 codec (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd),
// 3 LogAppendTime, 4 transactional, 5 control, 6 delete horizon. When
// compressed, everything after byte 61 is one compressed stream of records;
// recordCount stays uncompressed. The record layout is on Record.
//
// # Compression
//
// Decompress takes an output limit and never allocates more than it, so a
// small batch that claims gigabytes costs nothing. Snappy comes in two
// shapes: a raw block (franz-go, librdkafka, sarama) or xerial framing
// (the Java producer: magic 82 'SNAPPY' 00, int32 version 1, int32
// compatible 1, then int32-length-prefixed raw blocks); both are decoded
// strictly (standard snappy only, as Java reads it; S2 extensions are
// corrupt). Compress writes what Kafka's broker writes: gzip, xerial snappy
// with 32 KiB blocks, lz4 frames with 64 KiB blocks, zstd frames.
//
// # Fetch response encoding
//
// EncodeFetchResponse writes the frame size, the response header and every
// field except record data into one buffer, and returns chunks that
// alternate between that buffer and the caller's record chunks:
//
//	[size corr (tags) throttle error session topics... partition fields, records length]
//	[record chunk: file region or bytes] [record chunk] ...
//	[partition tags, next partition's fields, records length]
//	[record chunk] ...
//	[trailing tags]
//
// The records length is the sum of the partition's chunk lengths, written
// as int32 before v12 and as compact uvarint(length+1) from v12; the frame
// size is the sum of everything. Per version: v4 adds lastStableOffset and
// abortedTransactions (nullable), v5 logStartOffset, v7 the top-level
// errorCode and sessionId, v11 preferredReadReplica, v12 flexible encoding
// (compact lengths, tagged fields: divergingEpoch tag 0 and currentLeader
// tag 1 per partition), v13 topic IDs instead of names, v16 the top-level
// nodeEndpoints (tag 0: id, host, port, rack of the brokers that the
// partitions' currentLeader name). v14, v15 and v17 change only the
// request.
package wire
