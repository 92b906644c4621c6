package partition

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/gather"
	"github.com/samsa-io/samsa/actors/idempotence"
)

// DescribeProducers answers one partition of DescribeProducers (API 61)
// into Out: every producer in the partition's producer state, as Kafka's
// UnifiedLog.activeProducers lists them. Like Kafka, a follower answers
// from its own producer state (an admin may name a broker, not only the
// leader); a partition without its log answers NOT_LEADER_OR_FOLLOWER.
type DescribeProducers struct {
	Out   *kmsg.DescribeProducersResponseTopicPartition
	Reply gather.Slot
}

// ReplyTo sets where the answer goes.
func (m *DescribeProducers) ReplyTo(s gather.Slot) { m.Reply = s }

// describeProducers fills m.Out from the producer state.
func (p *partitionActor) describeProducers(m *DescribeProducers) {
	if p.plog == nil || p.core == nil {
		m.Out.ErrorCode = int16(p.offline())
		return
	}
	m.Out.ActiveProducers = ActiveProducers(p.core.Producers())
}

// ActiveProducers renders the producer state as DescribeProducers does:
// the last sequence -1 without a batch on record, the open transaction's
// first offset or -1.
func ActiveProducers(s *idempotence.State) []kmsg.DescribeProducersResponseTopicPartitionActiveProducer {
	list := s.List()
	out := make([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, len(list))
	for i, l := range list {
		a := &out[i]
		a.Default()
		a.ProducerID, a.ProducerEpoch = l.ID, int32(l.Epoch)
		a.LastSequence, a.LastTimestamp = l.LastSequence(), l.LastTimestamp
		a.CoordinatorEpoch, a.CurrentTxnStartOffset = l.CoordinatorEpoch, l.TxnFirstOffset
	}
	return out
}
