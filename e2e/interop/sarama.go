package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

type saramaClient struct{ bootstrap string }

func (saramaClient) name() string    { return "sarama" }
func (saramaClient) version() string { return moduleVersion("github.com/IBM/sarama") }

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	cfg.ClientID = "samsa-interop"
	return cfg
}

func (s saramaClient) produce(ctx context.Context, topic, codec string, count int, idempotent bool) (map[int]location, error) {
	cfg := saramaConfig()
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Flush.Frequency = 5 * time.Millisecond
	if err := cfg.Producer.Compression.UnmarshalText([]byte(codec)); err != nil {
		return nil, err
	}
	if idempotent {
		cfg.Producer.Idempotent = true
		cfg.Net.MaxOpenRequests = 1
	}
	p, err := sarama.NewAsyncProducer(seeds(s.bootstrap), cfg)
	if err != nil {
		return nil, err
	}
	where := make(map[int]location, count)
	var firstErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for m := range p.Successes() {
			where[m.Metadata.(int)] = location{m.Partition, m.Offset}
		}
	}()
	go func() {
		defer wg.Done()
		for e := range p.Errors() {
			if firstErr == nil {
				firstErr = fmt.Errorf("record %v: %w", e.Msg.Metadata, e.Err)
			}
		}
	}()
	for i := range count {
		m := &sarama.ProducerMessage{Topic: topic, Value: sarama.ByteEncoder(valueOf(i)),
			Timestamp: time.UnixMilli(ts0 + int64(i)), Metadata: i}
		if k := keyOf(i); k != nil {
			m.Key = sarama.ByteEncoder(k)
		}
		for _, h := range headersOf(i, "sarama") {
			m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
		}
		p.Input() <- m
	}
	p.AsyncClose()
	wg.Wait()
	if firstErr == nil && len(where) != count {
		firstErr = fmt.Errorf("%d of %d records acknowledged", len(where), count)
	}
	return where, firstErr
}

// saramaHandler checks each claimed message and commits after each one
// batch the claim delivers.
type saramaHandler struct {
	v         *verifier
	mu        *sync.Mutex
	assigned  *bool
	commitErr *error
	done      chan struct{}
	once      *sync.Once
}

func (h saramaHandler) Setup(s sarama.ConsumerGroupSession) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(s.Claims()) > 0 {
		*h.assigned = true
	}
	return nil
}

func (h saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h saramaHandler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		c := consumed{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset, Key: m.Key, Value: m.Value,
			Timestamp: m.Timestamp.UnixMilli(), CreateTime: true}
		for _, rh := range m.Headers {
			c.Headers = append(c.Headers, header{string(rh.Key), rh.Value})
		}
		h.mu.Lock()
		h.v.check(c)
		done := h.v.done()
		h.mu.Unlock()
		s.MarkMessage(m, "")
		if len(claim.Messages()) == 0 || done {
			s.Commit()
		}
		if done {
			h.once.Do(func() { close(h.done) })
		}
	}
	return nil
}

func (s saramaClient) consume(ctx context.Context, group string, v *verifier) (bool, error, error) {
	cfg := saramaConfig()
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Return.Errors = true
	cg, err := sarama.NewConsumerGroup(seeds(s.bootstrap), group, cfg)
	if err != nil {
		return false, nil, err
	}
	var mu sync.Mutex
	var assigned bool
	var commitErr, consumeErr error
	h := saramaHandler{v: v, mu: &mu, assigned: &assigned, commitErr: &commitErr, done: make(chan struct{}), once: &sync.Once{}}
	topics := make([]string, 0, len(v.counts))
	for t := range v.counts {
		topics = append(topics, t)
	}
	slices.Sort(topics)
	cctx, cancel := context.WithCancel(ctx)
	loopDone := make(chan error, 1)
	go func() {
		for cctx.Err() == nil {
			if err := cg.Consume(cctx, topics, h); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
				loopDone <- err
				return
			}
		}
		loopDone <- nil
	}()
	go func() {
		for e := range cg.Errors() {
			mu.Lock()
			if consumeErr == nil {
				consumeErr = e
			}
			mu.Unlock()
		}
	}()
	select {
	case <-h.done:
	case <-ctx.Done():
		mu.Lock()
		if consumeErr == nil {
			consumeErr = fmt.Errorf("timed out: %w", ctx.Err())
		}
		mu.Unlock()
	case err := <-loopDone:
		mu.Lock()
		if consumeErr == nil {
			consumeErr = err
		}
		mu.Unlock()
	}
	cancel()
	if err := cg.Close(); err != nil && commitErr == nil {
		commitErr = err
	}
	mu.Lock()
	defer mu.Unlock()
	if commitErr == nil {
		commitErr = s.committed(group, topics)
	}
	return assigned, commitErr, consumeErr
}

