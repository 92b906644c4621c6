package main

import (
	"context"
	"crypto/sha512"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/IBM/sarama"
	kafka "github.com/segmentio/kafka-go"
	kscram "github.com/segmentio/kafka-go/sasl/scram"
	"github.com/xdg-go/scram"

	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
)

// The sasl_ssl steps of kafka-go and sarama (franz-go's is in
// secure_clients.go).

func init() {
	goSaslSteps["kafka-go"] = kafkaGoSasl
	goSaslSteps["sarama"] = saramaSasl
}

// kafkaGoSasl: a Writer and a group Reader on one Dialer/Transport with
// TLS and kafka-go's SCRAM mechanism.
func kafkaGoSasl(ctx context.Context, _ string, s *secureListener, topic string, n int) Result {
	mech, err := kscram.Mechanism(kscram.SHA512, saslUser, saslPassword)
	if err != nil {
		return saslResult(err, n, "")
	}
	tlsCfg := tlstest.ClientConfig(s.ca, nil)
	err = func() error {
		w := &kafka.Writer{Addr: kafka.TCP(s.addr), Topic: topic, RequiredAcks: kafka.RequireAll, BatchTimeout: 5 * time.Millisecond,
			Transport: &kafka.Transport{TLS: tlsCfg, SASL: mech}}
		defer w.Close()
		msgs := make([]kafka.Message, n)
		for i := range n {
			msgs[i] = kafka.Message{Value: []byte(saslValue(i))}
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{s.addr}, GroupID: topic + "-g", Topic: topic,
			StartOffset: kafka.FirstOffset, MaxWait: 200 * time.Millisecond,
			Dialer: &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, TLS: tlsCfg, SASLMechanism: mech}})
		defer r.Close()
		var got []string
		for len(got) < n {
			m, err := r.FetchMessage(ctx)
			if err != nil {
				return fmt.Errorf("consume after %d of %d: %w", len(got), n, err)
			}
			got = append(got, string(m.Value))
			if err := r.CommitMessages(ctx, m); err != nil {
				return fmt.Errorf("commit: %w", err)
			}
		}
		return checkSaslValues(got, n)
	}()
	return saslResult(err, n, " in a group (committed)")
}

// xdgSCRAM is sarama's SCRAMClient on xdg-go/scram (sarama brings no
// SCRAM implementation of its own; its documentation uses this one).
type xdgSCRAM struct{ conv *scram.ClientConversation }

func (x *xdgSCRAM) Begin(user, pass, authzID string) error {
	c, err := scram.HashGeneratorFcn(sha512.New).NewClient(user, pass, authzID)
	if err != nil {
		return err
	}
	x.conv = c.NewConversation()
	return nil
}
func (x *xdgSCRAM) Step(challenge string) (string, error) { return x.conv.Step(challenge) }
func (x *xdgSCRAM) Done() bool                            { return x.conv.Done() }

func saramaSasl(ctx context.Context, _ string, s *secureListener, topic string, n int) Result {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_0_0_0
	cfg.Net.TLS.Enable, cfg.Net.TLS.Config = true, tlstest.ClientConfig(s.ca, nil)
	cfg.Net.SASL.Enable, cfg.Net.SASL.Mechanism = true, sarama.SASLTypeSCRAMSHA512
	cfg.Net.SASL.User, cfg.Net.SASL.Password = saslUser, saslPassword
	cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &xdgSCRAM{} }
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	err := func() error {
		p, err := sarama.NewSyncProducer([]string{s.addr}, cfg)
		if err != nil {
			return fmt.Errorf("producer: %w", err)
		}
		msgs := make([]*sarama.ProducerMessage, n)
		for i := range n {
			msgs[i] = &sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(saslValue(i))}
		}
		err = p.SendMessages(msgs)
		if cerr := p.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		g, err := sarama.NewConsumerGroup([]string{s.addr}, topic+"-g", cfg)
		if err != nil {
			return fmt.Errorf("consumer group: %w", err)
		}
		defer g.Close()
		h := &saslHandler{n: n, done: make(chan struct{})}
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		errc := make(chan error, 1)
		go func() { errc <- g.Consume(cctx, []string{topic}, h) }()
		select {
		case <-h.done:
		case err := <-errc:
			return fmt.Errorf("consume: %w", err)
		case <-ctx.Done():
			return fmt.Errorf("consume: %w", ctx.Err())
		}
		cancel() // ends the session, which commits the marks
		if err := <-errc; err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("closing the session: %w", err)
		}
		return checkSaslValues(h.values(), n)
	}()
	return saslResult(err, n, " in a group (marked and committed)")
}

// saslHandler collects n values, marking each, then closes done; sarama
// commits the marks when the session ends. sarama runs ConsumeClaim once
// per partition, concurrently: got is shared under mu.
type saslHandler struct {
	n    int
	mu   sync.Mutex
	got  []string
	once sync.Once
	done chan struct{}
}

func (h *saslHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *saslHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *saslHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		sess.MarkMessage(m, "")
		h.mu.Lock()
		h.got = append(h.got, string(m.Value))
		all := len(h.got) >= h.n
		h.mu.Unlock()
		if all {
			h.once.Do(func() { close(h.done) })
		}
	}
	return nil
}

// values is what the handler read so far.
func (h *saslHandler) values() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.got...)
}
