package txn

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The __transaction_state record format is Kafka's (TransactionLogKey
// and TransactionLogValue, through kmsg), so Kafka's brokers and tools
// read what samsa writes and samsa loads what Kafka wrote. Keys are
// version 0; values are written at version 0, which every Kafka since
// 0.11 reads (Kafka 3.9 writes 0 too; 1 adds only tagged fields), and
// read at 0 or 1.
const (
	keyVersion   = 0
	valueVersion = 0
)

// encodeKey is the record key for a transactional id.
func encodeKey(id string) []byte {
	k := kmsg.TxnMetadataKey{Version: keyVersion, TransactionalID: id}
	return k.AppendTo(nil)
}

// encodeValue is the record value for t's state.
func encodeValue(t *record) []byte {
	v := kmsg.NewTxnMetadataValue()
	v.Version = valueVersion
	v.ProducerID = t.pid
	v.ProducerEpoch = t.epoch
	v.TimeoutMillis = t.timeoutMs
	v.State = t.state
	v.LastUpdateTimestamp = t.updateMs
	v.StartTimestamp = t.startMs
	// Kafka writes a null partition list only in state Empty, and reads
	// the list of every other state without a null check (a null one
	// makes its TransactionStateManager fail to load the whole log
	// partition), so any other state gets at least an empty list.
	if t.state != Empty {
		v.Topics = []kmsg.TxnMetadataValueTopic{}
	}
	for _, tp := range t.parts {
		if n := len(v.Topics); n > 0 && v.Topics[n-1].Topic == tp.Topic {
			v.Topics[n-1].Partitions = append(v.Topics[n-1].Partitions, tp.Partition)
			continue
		}
		v.Topics = append(v.Topics, kmsg.TxnMetadataValueTopic{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
	}
	return v.AppendTo(nil)
}

// decodeKey reads a record key; a key of another version (Kafka has
// none) is an error.
func decodeKey(b []byte) (string, error) {
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(b); err != nil {
		return "", fmt.Errorf("transaction log key: %w", err)
	}
	if k.Version != keyVersion {
		return "", fmt.Errorf("transaction log key version %d: only 0 exists", k.Version)
	}
	return k.TransactionalID, nil
}

// decodeValue reads a record value into a record for id.
func decodeValue(id string, b []byte) (record, error) {
	var v kmsg.TxnMetadataValue
	if err := v.ReadFrom(b); err != nil {
		return record{}, fmt.Errorf("transaction log value of %q: %w", id, err)
	}
	if v.Version < 0 || v.Version > 1 {
		return record{}, fmt.Errorf("transaction log value of %q: version %d, this broker reads 0 and 1", id, v.Version)
	}
	r := record{
		pid: v.ProducerID, epoch: v.ProducerEpoch, timeoutMs: v.TimeoutMillis, state: v.State,
		updateMs: v.LastUpdateTimestamp, startMs: v.StartTimestamp,
	}
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			r.parts = append(r.parts, TopicPartition{t.Topic, p})
		}
	}
	sortPartitions(r.parts)
	return r, nil
}

// record is the persisted part of a transaction's state: what one value
// in the log holds.
type record struct {
	pid       int64
	epoch     int16
	timeoutMs int32
	state     State
	parts     []TopicPartition // sorted, no duplicates
	startMs   int64
	updateMs  int64
}

func sortPartitions(ps []TopicPartition) {
	slices.SortFunc(ps, func(a, b TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
}

// union is a and b merged, sorted, without duplicates.
func union(a, b []TopicPartition) []TopicPartition {
	out := append(slices.Clone(a), b...)
	sortPartitions(out)
	return slices.Compact(out)
}

// contains reports whether every partition of sub is in set (sorted).
func contains(set, sub []TopicPartition) bool {
	for _, tp := range sub {
		if _, ok := slices.BinarySearchFunc(set, tp, func(a, b TopicPartition) int {
			return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
		}); !ok {
			return false
		}
	}
	return true
}
