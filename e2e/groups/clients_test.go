package groups

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
)

// saramaHandler marks every message it is given and reports progress.
type saramaHandler struct {
	c *tally
}

func (saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h saramaHandler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		h.c.add(string(msg.Value))
		s.MarkMessage(msg, "")
	}
	return nil
}

// Two sarama ConsumerGroup members (protocol as of Kafka 3.6) consume a
// topic exactly once between them and commit all of it.
func TestSaramaConsumerGroup(t *testing.T) {
	b := sharedBroker(t)
	topic, group := name(t, "t"), name(t, "g")
	createTopic(t, b.Addr(), topic, 4)
	adm := admin(t, b.Addr())

	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	cfg.ClientID = "samsa-groups-sarama"
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
	cfg.Consumer.Group.Session.Timeout = 6 * time.Second
	cfg.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond

	c := newTally()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var groups []sarama.ConsumerGroup
	for range 2 {
		cg, err := sarama.NewConsumerGroup([]string{b.Addr()}, group, cfg)
		if err != nil {
			t.Fatal(err)
		}
		groups = append(groups, cg)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if err := cg.Consume(ctx, []string{topic}, saramaHandler{c}); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
					t.Logf("sarama Consume: %v", err)
					time.Sleep(100 * time.Millisecond)
				}
			}
		}()
	}
	defer func() {
		cancel()
		wg.Wait()
		for _, cg := range groups {
			cg.Close()
		}
	}()
	waitGroup(t, adm, group, 30*time.Second, stableWith(topic, 2, 4))
	const n = 400
	produce(t, b.Addr(), topic, 0, n)
	c.waitDistinct(t, n, 20*time.Second)
	c.check(t, n, true)
	for end := time.Now().Add(10 * time.Second); committed(t, adm, group, topic) != n && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
	}
	if got := committed(t, adm, group, topic); got != n {
		t.Errorf("sarama committed offsets adding up to %d, want %d", got, n)
	}
}

// A kafka-go Reader with a GroupID reads a topic from its start and
// commits as it goes (every 100 ms, and on Close).
func TestKafkaGoReaderGroup(t *testing.T) {
	b := sharedBroker(t)
	topic, group := name(t, "t"), name(t, "g")
	createTopic(t, b.Addr(), topic, 3)
	const n = 150
	produce(t, b.Addr(), topic, 0, n)

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: []string{b.Addr()}, GroupID: group, Topic: topic,
		StartOffset: kafka.FirstOffset, SessionTimeout: 6 * time.Second,
		HeartbeatInterval: 500 * time.Millisecond, MaxWait: 200 * time.Millisecond,
		CommitInterval: 100 * time.Millisecond,
	})
	c := newTally()
	ctx := deadline(t, 30*time.Second)
	for range n {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			r.Close()
			t.Fatalf("kafka-go ReadMessage after %d: %v", c.distinct(), err)
		}
		c.add(string(m.Value))
	}
	if err := r.Close(); err != nil {
		t.Errorf("kafka-go Reader close: %v", err)
	}
	c.check(t, n, true)
	if got := committed(t, admin(t, b.Addr()), group, topic); got != n {
		t.Errorf("kafka-go committed offsets adding up to %d, want %d", got, n)
	}
}