func (s saramaClient) committed(group string, topics []string) error {
	cl, err := sarama.NewClient(seeds(s.bootstrap), saramaConfig())
	if err != nil {
		return err
	}
	defer cl.Close()
	adm, err := sarama.NewClusterAdminFromClient(cl)
	if err != nil {
		return err
	}
	want := map[string][]int32{}
	for _, t := range topics {
		want[t] = []int32{0, 1, 2}
	}
	res, err := adm.ListConsumerGroupOffsets(group, want)
	if err != nil {
		return fmt.Errorf("ListConsumerGroupOffsets: %w", err)
	}
	var bad []string
	for _, t := range topics {
		for _, p := range want[t] {
			end, err := cl.GetOffset(t, p, sarama.OffsetNewest)
			if err != nil {
				return fmt.Errorf("GetOffset: %w", err)
			}
			b := res.GetBlock(t, p)
			if b == nil || b.Offset != end {
				bad = append(bad, fmt.Sprintf("%s[%d] committed %v end %d", t, p, b, end))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%v", bad[:min(5, len(bad))])
	}
	return nil
}

func (s saramaClient) admin(ctx context.Context, topic string) error {
	adm, err := sarama.NewClusterAdmin(seeds(s.bootstrap), saramaConfig())
	if err != nil {
		return err
	}
	defer adm.Close()
	if err := adm.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1}, false); err != nil {
		return fmt.Errorf("CreateTopic: %w", err)
	}
	if err := untilVisible(ctx, func() error {
		md, err := adm.DescribeTopics([]string{topic})
		if err != nil {
			return fmt.Errorf("DescribeTopics: %w", err)
		}
		if len(md) != 1 || md[0].Err != sarama.ErrNoError || len(md[0].Partitions) != 2 {
			return fmt.Errorf("DescribeTopics: %+v", md)
		}
		ts, err := adm.ListTopics()
		if err != nil {
			return fmt.Errorf("ListTopics: %w", err)
		}
		if _, ok := ts[topic]; !ok {
			return fmt.Errorf("ListTopics misses %s", topic)
		}
		return nil
	}); err != nil {
		return err
	}
	res, err := adm.DescribeConfigs([]*sarama.ConfigResource{{Type: sarama.TopicResource, Name: topic}}, sarama.DescribeConfigsOptions{})
	if err != nil {
		return fmt.Errorf("DescribeConfigs: %w", err)
	}
	if len(res) != 1 {
		return fmt.Errorf("DescribeConfigs: %d resources, want 1", len(res))
	}
	if res[0].ErrorCode != sarama.ErrNoError {
		return fmt.Errorf("DescribeConfigs: %w: %s", res[0].ErrorCode, res[0].ErrorMsg)
	}
	if !slices.ContainsFunc(res[0].Configs, func(c sarama.ConfigEntry) bool { return c.Name == "retention.ms" }) {
		return fmt.Errorf("DescribeConfigs: no retention.ms")
	}
	if err := adm.DeleteTopic(topic); err != nil {
		return fmt.Errorf("DeleteTopic: %w", err)
	}
	return nil
}

// transactions: sarama's transactional SyncProducer (BeginTxn,
// SendMessages, CommitTxn / AbortTxn) and a read_committed consumer of
// every partition.
func (s saramaClient) transactions(ctx context.Context, topic string, k int) ([][]byte, error) {
	cfg := saramaConfig()
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Idempotent = true
	cfg.Producer.Transaction.ID = topic + "-id"
	cfg.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer(seeds(s.bootstrap), cfg)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	for t := range 3 {
		if err := p.BeginTxn(); err != nil {
			return nil, fmt.Errorf("transaction %d: BeginTxn: %w", t, err)
		}
		var ms []*sarama.ProducerMessage
		for i := t * k; i < (t+1)*k; i++ {
			m := &sarama.ProducerMessage{Topic: topic, Value: sarama.ByteEncoder(valueOf(i)), Timestamp: time.UnixMilli(ts0 + int64(i))}
			if key := keyOf(i); key != nil {
				m.Key = sarama.ByteEncoder(key)
			}
			for _, h := range headersOf(i, "sarama") {
				m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
			}
			ms = append(ms, m)
		}
		if err := p.SendMessages(ms); err != nil {
			return nil, fmt.Errorf("transaction %d: SendMessages: %w", t, err)
		}
		end, what := p.CommitTxn, "CommitTxn"
		if t == 1 {
			end, what = p.AbortTxn, "AbortTxn"
		}
		if err := end(); err != nil {
			return nil, fmt.Errorf("transaction %d: %s: %w", t, what, err)
		}
	}

	ccfg := saramaConfig()
	ccfg.Consumer.IsolationLevel = sarama.ReadCommitted
	c, err := sarama.NewConsumer(seeds(s.bootstrap), ccfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	msgs := make(chan []byte, 3*k)
	for part := range int32(partitions) {
		pc, err := c.ConsumePartition(topic, part, sarama.OffsetOldest)
		if err != nil {
			return nil, fmt.Errorf("read_committed consumer of partition %d: %w", part, err)
		}
		defer pc.AsyncClose()
		go func() {
			for m := range pc.Messages() {
				msgs <- m.Value
			}
		}()
	}
	var values [][]byte
	for {
		wait := 20 * time.Second
		if len(values) >= 2*k {
			wait = 500 * time.Millisecond // extra records would show
		}
		select {
		case v := <-msgs:
			values = append(values, v)
		case <-time.After(wait):
			if len(values) < 2*k {
				return values, fmt.Errorf("read_committed: %d of %d records read", len(values), 2*k)
			}
			return values, nil
		case <-ctx.Done():
			return values, ctx.Err()
		}
	}
}
