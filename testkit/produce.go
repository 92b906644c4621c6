package testkit

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ProduceBatch sends one raw record batch (built by wire/batchtest, say)
// to one partition with acks=all, at the highest Produce version cl and
// the broker share, and returns the partition's answer and the version
// the request went at: for tests of what a broker does with a batch a
// client library would not send as it is (a resent sequence, a bad CRC).
func ProduceBatch(ctx context.Context, cl *kgo.Client, topic string, partition int32, batch []byte) (kmsg.ProduceResponseTopicPartition, int16, error) {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 10_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return kmsg.ProduceResponseTopicPartition{}, req.Version, err
	}
	return resp.Topics[0].Partitions[0], req.Version, nil
}
