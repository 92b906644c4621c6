package txn

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// TopicPartition names one partition a transaction writes to (or the
// __consumer_offsets partition its offsets go to).
type TopicPartition struct {
	Topic     string
	Partition int32
}

// State is a transaction's state, with Kafka's numbering (the byte in the
// __transaction_state value).
type State = kmsg.TransactionState

// The states, by Kafka's names.
const (
	Empty             = kmsg.TransactionStateEmpty
	Ongoing           = kmsg.TransactionStateOngoing
	PrepareCommit     = kmsg.TransactionStatePrepareCommit
	PrepareAbort      = kmsg.TransactionStatePrepareAbort
	CompleteCommit    = kmsg.TransactionStateCompleteCommit
	CompleteAbort     = kmsg.TransactionStateCompleteAbort
	Dead              = kmsg.TransactionStateDead
	PrepareEpochFence = kmsg.TransactionStatePrepareEpochFence
)

// StateName is Kafka's name of s, as DescribeTransactions and
// ListTransactions report it ("Ongoing", "CompleteCommit", ...).
func StateName(s State) string {
	switch s {
	case Empty:
		return "Empty"
	case Ongoing:
		return "Ongoing"
	case PrepareCommit:
		return "PrepareCommit"
	case PrepareAbort:
		return "PrepareAbort"
	case CompleteCommit:
		return "CompleteCommit"
	case CompleteAbort:
		return "CompleteAbort"
	case Dead:
		return "Dead"
	case PrepareEpochFence:
		return "PrepareEpochFence"
	}
	return "Unknown"
}

// Config is the coordinator's part of the broker configuration.
type Config struct {
	// MaxTimeoutMs is transaction.max.timeout.ms: the longest timeout a
	// producer may ask for (Kafka's default 900000).
	MaxTimeoutMs int32
	// IDExpirationMs is transactional.id.expiration.ms: a transactional
	// id with no transaction for this long is forgotten (604800000).
	IDExpirationMs int64
}

// DefaultConfig is Kafka's defaults.
func DefaultConfig() Config {
	return Config{MaxTimeoutMs: 900_000, IDExpirationMs: 604_800_000}
}

// Effects is what the shell must do after a call into the core, in this
// order:
//
//  1. Appends: write each record to this coordinator's __transaction_state
//     partition, in order, and report each outcome with Appended once it
//     is durable (or failed). A record's transition takes effect only
//     then.
//  2. Replies: answer the requests (by their Ref).
//  3. Markers: send WriteTxnMarkers for each to the leaders of its
//     partitions, retrying until every partition has the marker (a
//     partition that no longer exists counts as done), then call
//     MarkersWritten.
//  4. NeedProducerID: the request with this Ref needs a new producer id;
//     allocate one and call InitProducerID again with it.
type Effects struct {
	Appends        []Append
	Replies        []Reply
	Markers        []Markers
	NeedProducerID []InitProducerID
	// RecheckMs, when positive, asks for a Tick within that many
	// milliseconds: requests are waiting (parked) with a deadline.
	RecheckMs int64
}

// Append is one record for the __transaction_state partition: Kafka's
// TransactionLogKey and TransactionLogValue (nil: a tombstone).
type Append struct {
	Token uint64 // given back to Appended
	Key   []byte
	Value []byte
}

// Reply answers one request.
type Reply struct {
	Ref           any
	Err           kerr.Code
	ProducerID    int64 // InitProducerID only
	ProducerEpoch int16 // InitProducerID only
}

// Markers asks for the transaction's control markers (COMMIT or ABORT)
// on every partition it wrote to.
type Markers struct {
	TransactionalID  string
	ProducerID       int64
	ProducerEpoch    int16
	Commit           bool
	CoordinatorEpoch int32
	Partitions       []TopicPartition // sorted
}

// Requests the core answers; Ref comes back in the Reply.
type (
	// InitProducerID is InitProducerId (22) with a transactional id.
	InitProducerID struct {
		Ref             any
		TransactionalID string
		TimeoutMs       int32
		// ProducerID and ProducerEpoch are the producer's current ones
		// (KIP-360, v3+), or -1.
		ProducerID    int64
		ProducerEpoch int16
		// NewProducerID is a freshly allocated producer id for the core to
		// use if it needs one, or -1 (then the core asks for one with
		// Effects.NeedProducerID).
		NewProducerID int64
	}
	// AddPartitions is AddPartitionsToTxn (24) for one transaction, or
	// AddOffsetsToTxn (25) with the group's __consumer_offsets partition.
	AddPartitions struct {
		Ref             any
		TransactionalID string
		ProducerID      int64
		ProducerEpoch   int16
		Partitions      []TopicPartition
	}
	// VerifyPartitions is AddPartitionsToTxn v4+ with VerifyOnly
	// (KIP-890): a partition leader asks whether the transaction open at
	// this producer id and epoch has these partitions (Core.Verify).
	// Answer runs once, with a code per partition.
	VerifyPartitions struct {
		TransactionalID string
		ProducerID      int64
		ProducerEpoch   int16
		Partitions      []TopicPartition
		Answer          func([]kerr.Code)
	}
	// EndTxn is EndTxn (26).
	EndTxn struct {
		Ref             any
		TransactionalID string
		ProducerID      int64
		ProducerEpoch   int16
		Commit          bool
	}
)

// Transaction is what DescribeTransactions and ListTransactions report
// of one transactional id.
type Transaction struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	TimeoutMs       int32
	State           State
	StartMs         int64 // -1 when no transaction is open
	UpdateMs        int64
	Partitions      []TopicPartition // sorted
}
