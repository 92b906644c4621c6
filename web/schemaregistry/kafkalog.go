package schemaregistry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Topic is Confluent's default kafkastore.topic.
const Topic = "_schemas"

// KafkaConfig says where the `_schemas` topic is.
type KafkaConfig struct {
	// Brokers are the bootstrap addresses: the broker's own listener.
	Brokers []string
	// Topic is the log's topic (default Topic).
	Topic  string
	Logger *slog.Logger
	// Opts are extra franz-go options (TLS, SASL) for the listener.
	Opts []kgo.Opt
}

// KafkaLog is the registry's Log on a compacted single-partition topic,
// written and read through a franz-go client: every record written is
// applied when it is read back, in log order, so every registry on the
// topic (a restarted broker, the other brokers of a cluster) builds the
// same state.
type KafkaLog struct {
	cl     *kgo.Client
	topic  string
	logger *slog.Logger
	apply  func(key, value []byte)
	// created is set once the topic is known to exist.
	created atomic.Bool

	mu       sync.Mutex
	next     int64         // the offset after the last record applied
	progress chan struct{} // closed (and replaced) whenever next moves

	cancel context.CancelFunc
	done   chan struct{}
}

// OpenKafka starts a registry on the topic: it reads it from the start
// in the background and, if the topic exists, marks the registry ready
// once it has read past a NOOP record it wrote (Confluent's way of
// knowing it reached the end); if not, the registry is empty and ready
// at once, and the first write creates the topic, so a broker whose
// users never register a schema has no `_schemas` topic. It returns at
// once; requests wait for readiness.
func OpenKafka(cfg KafkaConfig) (*Registry, *KafkaLog, error) {
	if cfg.Topic == "" {
		cfg.Topic = Topic
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0),
		kgo.FetchMaxWait(time.Second),
		// A topic created after the reader started (the first write
		// here, or by another broker) is found within this, not kgo's
		// default 5 s: a write waits for its read-back.
		kgo.MetadataMinAge(100 * time.Millisecond),
	}, cfg.Opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("schema registry client: %w", err)
	}
	reg := New(nil)
	l := &KafkaLog{cl: cl, topic: cfg.Topic, logger: cfg.Logger, apply: reg.Apply,
		progress: make(chan struct{}), done: make(chan struct{})}
	reg.SetLog(l)
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go l.run(ctx, reg)
	return reg, l, nil
}

// Close stops reading and closes the client.
func (l *KafkaLog) Close() {
	l.cancel()
	<-l.done
	l.cl.Close()
}

func (l *KafkaLog) run(ctx context.Context, reg *Registry) {
	defer close(l.done)
	exists, err := l.topicExists(ctx)
	if err != nil {
		return // closed before the broker answered
	}
	l.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{l.topic: {0: kgo.NewOffset().AtStart()}})
	if exists {
		l.created.Store(true)
		go l.syncOnce(ctx, reg)
	} else {
		reg.MarkReady()
	}
	for {
		fetches := l.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		fetches.EachError(func(t string, p int32, err error) {
			l.logger.Warn("schema registry: reading the topic", "topic", t, "partition", p, "err", err)
		})
		fetches.EachRecord(func(rec *kgo.Record) {
			l.apply(rec.Key, rec.Value)
			l.advance(rec.Offset + 1)
		})
	}
}

// syncOnce writes a NOOP and marks the registry ready once it has been
// read back: everything before it has been applied by then.
func (l *KafkaLog) syncOnce(ctx context.Context, reg *Registry) {
	for ctx.Err() == nil {
		attempt, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := l.Append(attempt, []Record{noopRecord()})
		cancel()
		if err == nil {
			reg.MarkReady()
			return
		}
		l.logger.Warn("schema registry: waiting for the _schemas topic", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// topicExists asks the broker, retrying while it does not answer.
func (l *KafkaLog) topicExists(ctx context.Context) (bool, error) {
	adm := kadm.NewClient(l.cl)
	for {
		md, err := adm.Metadata(ctx, l.topic)
		if err == nil {
			t, ok := md.Topics[l.topic]
			if ok && !errors.Is(t.Err, kerr.UnknownTopicOrPartition) {
				return t.Err == nil, t.Err
			}
			return false, nil
		}
		l.logger.Warn("schema registry: asking for the topic", "topic", l.topic, "err", err)
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// createTopic makes the topic: one partition (the log's order is the
// registry's), compacted (the latest record of a key is the state),
// replicated to up to three brokers.
func (l *KafkaLog) createTopic(ctx context.Context) error {
	if l.created.Load() {
		return nil
	}
	adm := kadm.NewClient(l.cl)
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return err
	}
	rf := int16(min(3, len(md.Brokers)))
	compact := "compact"
	resp, err := adm.CreateTopic(ctx, 1, rf, map[string]*string{"cleanup.policy": &compact}, l.topic)
	if err == nil {
		err = resp.Err
	}
	if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
		l.created.Store(true)
		l.cl.ForceMetadataRefresh() // the reader starts on it now
		return nil
	}
	return fmt.Errorf("creating %s: %w", l.topic, err)
}

func (l *KafkaLog) advance(next int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if next > l.next {
		l.next = next
		close(l.progress)
		l.progress = make(chan struct{})
	}
}

// CatchUp waits until the reader has applied every record written
// before the call (the partition's end offset then).
// A topic another broker has just created may not be in this client's
// metadata yet: that is retried until ctx ends.
func (l *KafkaLog) CatchUp(ctx context.Context) error {
	adm := kadm.NewClient(l.cl)
	for {
		ends, err := adm.ListEndOffsets(ctx, l.topic)
		if err == nil {
			if end, ok := ends.Lookup(l.topic, 0); ok && end.Err == nil {
				return l.awaitApplied(ctx, end.Offset-1)
			}
		}
		l.cl.ForceMetadataRefresh()
		select {
		case <-ctx.Done():
			return errorf(codeTimeout, "the end of %s is unknown here: %v", l.topic, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// awaitApplied waits until the record at offset last has been applied.
func (l *KafkaLog) awaitApplied(ctx context.Context, last int64) error {
	for {
		l.mu.Lock()
		reached, progress := l.next > last, l.progress
		l.mu.Unlock()
		if reached {
			return nil
		}
		select {
		case <-progress:
		case <-ctx.Done():
			return errorf(codeTimeout, "offset %d of %s not read back in time: %v", last, l.topic, ctx.Err())
		}
	}
}

// Append produces recs to partition 0 and waits until the reader has
// applied the last of them.
func (l *KafkaLog) Append(ctx context.Context, recs []Record) error {
	if err := l.createTopic(ctx); err != nil {
		return err
	}
	krecs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		krecs[i] = &kgo.Record{Topic: l.topic, Partition: 0, Key: r.Key, Value: r.Value}
	}
	results := l.cl.ProduceSync(ctx, krecs...)
	if err := results.FirstErr(); err != nil {
		return err
	}
	var last int64
	for _, r := range results {
		last = max(last, r.Record.Offset)
	}
	return l.awaitApplied(ctx, last)
}
