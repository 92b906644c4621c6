package testkit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Kafka39Version is the Apache Kafka release that cluster mode is checked
// against: the last line with ZooKeeper mode, run from Maven Central's
// jars.
const Kafka39Version = "3.9.1"

// Main classes of Kafka 3.9.1 in the class path ResolveKafka39 resolves. Where a
// tool lives moved between releases (kafka-topics went to kafka-tools in
// 3.7; the console producer only moves there in 4.0), so these name the
// 3.9.1 places, checked against the jars.
const (
	Kafka39Server             = "kafka.Kafka"                                                // kafka_2.13
	Kafka39TopicCommand       = "org.apache.kafka.tools.TopicCommand"                        // kafka-tools
	Kafka39ConfigCommand      = "kafka.admin.ConfigCommand"                                  // kafka_2.13
	Kafka39ConsoleProducer    = "kafka.tools.ConsoleProducer"                                // kafka_2.13
	Kafka39ConsoleConsumer    = "org.apache.kafka.tools.consumer.ConsoleConsumer"            // kafka-tools
	Kafka39ConsumerGroups     = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand" // kafka-tools
	Kafka39ReassignPartitions = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"  // kafka-tools
	Kafka39LeaderElection     = "org.apache.kafka.tools.LeaderElectionCommand"               // kafka-tools
	Kafka39ZooKeeperShell     = "org.apache.zookeeper.ZooKeeperMainWithTlsSupportForKafka"   // kafka_2.13 (zookeeper-shell.sh)
	Kafka39FeatureCommand     = "org.apache.kafka.tools.FeatureCommand"                      // kafka-tools
)

// Kafka39DirEnv names the environment variable that overrides where
// ResolveKafka39 keeps its pom and resolved class path.
const Kafka39DirEnv = "SAMSA_KAFKA39_DIR"

const (
	kafka39ClassPathFile = "classpath"
	kafka39PomFile       = "pom.xml"
	kafka39ToolsLog4j    = "tools-log4j.properties"
)

// kafka39ToolsLog4jText is what Kafka's own bin/ scripts give the tools
// (config/tools-log4j.properties): warnings to stderr. Without a
// configuration reload4j prints its "no appenders" complaint instead.
const kafka39ToolsLog4jText = `log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.appender.stderr.Target=System.err
`

// kafka39Pom is the Maven project whose runtime class path is Kafka
// 3.9.1: the broker (kafka_2.13, which brings ZooKeeper 3.8.4's client),
// the tools, and the SLF4J binding Kafka's own distribution ships
// (slf4j-reload4j), without which Kafka logs nothing and a
// log4j.properties (request logging) has no effect.
const kafka39Pom = `<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by samsa's testkit (testkit/kafka.go): Apache Kafka ` + Kafka39Version + ` from Maven Central. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.samsa</groupId>
  <artifactId>testkit-kafka39</artifactId>
  <version>0</version>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>` + Kafka39Version + `</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>` + Kafka39Version + `</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>
  </dependencies>
</project>
`

// KafkaJVMOptions are the JVM options of every Kafka 3.9.1 process the
// testkit starts. The machines the tests run on are small (2 cores), and
// a test cluster moves little data: a small heap, the serial collector
// (one GC thread) and C1 only (quicker start, less compile CPU) let three
// brokers and the tools start well within a minute.
var KafkaJVMOptions = []string{"-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
	"-Xss1m", "-Djava.awt.headless=true"}

// Kafka is a resolved Apache Kafka distribution: a class path of jars in
// the local Maven repository.
type Kafka struct {
	Version   string
	ClassPath string // ':'-joined jars
	Java      string // java executable
	// ToolsLog4j is a log4j.properties file for command-line tools
	// (warnings to stderr), as Kafka's scripts use.
	ToolsLog4j string
}

var kafka39 struct {
	once sync.Once
	k    *Kafka
	err  error
}

// ResolveKafka39 resolves Apache Kafka 3.9.1 from Maven Central, once per
// process: it writes a small pom into a cache directory
// (os.UserCacheDir()/samsa-testkit/kafka-3.9.1, or $SAMSA_KAFKA39_DIR),
// runs `mvn dependency:build-classpath` there (Maven downloads the jars
// into ~/.m2 on a fresh machine, a minute or so; later runs find them) and
// keeps the class path in that directory, so later processes skip Maven
// while every jar it names is still present.
func ResolveKafka39() (*Kafka, error) {
	kafka39.once.Do(func() { kafka39.k, kafka39.err = resolveKafka39() })
	return kafka39.k, kafka39.err
}

// Kafka39Available reports whether ResolveKafka39 can work here: java on PATH and
// either Maven or a class path resolved before.
func Kafka39Available() bool {
	if _, err := exec.LookPath("java"); err != nil {
		return false
	}
	if _, err := exec.LookPath("mvn"); err == nil {
		return true
	}
	dir, err := kafka39Dir()
	if err != nil {
		return false
	}
	_, err = cachedClassPath(dir)
	return err == nil
}

// RequireKafka39 returns Kafka 3.9.1 for test t; without java or Maven it
// skips t, or fails it in CI. A resolution failure fails t.
func RequireKafka39(t testing.TB) *Kafka {
	t.Helper()
	Require(t, Kafka39Available(), "Apache Kafka "+Kafka39Version+" needs java and mvn (Maven) on PATH")
	k, err := ResolveKafka39()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func kafka39Dir() (string, error) {
	if d := os.Getenv(Kafka39DirEnv); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "samsa-testkit", "kafka-"+Kafka39Version), nil
}

