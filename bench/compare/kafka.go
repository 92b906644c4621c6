package compare

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/samsa-io/samsa/testkit"
)

// JVMOptions are the options every Kafka JVM (broker and tools) gets: a
// fixed heap so memory figures compare like for like. Kafka's own start
// script uses -Xmx1G -Xms1G with G1; a smaller heap suits a shared
// 2-core machine and is stated in the report.
var JVMOptions = []string{"-Xms512m", "-Xmx512m", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
	"-Djava.awt.headless=true", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"}

// KafkaClassPath resolves the class path of pomDir's pom with Maven
// (kafka_2.13, kafka-tools, kafka-clients from Maven Central), with SLF4J
// 2 so Kafka's log lines are visible.
func KafkaClassPath(pomDir, m2 string) (string, error) {
	jars, err := testkit.MavenClassPath(pomDir)
	if err != nil {
		return "", fmt.Errorf("compare: %w", err)
	}
	// SLF4J 2's API replaces 1.x only when its jar is in the local
	// repository (Maven may hold just its pom): without any API jar
	// Kafka's StorageTool dies on NoClassDefFoundError.
	api := filepath.Join(m2, "org/slf4j/slf4j-api/2.0.16/slf4j-api-2.0.16.jar")
	_, err = os.Stat(api)
	have2 := err == nil
	var parts []string
	for _, p := range jars {
		if have2 && strings.Contains(filepath.Base(p), "slf4j-api-1.") {
			continue
		}
		parts = append(parts, p)
	}
	if have2 {
		parts = append(parts, api)
	}
	return strings.Join(parts, ":"), nil
}

// KafkaConfig is a single KRaft node with extra server.properties lines.
func KafkaConfig(name, classPath string, durable bool, extra ...string) Config {
	return kafkaConfig(name, classPath, durable, nil, extra...)
}

// KafkaTLSConfig is KafkaConfig with an SSL listener (also the
// inter-broker one, as a single node's must be) serving files' keystore.
func KafkaTLSConfig(name, classPath string, durable bool, files *TLSFiles, extra ...string) Config {
	return kafkaConfig(name, classPath, durable, files, extra...)
}

func kafkaConfig(name, classPath string, durable bool, files *TLSFiles, extra ...string) Config {
	settings := "Kafka defaults (log.flush.interval.messages unset: acknowledged from the page cache)"
	if len(extra) > 0 {
		settings = "Kafka " + strings.Join(extra, ", ")
	}
	settings += "; group.initial.rebalance.delay.ms=0; storage formatted with share.version=1 (share groups); JVM " + strings.Join(JVMOptions[:4], " ")
	listener := "PLAINTEXT"
	var tlsConfig *tls.Config
	if files != nil {
		listener, tlsConfig = "SSL", files.Client
		settings += "; " + tlsSettings
		extra = append(append([]string{"inter.broker.listener.name=SSL"}, files.serverSettings()...), extra...)
	}
	return Config{Name: name, Broker: "kafka", Settings: settings, Durable: durable, TLS: tlsConfig,
		start: func(ctx context.Context, dir string, port int) (*exec.Cmd, error) {
			cport, err := FreePort()
			if err != nil {
				return nil, err
			}
			props := fmt.Sprintf(`process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:%[1]d
listeners=%[5]s://127.0.0.1:%[2]d,CONTROLLER://127.0.0.1:%[1]d
advertised.listeners=%[5]s://127.0.0.1:%[2]d
controller.listener.names=CONTROLLER
listener.security.protocol.map=%[5]s:%[5]s,CONTROLLER:PLAINTEXT
log.dirs=%[3]s
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
num.partitions=1
%[4]s
`, cport, port, filepath.Join(dir, "data"), strings.Join(extra, "\n"), listener)
			propsFile := filepath.Join(dir, "server.properties")
			if err := os.WriteFile(propsFile, []byte(props), 0o644); err != nil {
				return nil, err
			}
			java := func(args ...string) *exec.Cmd {
				return exec.Command("java", append(append(append([]string{}, JVMOptions...), "-cp", classPath), args...)...)
			}
			// A fixed cluster id (any 16 bytes, base64): the directory is
			// new each time. Kafka 4.1 serves share groups (workload S1)
			// only once the share.version feature is 1 (its upgrade notes:
			// kafka-features.sh upgrade --feature share.version=1); setting
			// it at format time is the same without a second tool run.
			format := java("kafka.tools.StorageTool", "format", "-t", "YmVuY2gtY29tcGFyZS0wMQ", "-c", propsFile, "--feature", "share.version=1")
			if out, err := format.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("compare: kafka storage format: %v: %s", err, out)
			}
			cmd := java("kafka.Kafka", propsFile)
			log, err := os.Create(filepath.Join(dir, "..", filepath.Base(dir)+".log"))
			if err != nil {
				return nil, err
			}
			cmd.Stdout, cmd.Stderr = log, log
			return cmd, cmd.Start()
		}}
}
