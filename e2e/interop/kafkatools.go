package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Apache Kafka's command-line tools, run from the kafka-tools and
// kafka_2.13 jars' main classes (interop/java/target/lib): the console
// producer and consumer, kafka-topics, kafka-configs and
// kafka-consumer-groups.
const (
	topicCommand         = "org.apache.kafka.tools.TopicCommand"
	configCommand        = "kafka.admin.ConfigCommand"
	consoleProducer      = "org.apache.kafka.tools.ConsoleProducer"
	consoleConsumer      = "org.apache.kafka.tools.consumer.ConsoleConsumer"
	consumerGroupCommand = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
)

func kafkaTool(ctx context.Context, root string, stdin []byte, class string, args ...string) (string, error) {
	argv := append([]string{"-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", javaClasspath(root), class}, args...)
	out, err := runCmd(ctx, stdin, "java", argv...)
	if err != nil {
		return out, fmt.Errorf("%s: %w", class[strings.LastIndex(class, ".")+1:], err)
	}
	return out, nil
}

// consoleLine is DefaultMessageFormatter's line with print.timestamp,
// print.partition, print.offset, print.headers and print.key.
var consoleLine = regexp.MustCompile(`^(CreateTime|LogAppendTime|NoTimestampType):(-?\d+)\tPartition:(\d+)\tOffset:(\d+)\t(.*?)\t(.*?)\t(.*)$`)

func runKafkaTools(ctx context.Context, root, bootstrap, prefix string, count int) *Report {
	if err := javaSetup(ctx, root); err != nil {
		rep := newReport("kafka CLI tools")
		rep.failAll("installing the client: " + err.Error())
		return rep
	}
	version := "Apache Kafka tools"
	if jars, _ := filepath.Glob(filepath.Join(root, "interop", "java", "target", "lib", "kafka-tools-[0-9]*.jar")); len(jars) > 0 {
		version = "kafka-tools " + strings.TrimSuffix(strings.TrimPrefix(filepath.Base(jars[0]), "kafka-tools-"), ".jar")
	}
	s := toolScenario{client: "kafka CLI tools", wantHeaders: "client:tools,pad:",
		produce: func(ctx context.Context, topic, codec string, count int, idempotent bool) error {
			in := toolInput(count, func(int) string { return "\t" }, func(int) string { return "NULL\t" },
				func(int) string { return "client:tools,pad:\t" })
			args := []string{"--bootstrap-server", bootstrap, "--topic", topic,
				"--property", "parse.key=true", "--property", "key.separator=\t",
				"--property", "parse.headers=true", "--property", "null.marker=NULL",
				"--producer-property", "acks=all", "--producer-property", "enable.idempotence=" + strconv.FormatBool(idempotent)}
			if codec != "none" {
				args = append(args, "--compression-codec", codec)
			}
			_, err := kafkaTool(ctx, root, in, consoleProducer, args...)
			return err
		},
		consume: func(ctx context.Context, topic, group string, count int) ([]toolRecord, error) {
			out, err := kafkaTool(ctx, root, nil, consoleConsumer, "--bootstrap-server", bootstrap, "--topic", topic,
				"--group", group, "--from-beginning", "--max-messages", strconv.Itoa(count), "--timeout-ms", "30000",
				"--property", "print.timestamp=true", "--property", "print.partition=true",
				"--property", "print.offset=true", "--property", "print.headers=true",
				"--property", "print.key=true", "--property", "null.literal=<null>")
			var recs []toolRecord
			for _, line := range strings.Split(out, "\n") {
				m := consoleLine.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				ts, _ := strconv.ParseInt(m[2], 10, 64)
				p, _ := strconv.Atoi(m[3])
				off, _ := strconv.ParseInt(m[4], 10, 64)
				var key *string
				if m[6] != "<null>" {
					key = &m[6]
				}
				recs = append(recs, toolRecord{Topic: topic, Partition: int32(p), Offset: off, Key: key, Value: m[7],
					Headers: m[5], Timestamp: ts, CreateTime: m[1] == "CreateTime"})
			}
			return recs, err
		},
		committed: func(ctx context.Context, group string, topics []string) string {
			out, err := kafkaTool(ctx, root, nil, consumerGroupCommand, "--bootstrap-server", bootstrap, "--describe", "--group", group)
			if err != nil {
				return err.Error()
			}
			// GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ...
			rows := 0
			var bad []string
			for _, line := range strings.Split(out, "\n") {
				f := strings.Fields(line)
				if len(f) < 6 || f[0] != group {
					continue
				}
				rows++
				if f[3] != f[4] || f[5] != "0" {
					bad = append(bad, line)
				}
			}
			if want := len(topics) * partitions; rows != want {
				return fmt.Sprintf("kafka-consumer-groups --describe shows %d partitions, want %d:\n%s", rows, want, out)
			}
			return strings.Join(bad, "; ")
		},
	}
	rep := s.run(ctx, prefix, count)
	rep.Version = version
	rep.Notes = append(rep.Notes, "kafka-console-producer sets no timestamps: create times of the produce run are checked; the same headers on every record")
	if err := kafkaToolsAdmin(ctx, root, bootstrap, prefix+"-admin"); err != nil {
		rep.set("admin", Fail, "%v", err)
	} else {
		rep.set("admin", Pass, "kafka-topics --create/--describe/--list/--delete, kafka-configs --describe --all")
	}
	return rep
}

func kafkaToolsAdmin(ctx context.Context, root, bootstrap, topic string) error {
	b := []string{"--bootstrap-server", bootstrap}
	if _, err := kafkaTool(ctx, root, nil, topicCommand, append(b, "--create", "--topic", topic, "--partitions", "2", "--replication-factor", "1")...); err != nil {
		return err
	}
	out, err := kafkaTool(ctx, root, nil, topicCommand, append(b, "--describe", "--topic", topic)...)
	if err != nil {
		return err
	}
	if !strings.Contains(out, "PartitionCount: 2") {
		return fmt.Errorf("kafka-topics --describe: no PartitionCount: 2 in %q", out)
	}
	out, err = kafkaTool(ctx, root, nil, topicCommand, append(b, "--list")...)
	if err != nil {
		return err
	}
	if !strings.Contains("\n"+out+"\n", "\n"+topic+"\n") {
		return fmt.Errorf("kafka-topics --list misses %s", topic)
	}
	out, err = kafkaTool(ctx, root, nil, configCommand, append(b, "--describe", "--entity-type", "topics", "--entity-name", topic, "--all")...)
	if err != nil {
		return err
	}
	if !strings.Contains(out, "retention.ms=") {
		return fmt.Errorf("kafka-configs --describe --all: no retention.ms in %q", tailLines(out, 5))
	}
	if _, err := kafkaTool(ctx, root, nil, topicCommand, append(b, "--delete", "--topic", topic)...); err != nil {
		return err
	}
	return nil
}
