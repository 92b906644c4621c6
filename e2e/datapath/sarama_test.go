package datapath

import (
	"context"
	"io"
	"log"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

var saramaCodecs = []struct {
	name  string
	codec sarama.CompressionCodec
}{
	{"none", sarama.CompressionNone},
	{"gzip", sarama.CompressionGZIP},
	{"snappy", sarama.CompressionSnappy},
	{"lz4", sarama.CompressionLZ4},
	{"zstd", sarama.CompressionZSTD},
}

func saramaConfig(codec sarama.CompressionCodec) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	cfg.ClientID = "samsa-datapath-sarama"
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Compression = codec
	cfg.Producer.Flush.Frequency = 5 * time.Millisecond
	cfg.Producer.Flush.Messages = 500
	cfg.Consumer.Fetch.Default = 4 << 20
	cfg.Consumer.MaxWaitTime = 250 * time.Millisecond
	return cfg
}

func saramaMessage(topic string, i int, partitions int32, base time.Time, codec string) *sarama.ProducerMessage {
	return &sarama.ProducerMessage{
		Topic:     topic,
		Partition: int32(i % int(partitions)),
		Key:       sarama.ByteEncoder(recordKey(i)),
		Value:     sarama.ByteEncoder(recordValue(i)),
		Headers: []sarama.RecordHeader{
			{Key: []byte(idxHeader), Value: indexBytes(i)},
			{Key: []byte("codec"), Value: []byte(codec)},
		},
		Timestamp: recordTime(base, i),
	}
}

// TestSaramaRoundTrip produces with sarama's SyncProducer (idempotent)
// and AsyncProducer with each codec, and reads every partition back with
// sarama's Consumer.
func TestSaramaRoundTrip(t *testing.T) {
	b := sharedBroker(t)
	requireDataPath(t, b.Addr())
	sarama.Logger = log.New(io.Discard, "", 0)
	n := scaled(20_000, 2_000)
	const partitions = 3
	for _, c := range saramaCodecs {
		for _, mode := range []string{"sync", "async"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				topic := topicName(t, "sarama")
				createTopic(t, b.Addr(), topic, partitions, nil)
				base := timeBase()
				cfg := saramaConfig(c.codec)
				if mode == "sync" {
					cfg.Producer.Idempotent = true
					cfg.Net.MaxOpenRequests = 1
					saramaSync(t, b.Addr(), cfg, topic, partitions, n, base, c.name)
				} else {
					saramaAsync(t, b.Addr(), cfg, topic, partitions, n, base, c.name)
				}
				v := newVerifier(n, partitions, c.name, base)
				saramaConsume(t, b.Addr(), saramaConfig(c.codec), topic, partitions, v)
				if msg := v.result(); msg != "" {
					t.Fatal(msg)
				}
				checkStoredCodec(t, b.Addr(), topic, partitions, c.name)
			})
		}
	}
}

func saramaSync(t *testing.T, addr string, cfg *sarama.Config, topic string, partitions int32, n int, base time.Time, codec string) {
	p, err := sarama.NewSyncProducer([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("NewSyncProducer: %v", err)
	}
	closed := false
	defer func() {
		if !closed { // sarama panics on a second Close
			p.Close()
		}
	}()
	const chunk = 1000
	for from := 0; from < n; from += chunk {
		var msgs []*sarama.ProducerMessage
		for i := from; i < min(from+chunk, n); i++ {
			msgs = append(msgs, saramaMessage(topic, i, partitions, base, codec))
		}
		if err := p.SendMessages(msgs); err != nil {
			t.Fatalf("SendMessages from record %d: %v", from, err)
		}
		for _, m := range msgs {
			if m.Offset < 0 {
				t.Fatalf("record %s acknowledged without an offset", m.Key)
			}
		}
	}
	closed = true
	if err := p.Close(); err != nil {
		t.Fatalf("close producer: %v", err)
	}
}

func saramaAsync(t *testing.T, addr string, cfg *sarama.Config, topic string, partitions int32, n int, base time.Time, codec string) {
	p, err := sarama.NewAsyncProducer([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("NewAsyncProducer: %v", err)
	}
	var wg sync.WaitGroup
	var failures []error
	successes := 0
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range p.Successes() {
			successes++
		}
	}()
	go func() {
		defer wg.Done()
		for err := range p.Errors() {
			failures = append(failures, err)
		}
	}()
	for i := range n {
		p.Input() <- saramaMessage(topic, i, partitions, base, codec)
	}
	p.AsyncClose() // flushes, then closes Successes and Errors
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d records failed, the first: %v", len(failures), failures[0])
	}
	if successes != n {
		t.Fatalf("%d of %d records acknowledged", successes, n)
	}
}

// saramaConsume reads every partition from the oldest offset with sarama's
// Consumer until v has every record.
func saramaConsume(t *testing.T, addr string, cfg *sarama.Config, topic string, partitions int32, v *verifier) {
	consumer, err := sarama.NewConsumer([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("NewConsumer: %v", err)
	}
	defer consumer.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	msgs := make(chan *sarama.ConsumerMessage, 1024)
	errs := make(chan error, partitions)
	for p := range partitions {
		pc, err := consumer.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			t.Fatalf("ConsumePartition %d: %v", p, err)
		}
		defer pc.Close()
		go func() {
			for {
				select {
				case m, ok := <-pc.Messages():
					if !ok {
						return
					}
					select {
					case msgs <- m:
					case <-ctx.Done():
						return
					}
				case e, ok := <-pc.Errors():
					if ok {
						errs <- e
					}
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	for !v.done() {
		select {
		case m := <-msgs:
			r := consumed{Partition: m.Partition, Offset: m.Offset, Key: m.Key, Value: m.Value, Timestamp: m.Timestamp}
			for _, h := range m.Headers {
				r.Headers = append(r.Headers, header{Key: string(h.Key), Value: h.Value})
			}
			v.add(r)
		case err := <-errs:
			t.Fatalf("consume: %v", err)
		case <-ctx.Done():
			t.Fatalf("consume: %d of %d records before the deadline", v.Count(), v.n)
		}
	}
	// Duplicates written after the last original record stay unread by
	// the loop above: the high water marks must match what was read.
	for p := range partitions {
		hwm := consumer.HighWaterMarks()[topic][p]
		v.mu.Lock()
		next := v.nextOff[p]
		v.mu.Unlock()
		if hwm != next {
			t.Errorf("partition %d: high water mark %d, but its records end at %d", p, hwm, next)
		}
	}
}