func resolveKafka39() (*Kafka, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("testkit: Kafka %s needs java: %w", Kafka39Version, err)
	}
	dir, err := kafka39Dir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("testkit: %w", err)
	}
	k := &Kafka{Version: Kafka39Version, Java: java, ToolsLog4j: filepath.Join(dir, kafka39ToolsLog4j)}
	if err := writeFileIfChanged(k.ToolsLog4j, kafka39ToolsLog4jText); err != nil {
		return nil, err
	}
	if cp, err := cachedClassPath(dir); err == nil {
		k.ClassPath = cp
		return k, nil
	}
	if err := writeFileIfChanged(filepath.Join(dir, kafka39PomFile), kafka39Pom); err != nil {
		return nil, err
	}
	jars, err := MavenClassPath(dir)
	if err != nil {
		return nil, err
	}
	cp := strings.Join(jars, ":")
	// The pom's hash heads the file: a changed pom invalidates it.
	if err := writeFileIfChanged(filepath.Join(dir, kafka39ClassPathFile), pomHash()+"\n"+cp+"\n"); err != nil {
		return nil, err
	}
	k.ClassPath = cp
	return k, nil
}

// writeFileIfChanged writes text to path unless it already holds it, so
// concurrent test processes do not rewrite a file another one reads.
func writeFileIfChanged(path, text string) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == text {
		return nil
	}
	tmp := fmt.Sprintf("%s.%d", path, os.Getpid())
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return fmt.Errorf("testkit: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("testkit: %w", err)
	}
	return nil
}

func pomHash() string {
	h := sha256.Sum256([]byte(kafka39Pom))
	return hex.EncodeToString(h[:8])
}

// cachedClassPath returns the class path a previous resolve saved in dir,
// if it was made from the same pom and all its jars still exist.
func cachedClassPath(dir string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, kafka39ClassPathFile))
	if err != nil {
		return "", err
	}
	hash, cp, ok := strings.Cut(strings.TrimSpace(string(raw)), "\n")
	if !ok || hash != pomHash() || cp == "" {
		return "", errors.New("testkit: stale class path")
	}
	for _, jar := range strings.Split(cp, ":") {
		if _, err := os.Stat(jar); err != nil {
			return "", err
		}
	}
	return cp, nil
}

// MavenClassPath resolves the runtime class path of the Maven project in
// pomDir (`mvn -q -B dependency:build-classpath`), downloading what is
// missing from the local repository, and returns its jars in Maven's
// order.
func MavenClassPath(pomDir string) ([]string, error) {
	out, err := os.CreateTemp("", "samsa-testkit-cp-")
	if err != nil {
		return nil, fmt.Errorf("testkit: %w", err)
	}
	out.Close()
	defer os.Remove(out.Name())
	cmd := exec.Command("mvn", "-q", "-B", "dependency:build-classpath", "-Dmdep.outputFile="+out.Name())
	cmd.Dir = pomDir
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("testkit: mvn dependency:build-classpath in %s: %v: %s", pomDir, err, stderr.String())
	}
	raw, err := os.ReadFile(out.Name())
	if err != nil {
		return nil, fmt.Errorf("testkit: %w", err)
	}
	var jars []string
	for _, p := range strings.Split(strings.TrimSpace(string(raw)), ":") {
		if p != "" {
			jars = append(jars, p)
		}
	}
	if len(jars) == 0 {
		return nil, fmt.Errorf("testkit: mvn dependency:build-classpath in %s gave an empty class path", pomDir)
	}
	return jars, nil
}

// JavaArgs returns the java command line (argv, starting with the java
// executable) that runs class with args on k's class path, with
// KafkaJVMOptions and then jvm (more JVM options, for example
// -Dlog4j.configuration=file:...).
func (k *Kafka) JavaArgs(jvm []string, class string, args ...string) []string {
	argv := append([]string{k.Java}, KafkaJVMOptions...)
	argv = append(argv, jvm...)
	argv = append(argv, "-cp", k.ClassPath, class)
	return append(argv, args...)
}

// ServerArgs returns the command line of a Kafka broker on the
// server.properties file props: `java ... kafka.Kafka props`.
func (k *Kafka) ServerArgs(props string, jvm ...string) []string {
	return k.JavaArgs(jvm, Kafka39Server, props)
}

// ToolArgs returns the command line of a Kafka command-line tool: class
// with args, logging as Kafka's scripts set up tools (ToolsLog4j).
func (k *Kafka) ToolArgs(class string, args ...string) []string {
	return k.JavaArgs([]string{"-Dlog4j.configuration=file:" + k.ToolsLog4j}, class, args...)
}

// Command returns an exec.Cmd running the tool class with args (ToolArgs).
func (k *Kafka) Command(ctx context.Context, class string, args ...string) *exec.Cmd {
	argv := k.ToolArgs(class, args...)
	return exec.CommandContext(ctx, argv[0], argv[1:]...)
}

// Run runs a Kafka command-line tool (a main class such as
// Kafka39TopicCommand) with args and returns its combined output; a
// non-zero exit is an error carrying that output.
func (k *Kafka) Run(ctx context.Context, class string, args ...string) (string, error) {
	cmd := k.Command(ctx, class, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("testkit: %s %s: %w\n%s", class, strings.Join(args, " "), err, tail(string(out)))
	}
	return string(out), nil
}
