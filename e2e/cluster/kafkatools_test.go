package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
)

// interopPom is the Maven project of the Java interop harness; its
// kafka.version is the Kafka release whose tools `make interop` runs
// (4.1.1), so these tests follow it.
const interopPom = "../../interop/java/pom.xml"

// Main classes of Apache Kafka 4.x's tools (kafka-tools jar).
const (
	kafka4TopicCommand       = "org.apache.kafka.tools.TopicCommand"
	kafka4BrokerApiVersions  = "org.apache.kafka.tools.BrokerApiVersionsCommand"
	kafka39BrokerApiVersions = "kafka.admin.BrokerApiVersionsCommand" // kafka_2.13 3.9.1
)

// kafka4 is the class path of Kafka 4.x's tools, resolved once.
var kafka4 struct {
	once    sync.Once
	version string
	cp      string
	err     error
}

var kafkaVersionRE = regexp.MustCompile(`<kafka\.version>([^<]+)</kafka\.version>`)

// kafka4Tools returns the version and class path of Kafka's 4.x tools,
// the ones `make interop` runs. When interop/java is built (make interop
// ran, as in CI before `make cluster-test`) its target/lib is used; else
// the same kafka-tools release is resolved with Maven into a cache
// directory, so this package never builds interop/java itself (another
// package building it at the same time would trip over it). Without java
// or Maven it skips t (fails in CI).
func kafka4Tools(t *testing.T) (version, classPath string) {
	t.Helper()
	testkit.RequireTool(t, "java")
	kafka4.once.Do(func() { kafka4.version, kafka4.cp, kafka4.err = resolveKafka4() })
	if kafka4.err != nil {
		if strings.Contains(kafka4.err.Error(), "executable file not found") {
			testkit.Require(t, false, "Kafka's tools need mvn (Maven) on PATH")
		}
		t.Fatalf("resolving Kafka's tools: %v", kafka4.err)
	}
	return kafka4.version, kafka4.cp
}

func resolveKafka4() (string, string, error) {
	pom, err := os.ReadFile(interopPom)
	if err != nil {
		return "", "", err
	}
	m := kafkaVersionRE.FindSubmatch(pom)
	if m == nil {
		return "", "", fmt.Errorf("%s names no kafka.version", interopPom)
	}
	version := string(m[1])
	lib, err := filepath.Abs(filepath.Join(filepath.Dir(interopPom), "target", "lib"))
	if err != nil {
		return "", "", err
	}
	if _, err := os.Stat(filepath.Join(lib, "kafka-tools-"+version+".jar")); err == nil {
		return version, filepath.Join(lib, "*"), nil
	}
	if _, err := exec.LookPath("mvn"); err != nil {
		return "", "", err
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	text := fmt.Sprintf(toolsPom, version)
	sum := sha256.Sum256([]byte(text))
	dir := filepath.Join(base, "samsa-e2e-cluster", "kafka-tools-"+version+"-"+hex.EncodeToString(sum[:6]))
	cpFile := filepath.Join(dir, "classpath")
	if raw, err := os.ReadFile(cpFile); err == nil && allExist(strings.Split(strings.TrimSpace(string(raw)), ":")) {
		return version, strings.TrimSpace(string(raw)), nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "pom.xml"), []byte(text), 0o644); err != nil {
		return "", "", err
	}
	jars, err := testkit.MavenClassPath(dir)
	if err != nil {
		return "", "", err
	}
	cp := strings.Join(jars, ":")
	tmp := fmt.Sprintf("%s.%d", cpFile, os.Getpid())
	if err := os.WriteFile(tmp, []byte(cp+"\n"), 0o644); err == nil {
		_ = os.Rename(tmp, cpFile)
	}
	return version, cp, nil
}

func allExist(paths []string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); p == "" || err != nil {
			return false
		}
	}
	return len(paths) > 0
}

// toolsPom resolves Kafka's tools of one release (%s) and the SLF4J
// binding interop/java uses, which sends the tools' warnings to stderr.
const toolsPom = `<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by samsa's e2e/cluster tests: Apache Kafka's tools from Maven Central. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.samsa</groupId>
  <artifactId>e2e-cluster-kafka-tools</artifactId>
  <version>0</version>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>%s</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-simple</artifactId><version>2.0.16</version></dependency>
  </dependencies>
</project>
`

// runKafka4 runs a Kafka 4.x tool's main class as e2e/interop does (java
// -cp <jars> class args) and returns its combined output.
func runKafka4(t *testing.T, class string, args ...string) string {
	t.Helper()
	_, cp := kafka4Tools(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append([]string{"-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", cp, class}, args...)
	began := time.Now()
	out, err := exec.CommandContext(ctx, "java", argv...).CombinedOutput()
	t.Logf("%s (4.x) took %v", class[strings.LastIndex(class, ".")+1:], time.Since(began).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", class, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// runKafka39 runs a Kafka 3.9.1 tool through testkit.
func runKafka39(t *testing.T, class string, args ...string) string {
	t.Helper()
	k := testkit.RequireKafka39(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	began := time.Now()
	out, err := k.Run(ctx, class, args...)
	t.Logf("%s (3.9.1) took %v", class[strings.LastIndex(class, ".")+1:], time.Since(began).Round(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return out
}
