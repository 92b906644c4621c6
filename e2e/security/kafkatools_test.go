package security

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
)

// adminCommandConfig is a Java client config authenticating as admin
// with PLAIN.
const adminCommandConfig = `security.protocol=SASL_PLAINTEXT
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret";
`

// kafkaConfigs runs Kafka 3.9.1's kafka-configs.sh against addr as the
// PLAIN admin (the Java client's SASL) and returns its output.
func kafkaConfigs(t *testing.T, k *testkit.Kafka, addr string, args ...string) string {
	t.Helper()
	return kafkaConfigsAs(t, k, addr, adminCommandConfig, args...)
}

// kafkaConfigsAs is kafkaConfigs with the client config clientConfig.
func kafkaConfigsAs(t *testing.T, k *testkit.Kafka, addr, clientConfig string, args ...string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "client.properties")
	if err := os.WriteFile(cfg, []byte(clientConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := k.Run(ctx, testkit.Kafka39ConfigCommand, append([]string{"--bootstrap-server", addr, "--command-config", cfg}, args...)...)
	if err != nil {
		t.Fatalf("kafka-configs %v: %v\n%s", args, err, out)
	}
	return out
}

// Kafka's own tool makes a SCRAM user on a single broker; franz-go logs
// in as it, --describe lists it, and it still works after a restart.
func TestKafkaConfigsCreatesScramUser(t *testing.T) {
	k := testkit.RequireKafka39(t)
	b := startSASLBroker(t)
	kafkaConfigs(t, k, b.saslAddr(), "--alter", "--entity-type", "users", "--entity-name", "carol",
		"--add-config", "SCRAM-SHA-256=[iterations=8192,password=carol-secret],SCRAM-SHA-512=[password=carol-512]")
	out := kafkaConfigs(t, k, b.saslAddr(), "--describe", "--entity-type", "users", "--entity-name", "carol")
	if !strings.Contains(out, "SCRAM-SHA-256=iterations=8192") || !strings.Contains(out, "SCRAM-SHA-512=iterations=4096") {
		t.Fatalf("describe: %s", out)
	}
	// Java's SCRAM client logs in as carol too.
	carolConfig := "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n" +
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="carol" password="carol-512";` + "\n"
	if out := kafkaConfigsAs(t, k, b.saslAddr(), carolConfig, "--describe", "--entity-type", "users", "--entity-name", "carol"); !strings.Contains(out, "SCRAM-SHA-512") {
		t.Fatalf("describe as carol: %s", out)
	}
	m := scramMech("SCRAM-SHA-256", "carol", "carol-secret")
	roundTrip(t, client(t, b.saslAddr(), m), b.saslAddr(), m, "carol-topic", 3)

	b.Restart()
	m = scramMech("SCRAM-SHA-512", "carol", "carol-512")
	roundTrip(t, client(t, b.saslAddr(), m), b.saslAddr(), m, "carol-after-restart", 3)

	kafkaConfigs(t, k, b.saslAddr(), "--alter", "--entity-type", "users", "--entity-name", "carol", "--delete-config", "SCRAM-SHA-512")
	out = kafkaConfigs(t, k, b.saslAddr(), "--describe", "--entity-type", "users", "--entity-name", "carol")
	if strings.Contains(out, "SCRAM-SHA-512") || !strings.Contains(out, "SCRAM-SHA-256") {
		t.Fatalf("describe after deleting SCRAM-SHA-512: %s", out)
	}
}
