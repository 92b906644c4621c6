package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"
)

type kafkaGo struct{ bootstrap string }

func (kafkaGo) name() string    { return "kafka-go" }
func (kafkaGo) version() string { return moduleVersion("github.com/segmentio/kafka-go") }

func (k kafkaGo) produce(ctx context.Context, topic, codec string, count int, idempotent bool) (map[int]location, error) {
	if idempotent {
		return nil, errLimit{"kafka-go has no idempotent producer (InitProducerId is never sent), against Apache Kafka too"}
	}
	var c compress.Compression
	if codec != "none" {
		if err := c.UnmarshalText([]byte(codec)); err != nil {
			return nil, err
		}
	}
	w := &kafka.Writer{Addr: kafka.TCP(seeds(k.bootstrap)...), Topic: topic, Balancer: &kafka.Hash{},
		RequiredAcks: kafka.RequireAll, Compression: c, BatchSize: 500, BatchTimeout: 5 * time.Millisecond}
	defer w.Close()
	msgs := make([]kafka.Message, 0, 500)
	flush := func() error {
		err := w.WriteMessages(ctx, msgs...)
		msgs = msgs[:0]
		return err
	}
	for i := range count {
		m := kafka.Message{Key: keyOf(i), Value: valueOf(i), Time: time.UnixMilli(ts0 + int64(i))}
		for _, h := range headersOf(i, "kafka-go") {
			m.Headers = append(m.Headers, kafka.Header{Key: h.Key, Value: h.Value})
		}
		msgs = append(msgs, m)
		if len(msgs) == cap(msgs) {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if len(msgs) > 0 {
		if err := flush(); err != nil {
			return nil, err
		}
	}
	// kafka-go's Writer does not report offsets: the verifier checks that
	// each partition's offsets are dense instead.
	return nil, nil
}

func (k kafkaGo) consume(ctx context.Context, group string, v *verifier) (bool, error, error) {
	topics := make([]string, 0, len(v.counts))
	for t := range v.counts {
		topics = append(topics, t)
	}
	slices.Sort(topics)
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: seeds(k.bootstrap), GroupID: group, GroupTopics: topics,
		StartOffset: kafka.FirstOffset, MaxWait: 200 * time.Millisecond})
	defer r.Close()
	var commitErr, consumeErr error
	assigned := false
	var pending []kafka.Message
	for !v.done() {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			consumeErr = err
			break
		}
		assigned = true // a group reader fetches only assigned partitions
		c := consumed{Topic: m.Topic, Partition: int32(m.Partition), Offset: m.Offset, Key: m.Key, Value: m.Value,
			Timestamp: m.Time.UnixMilli(), CreateTime: true}
		for _, h := range m.Headers {
			c.Headers = append(c.Headers, header{h.Key, h.Value})
		}
		v.check(c)
		pending = append(pending, m)
		if len(pending) >= 1000 || v.done() || r.Lag() == 0 {
			if err := r.CommitMessages(ctx, pending...); err != nil && commitErr == nil {
				commitErr = err
			}
			pending = pending[:0]
		}
	}
	if commitErr == nil {
		commitErr = k.committed(group, topics)
	}
	return assigned, commitErr, consumeErr
}

func (k kafkaGo) committed(group string, topics []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := &kafka.Client{Addr: kafka.TCP(seeds(k.bootstrap)...)}
	want := map[string][]int{}
	var reqs []kafka.OffsetRequest
	ends := map[string][]kafka.OffsetRequest{}
	for _, t := range topics {
		want[t] = []int{0, 1, 2}
		reqs = nil
		for p := range 3 {
			reqs = append(reqs, kafka.LastOffsetOf(p))
		}
		ends[t] = reqs
	}
	of, err := cl.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: want})
	if err != nil {
		return fmt.Errorf("OffsetFetch: %w", err)
	}
	lo, err := cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: ends})
	if err != nil {
		return fmt.Errorf("ListOffsets: %w", err)
	}
	var bad []string
	for _, t := range topics {
		for _, po := range lo.Topics[t] {
			var got int64 = -2
			for _, c := range of.Topics[t] {
				if c.Partition == po.Partition {
					got = c.CommittedOffset
				}
			}
			if got != po.LastOffset {
				bad = append(bad, fmt.Sprintf("%s[%d] committed %d end %d", t, po.Partition, got, po.LastOffset))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%v", bad[:min(5, len(bad))])
	}
	return nil
}

func (k kafkaGo) admin(ctx context.Context, topic string) error {
	cl := &kafka.Client{Addr: kafka.TCP(seeds(k.bootstrap)...), Timeout: 30 * time.Second}
	cr, err := cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 2, ReplicationFactor: 1}}})
	if err == nil {
		err = cr.Errors[topic]
	}
	if err != nil {
		return fmt.Errorf("CreateTopics: %w", err)
	}
	if err := untilVisible(ctx, func() error {
		md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
		if err != nil {
			return fmt.Errorf("metadata: %w", err)
		}
		if len(md.Topics) != 1 || md.Topics[0].Error != nil || len(md.Topics[0].Partitions) != 2 {
			return fmt.Errorf("metadata: %+v", md.Topics)
		}
		return nil
	}); err != nil {
		return err
	}
	dc, err := cl.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic}}})
	if err != nil {
		return fmt.Errorf("DescribeConfigs: %w", err)
	}
	found := false
	for _, res := range dc.Resources {
		if res.Error != nil {
			return fmt.Errorf("DescribeConfigs: %w", res.Error)
		}
		for _, e := range res.ConfigEntries {
			found = found || e.ConfigName == "retention.ms"
		}
	}
	if !found {
		return errors.New("DescribeConfigs: no retention.ms")
	}
	dr, err := cl.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	if err == nil {
		err = dr.Errors[topic]
	}
	if err != nil {
		return fmt.Errorf("DeleteTopics: %w", err)
	}
	return nil
}

// transactions: kafka-go has no transactional producer.
func (kafkaGo) transactions(context.Context, string, int) ([][]byte, error) {
	return nil, errLimit{"kafka-go has no transactional producer"}
}
