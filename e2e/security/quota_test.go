package security

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// throttled records whether a client was told to wait.
type throttled struct {
	once sync.Once
	ch   chan struct{}
}

func (h *throttled) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	if d > 0 {
		h.once.Do(func() { close(h.ch) })
	}
}

// Kafka 3.9.1's kafka-configs.sh sets a user quota (AlterClientQuotas),
// describes it (DescribeClientQuotas next to the SCRAM credentials), it
// holds user alice's producer (principal User:alice over SASL PLAIN) and
// not the admin, survives a restart, and is deleted.
func TestKafkaConfigsUserQuota(t *testing.T) {
	k := testkit.RequireKafka39(t)
	b := startSASLBroker(t)
	kafkaConfigs(t, k, b.saslAddr(), "--alter", "--entity-type", "users", "--entity-name", "alice", "--add-config", "producer_byte_rate=1024")
	if out := kafkaConfigs(t, k, b.saslAddr(), "--describe", "--entity-type", "users", "--entity-name", "alice"); !strings.Contains(out, "producer_byte_rate=1024") {
		t.Fatalf("describe: %s", out)
	}

	// 1024 B/s over a 10 s window admits about 10 KiB at once: the third
	// 5000-byte record is over it.
	produce := func(user, pass string) <-chan struct{} {
		h := &throttled{ch: make(chan struct{})}
		cl := client(t, b.saslAddr(), plainMech(user, pass), kgo.WithHooks(h), kgo.ProducerBatchCompression(kgo.NoCompression()))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for range 3 {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "quota-" + user, Value: make([]byte, 5000)}).FirstErr(); err != nil {
				t.Fatalf("%s: %v", user, err)
			}
		}
		return h.ch
	}
	select {
	case <-produce("alice", "alice-secret"):
	case <-time.After(10 * time.Second):
		t.Fatal("alice was not throttled")
	}
	select {
	case <-produce("admin", "admin-secret"):
		t.Fatal("admin, who has no quota, was throttled")
	default:
	}

	b.Restart()
	if out := kafkaConfigs(t, k, b.saslAddr(), "--describe", "--entity-type", "users", "--entity-name", "alice"); !strings.Contains(out, "producer_byte_rate=1024") {
		t.Fatalf("describe after a restart: %s", out)
	}
	kafkaConfigs(t, k, b.saslAddr(), "--alter", "--entity-type", "users", "--entity-name", "alice", "--delete-config", "producer_byte_rate")
	if out := kafkaConfigs(t, k, b.saslAddr(), "--describe", "--entity-type", "users", "--entity-name", "alice"); strings.Contains(out, "producer_byte_rate") {
		t.Fatalf("describe after the deletion: %s", out)
	}
}
