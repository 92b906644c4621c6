package partition

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/gather"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/segment"
)

// The messages a partition actor receives, one type per request. Each
// request that is answered carries where the answer goes (Out, owned by
// the message until the reply slot is put) and its Reply slot; the actor
// fills Out and puts Reply exactly once, from its own goroutine. A
// message sent to a partition actor that has stopped goes to
// protoactor's dead letters; the gather behind Reply answers the request
// at its deadline instead. FetchSlot is the exception: dead letters hand
// it back (see the fetch package).
type (
	// ProduceRequest is one partition's part of a Produce request (or a
	// coordinator's append). Reply is put once the answer is final: at
	// once for an error, or when the batch is durable under the topic's
	// flush policy. It is the core's Ticket for the answer.
	ProduceRequest struct {
		Records []byte // aliases the request frame; append stamps it in place
		Version int16
		Acks    int16
		// Coordinator: sent by a coordinator, not a client (see
		// Produce.Coordinator).
		Coordinator bool
		// TransactionalID is the request's, "" when none (KIP-890's
		// verification asks its coordinator).
		TransactionalID string
		Out             *kmsg.ProduceResponseTopicPartition
		Reply           gather.Slot
		// RecordsRead, when set, is called once as soon as the
		// partition no longer reads Records (appended, or refused),
		// on its goroutine: for acks=all well before Reply, which
		// waits for the ISR, so the frame's memory can be reused
		// meanwhile. A batch waiting for its verification keeps it.
		RecordsRead func()
		guard       uint64 // the verification's, once the coordinator verified the batch
	}

	// WriteMarker is one partition's part of WriteTxnMarkers: the
	// transaction coordinator's COMMIT or ABORT marker for a producer,
	// answered into Out once the ISR has it (like acks=all).
	WriteMarker struct {
		ProducerID       int64
		ProducerEpoch    int16
		Commit           bool
		CoordinatorEpoch int32
		Out              *kmsg.WriteTxnMarkersResponseMarkerTopicPartition
		Reply            gather.Slot
	}

	// ListOffsets answers one partition of ListOffsets into Out (whose
	// Timestamp, Offset and LeaderEpoch start at -1).
	ListOffsets struct {
		Timestamp    int64
		CurrentEpoch int32 // the client's leader epoch, -1: unchecked
		Follower     bool  // a replica asks: bounded by the log end, not the high watermark
		// ReadCommitted: isolation level read_committed (v2+): the
		// latest offset is the last stable offset.
		ReadCommitted bool
		Out           *kmsg.ListOffsetsResponseTopicPartition
		Reply         gather.Slot
	}

	// DeleteRecords raises the log start offset to Offset (-1: the high
	// watermark) and answers the new low watermark into Out.
	DeleteRecords struct {
		Offset int64
		Out    *kmsg.DeleteRecordsResponseTopicPartition
		Reply  gather.Slot
	}

	// EndOffsetForEpoch answers one partition of OffsetForLeaderEpoch.
	EndOffsetForEpoch struct {
		CurrentEpoch int32
		Epoch        int32
		Out          *kmsg.OffsetForLeaderEpochResponseTopicPartition
		Reply        gather.Slot
	}

	// ReadChunk reads whole batches from From below the high watermark,
	// at most MaxBytes (ChunkBytes when 0; but always one batch): a
	// coordinator loading its partition, or a share group reading records
	// to hand out. A coordinator's load of a partition it now leads reads
	// to the log end (readChunk); Committed keeps the read below the high
	// watermark even there, as consumers' reads are.
	ReadChunk struct {
		From      int64
		MaxBytes  int
		Committed bool
		Out       *Chunk
		Reply     gather.Slot
	}

	// Reconfigure applies a new effective topic config to the live log
	// (Log) and to produce validation (Topic).
	Reconfigure struct {
		Log   segment.Config
		Topic config.Topic
	}

	// ReportSize asks for the log's size in bytes, put into Reply.
	ReportSize struct{ Reply gather.Slot }

	// Delete closes the log, removes its files and stops the actor;
	// Reply is put when the files are gone.
	Delete struct{ Reply gather.Slot }

	// ApplyRetention applies retention.ms and retention.bytes at Now.
	ApplyRetention struct{ Now time.Time }

	// Health tells the parent (the metadata actor) whether the log is
	// open, after each open that changes it.
	Health struct {
		ID        metadata.TopicID
		Partition int32
		Offline   bool
	}

	// durableUpTo is sent by segment's flush goroutine (through
	// WhenDurable) to the partition itself: offsets below end are
	// durable, or err says they never will be.
	durableUpTo struct {
		end int64
		err error
	}
)

// Chunk is what a ReadChunk read: Data (whole batches), the offset to
// read next, and the end the load stops at (the high watermark).
type Chunk struct {
	Data      []byte
	Next, End int64
	Err       error
}

// ChunkBytes is how much of a partition one ReadChunk reads: the actor is
// busy for one such read at a time, so produce and fetch to it interleave
// with a long load.
const ChunkBytes = 4 << 20

// Request is a message that is answered into a gather slot; a fan-out
// sets the slot as it sends it.
type Request interface{ ReplyTo(gather.Slot) }

// ReplyTo sets where the answer goes.
func (m *ProduceRequest) ReplyTo(s gather.Slot) { m.Reply = s }

// ReplyTo sets where the answer goes.
func (m *ListOffsets) ReplyTo(s gather.Slot) { m.Reply = s }

// ReplyTo sets the slot the answer goes to.
func (m *WriteMarker) ReplyTo(s gather.Slot) { m.Reply = s }

// ReplyTo sets where the answer goes.
func (m *DeleteRecords) ReplyTo(s gather.Slot) { m.Reply = s }

// ReplyTo sets where the answer goes.
func (m *EndOffsetForEpoch) ReplyTo(s gather.Slot) { m.Reply = s }
