package e2e

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

func TestKafkaGo(t *testing.T) {
	b := sharedBroker(t)

	t.Run("ConnTopics", func(t *testing.T) {
		conn, err := kafka.Dial("tcp", b.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		controller, err := conn.Controller()
		if err != nil {
			t.Fatalf("Controller: %v", err)
		}
		if got := net.JoinHostPort(controller.Host, strconv.Itoa(controller.Port)); got != b.Addr() {
			t.Errorf("controller at %s, want %s", got, b.Addr())
		}

		topic := topicName(t, "kg")
		err = conn.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: 3, ReplicationFactor: 1,
			ConfigEntries: []kafka.ConfigEntry{{ConfigName: "retention.ms", ConfigValue: "900000"}}})
		if err != nil {
			t.Fatalf("CreateTopics: %v", err)
		}
		// kafka-go's Conn.CreateTopics treats TOPIC_ALREADY_EXISTS as success.
		if err := conn.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: 1, ReplicationFactor: 1}); err != nil {
			t.Errorf("second CreateTopics: %v, want nil (kafka-go ignores TopicAlreadyExists)", err)
		}
		err = conn.CreateTopics(kafka.TopicConfig{Topic: topicName(t, "rf3"), NumPartitions: 1, ReplicationFactor: 3})
		if !errors.Is(err, kafka.InvalidReplicationFactor) {
			t.Errorf("CreateTopics with rf 3: %v, want InvalidReplicationFactor", err)
		}

		parts, err := conn.ReadPartitions(topic)
		if err != nil {
			t.Fatalf("ReadPartitions: %v", err)
		}
		sort.Slice(parts, func(i, j int) bool { return parts[i].ID < parts[j].ID })
		if len(parts) != 3 {
			t.Fatalf("ReadPartitions: %d partitions, want 3", len(parts))
		}
		for i, p := range parts {
			if p.ID != i || p.Topic != topic || p.Leader.ID != controller.ID || len(p.Replicas) != 1 || len(p.Isr) != 1 {
				t.Errorf("partition %+v", p)
			}
		}

		if err := conn.DeleteTopics(topic); err != nil {
			t.Fatalf("DeleteTopics: %v", err)
		}
		if err := conn.DeleteTopics(topic); !errors.Is(err, kafka.UnknownTopicOrPartition) {
			t.Errorf("second DeleteTopics: %v, want UnknownTopicOrPartition", err)
		}
	})

	t.Run("ClientMetadata", func(t *testing.T) {
		adm := newAdmin(t, b.Addr())
		topic := topicName(t, "meta")
		mustCreate(t, adm, topic, 2, nil)

		client := &kafka.Client{Addr: kafka.TCP(b.Addr())}
		var resp *kafka.MetadataResponse
		eventually(t, 5*time.Second, func() error { // Kafka publishes a new topic asynchronously
			var err error
			resp, err = client.Metadata(testContext(t), &kafka.MetadataRequest{Topics: []string{topic}})
			if err != nil {
				return fmt.Errorf("Metadata: %w", err)
			}
			if len(resp.Topics) == 1 && resp.Topics[0].Error != nil {
				return fmt.Errorf("Metadata of %s: %w", topic, resp.Topics[0].Error)
			}
			return nil
		})
		if resp == nil {
			t.FailNow()
		}
		if len(resp.Brokers) != 1 || resp.Controller.ID != resp.Brokers[0].ID {
			t.Errorf("brokers %+v, controller %+v", resp.Brokers, resp.Controller)
		}
		if resp.ClusterID == "" {
			t.Error("no cluster id")
		}
		if len(resp.Topics) != 1 || resp.Topics[0].Name != topic || resp.Topics[0].Error != nil ||
			len(resp.Topics[0].Partitions) != 2 {
			t.Fatalf("topics %+v", resp.Topics)
		}
		missing := topicName(t, "nope")
		resp, err := client.Metadata(testContext(t), &kafka.MetadataRequest{Topics: []string{missing}})
		if err != nil {
			t.Fatalf("Metadata of a missing topic: %v", err)
		}
		if len(resp.Topics) != 1 || !errors.Is(resp.Topics[0].Error, kafka.UnknownTopicOrPartition) {
			t.Errorf("missing topic: %+v, want UnknownTopicOrPartition (kafka.Client does not ask for auto-creation)", resp.Topics)
		}
	})
}
