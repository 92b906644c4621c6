package datapath

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

var kafkagoCodecs = []struct {
	name  string
	codec kafka.Compression
}{
	{"none", 0},
	{"gzip", kafka.Gzip},
	{"snappy", kafka.Snappy},
	{"lz4", kafka.Lz4},
	{"zstd", kafka.Zstd},
}

// TestKafkaGoRoundTrip produces with kafka-go's Writer (acks=all) with
// each codec and reads each partition back with a kafka-go Reader without
// a consumer group.
func TestKafkaGoRoundTrip(t *testing.T) {
	b := sharedBroker(t)
	requireDataPath(t, b.Addr())
	n := scaled(20_000, 2_000)
	const partitions int32 = 3
	for _, c := range kafkagoCodecs {
		t.Run(c.name, func(t *testing.T) {
			topic := topicName(t, "kafkago")
			createTopic(t, b.Addr(), topic, partitions, nil)
			base := timeBase()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()

			// A transport of its own: the shared default one caches
			// metadata for seconds and would not know the new topic.
			transport := &kafka.Transport{ClientID: "samsa-datapath-kafkago"}
			defer transport.CloseIdleConnections()
			w := &kafka.Writer{
				Addr:      kafka.TCP(b.Addr()),
				Topic:     topic,
				Transport: transport,
				// The record model puts record i in partition i % partitions;
				// the index travels in the idx header.
				Balancer: kafka.BalancerFunc(func(m kafka.Message, ps ...int) int {
					return int(binary.BigEndian.Uint64(m.Headers[0].Value) % uint64(len(ps)))
				}),
				RequiredAcks: kafka.RequireAll,
				Compression:  c.codec,
				BatchSize:    1000,
				BatchTimeout: 5 * time.Millisecond,
			}
			const chunk = 2000
			for from := 0; from < n; from += chunk {
				var msgs []kafka.Message
				for i := from; i < min(from+chunk, n); i++ {
					msgs = append(msgs, kafka.Message{
						Key:   recordKey(i),
						Value: recordValue(i),
						Headers: []kafka.Header{
							{Key: idxHeader, Value: indexBytes(i)},
							{Key: "codec", Value: []byte(c.name)},
						},
						Time: recordTime(base, i),
					})
				}
				if err := w.WriteMessages(ctx, msgs...); err != nil {
					var werrs kafka.WriteErrors
					if errors.As(err, &werrs) {
						t.Fatalf("WriteMessages from record %d: %d failed, e.g. %v", from, werrs.Count(), firstErr(werrs))
					}
					t.Fatalf("WriteMessages from record %d: %v", from, err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatalf("close writer: %v", err)
			}

			v := newVerifier(n, partitions, c.name, base)
			for p := range partitions {
				want := n / int(partitions)
				if int(p) < n%int(partitions) {
					want++
				}
				kafkagoReadPartition(ctx, t, b.Addr(), topic, p, want, v)
			}
			if msg := v.result(); msg != "" {
				t.Fatal(msg)
			}
			checkStoredCodec(t, b.Addr(), topic, partitions, c.name)
		})
	}
}

func firstErr(errs kafka.WriteErrors) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// kafkagoReadPartition reads want records of one partition from its first
// offset with a group-less Reader, then checks that the partition holds
// nothing more.
func kafkagoReadPartition(ctx context.Context, t *testing.T, addr, topic string, partition int32, want int, v *verifier) {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:   []string{addr},
		Topic:     topic,
		Partition: int(partition),
		MinBytes:  1,
		MaxBytes:  8 << 20,
		MaxWait:   250 * time.Millisecond,
	})
	defer r.Close()
	if err := r.SetOffset(kafka.FirstOffset); err != nil {
		t.Fatal(err)
	}
	for range want {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("partition %d: read after %d records: %v", partition, v.Count(), err)
		}
		c := consumed{Partition: int32(m.Partition), Offset: m.Offset, Key: m.Key, Value: m.Value, Timestamp: m.Time}
		for _, h := range m.Headers {
			c.Headers = append(c.Headers, header{Key: h.Key, Value: h.Value})
		}
		v.add(c)
	}
	if lag, err := r.ReadLag(ctx); err != nil || lag != 0 {
		t.Errorf("partition %d: %d records left after the %d expected (err %v)", partition, lag, want, err)
	}
}
