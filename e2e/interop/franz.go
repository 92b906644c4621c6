package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// moduleVersion is the version of a module linked into this program.
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "?"
}

type franz struct{ bootstrap string }

func (franz) name() string    { return "franz-go" }
func (franz) version() string { return moduleVersion("github.com/twmb/franz-go") }

func franzCodec(codec string) kgo.CompressionCodec {
	switch codec {
	case "gzip":
		return kgo.GzipCompression()
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	}
	return kgo.NoCompression()
}

func (f franz) produce(ctx context.Context, topic, codec string, count int, idempotent bool) (map[int]location, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(seeds(f.bootstrap)...), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(franzCodec(codec)), kgo.RequiredAcks(kgo.AllISRAcks())}
	if !idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	where := make(map[int]location, count)
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for i := range count {
		r := &kgo.Record{Key: keyOf(i), Value: valueOf(i), Timestamp: time.UnixMilli(ts0 + int64(i))}
		for _, h := range headersOf(i, "franz-go") {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
		wg.Add(1)
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("record %d: %w", i, err)
				}
				return
			}
			where[i] = location{r.Partition, r.Offset}
		})
	}
	wg.Wait()
	return where, firstErr
}

func (f franz) consume(ctx context.Context, group string, v *verifier) (bool, error, error) {
	topics := make([]string, 0, len(v.counts))
	for t := range v.counts {
		topics = append(topics, t)
	}
	slices.Sort(topics)
	var mu sync.Mutex
	assigned := false
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(f.bootstrap)...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topics...),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			mu.Lock()
			assigned = true
			mu.Unlock()
		}))
	if err != nil {
		return false, nil, err
	}
	defer cl.Close()
	var commitErr, consumeErr error
	for !v.done() && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachError(func(t string, p int32, err error) {
			if ctx.Err() == nil && consumeErr == nil {
				consumeErr = fmt.Errorf("fetch %s[%d]: %w", t, p, err)
			}
		})
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			c := consumed{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value,
				Timestamp: r.Timestamp.UnixMilli(), CreateTime: r.Attrs.TimestampType() == 0}
			for _, h := range r.Headers {
				c.Headers = append(c.Headers, header{h.Key, h.Value})
			}
			v.check(c)
		})
		if n > 0 {
			if err := cl.CommitUncommittedOffsets(ctx); err != nil && commitErr == nil {
				commitErr = err
			}
		}
	}
	if consumeErr == nil && ctx.Err() != nil {
		consumeErr = fmt.Errorf("timed out: %w", ctx.Err())
	}
	mu.Lock()
	got := assigned
	mu.Unlock()
	if commitErr == nil {
		commitErr = franzCommitted(context.Background(), kadm.NewClient(cl), group, topics)
	}
	return got, commitErr, consumeErr
}

// franzCommitted compares the group's committed offsets with the ends.
func franzCommitted(ctx context.Context, adm *kadm.Client, group string, topics []string) error {
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return fmt.Errorf("fetching committed offsets: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("listing end offsets: %w", err)
	}
	var bad []string
	ends.Each(func(o kadm.ListedOffset) {
		c, ok := committed.Lookup(o.Topic, o.Partition)
		if !ok || c.At != o.Offset {
			bad = append(bad, fmt.Sprintf("%s[%d] committed %d end %d", o.Topic, o.Partition, c.At, o.Offset))
		}
	})
	if len(bad) > 0 {
		return fmt.Errorf("%v", bad[:min(5, len(bad))])
	}
	return nil
}

func (f franz) admin(ctx context.Context, topic string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(f.bootstrap)...))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
		return fmt.Errorf("CreateTopic: %w", err)
	}
	if err := untilVisible(ctx, func() error {
		td, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return fmt.Errorf("ListTopics: %w", err)
		}
		if d, ok := td[topic]; !ok || d.Err != nil || len(d.Partitions) != 2 {
			return fmt.Errorf("ListTopics(%s): %+v", topic, d)
		}
		return nil
	}); err != nil {
		return err
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return fmt.Errorf("DescribeTopicConfigs: %w", err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		return fmt.Errorf("DescribeTopicConfigs: %v %v", err, rc.Err)
	}
	if !slices.ContainsFunc(rc.Configs, func(c kadm.Config) bool { return c.Key == "retention.ms" }) {
		return fmt.Errorf("DescribeTopicConfigs: no retention.ms")
	}
	dr, err := adm.DeleteTopic(ctx, topic)
	if err == nil {
		err = dr.Err
	}
	if err != nil {
		return fmt.Errorf("DeleteTopic: %w", err)
	}
	return nil
}

// franzAdmin is an admin client for the runner's own look-ups; its
// connection lives as long as the program.
func franzAdmin(bootstrap string) *kadm.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(bootstrap)...))
	if err != nil {
		panic(err) // only malformed options fail here
	}
	return kadm.NewClient(cl)
}

// transactions: kgo's transactional producer (ProduceSync in a
// transaction, then EndTransaction) and a read_committed consumer.
func (f franz) transactions(ctx context.Context, topic string, k int) ([][]byte, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(f.bootstrap)...), kgo.DefaultProduceTopic(topic),
		kgo.TransactionalID(topic+"-id"), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	for t := range 3 {
		if err := cl.BeginTransaction(); err != nil {
			return nil, fmt.Errorf("transaction %d: begin: %w", t, err)
		}
		var rs []*kgo.Record
		for i := t * k; i < (t+1)*k; i++ {
			r := &kgo.Record{Key: keyOf(i), Value: valueOf(i), Timestamp: time.UnixMilli(ts0 + int64(i))}
			for _, h := range headersOf(i, "franz-go") {
				r.Headers = append(r.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
			}
			rs = append(rs, r)
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			return nil, fmt.Errorf("transaction %d: produce: %w", t, err)
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(t != 1)); err != nil {
			return nil, fmt.Errorf("transaction %d: end (commit %v): %w", t, t != 1, err)
		}
	}
	return readTxnTopic(ctx, f.bootstrap, topic, kgo.ReadCommitted(), 2*k)
}
