package e2e

import (
	"errors"
	"io"
	"log"
	"testing"

	"github.com/IBM/sarama"
)

func TestSaramaClusterAdmin(t *testing.T) {
	b := sharedBroker(t)
	sarama.Logger = log.New(io.Discard, "", 0)

	for _, tc := range []struct {
		name    string
		version sarama.KafkaVersion
	}{
		{"V3_6", sarama.V3_6_0_0},
		{"DefaultVersion", sarama.NewConfig().Version},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := sarama.NewConfig()
			cfg.Version = tc.version
			cfg.ClientID = "samsa-e2e-sarama"
			admin, err := sarama.NewClusterAdmin([]string{b.Addr()}, cfg)
			if err != nil {
				t.Fatalf("NewClusterAdmin (version %s): %v", tc.version, err)
			}
			defer admin.Close()

			topic := topicName(t, "s")
			retention := "7200000"
			err = admin.CreateTopic(topic, &sarama.TopicDetail{
				NumPartitions: 2, ReplicationFactor: 1,
				ConfigEntries: map[string]*string{"retention.ms": &retention},
			}, false)
			if err != nil {
				t.Fatalf("CreateTopic: %v", err)
			}
			err = admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false)
			if !errors.Is(err, sarama.ErrTopicAlreadyExists) {
				t.Errorf("second CreateTopic: %v, want ErrTopicAlreadyExists", err)
			}
			err = admin.CreateTopic(topicName(t, "rf3"), &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 3}, false)
			if !errors.Is(err, sarama.ErrInvalidReplicationFactor) {
				t.Errorf("CreateTopic with rf 3: %v, want ErrInvalidReplicationFactor", err)
			}

			topics, err := admin.ListTopics()
			if err != nil {
				t.Fatalf("ListTopics: %v", err)
			}
			d, ok := topics[topic]
			if !ok {
				t.Fatalf("ListTopics: %s missing", topic)
			}
			if d.NumPartitions != 2 || d.ReplicationFactor != 1 {
				t.Errorf("ListTopics: %d partitions rf %d, want 2, 1", d.NumPartitions, d.ReplicationFactor)
			}
			if v := d.ConfigEntries["retention.ms"]; v == nil || *v != retention {
				t.Errorf("ListTopics: non-default configs %v, want retention.ms=%s", d.ConfigEntries, retention)
			}

			meta, err := admin.DescribeTopics([]string{topic})
			if err != nil {
				t.Fatalf("DescribeTopics: %v", err)
			}
			if len(meta) != 1 || !errors.Is(meta[0].Err, sarama.ErrNoError) || len(meta[0].Partitions) != 2 {
				t.Fatalf("DescribeTopics: %+v", meta)
			}
			for _, p := range meta[0].Partitions {
				if len(p.Replicas) != 1 || p.Leader != p.Replicas[0] || len(p.Isr) != 1 {
					t.Errorf("partition %d: leader %d replicas %v isr %v", p.ID, p.Leader, p.Replicas, p.Isr)
				}
			}

			entries, err := admin.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: topic})
			if err != nil {
				t.Fatalf("DescribeConfig: %v", err)
			}
			found := false
			for _, e := range entries {
				if e.Name == "retention.ms" {
					found = true
					if e.Value != retention || e.Default || e.Source != sarama.SourceTopic {
						t.Errorf("DescribeConfig retention.ms = %+v, want %s from the topic", e, retention)
					}
				}
			}
			if !found {
				t.Errorf("DescribeConfig: retention.ms missing among %d entries", len(entries))
			}

			brokers, controller, err := admin.DescribeCluster()
			if err != nil || len(brokers) != 1 || brokers[0].ID() != controller {
				t.Errorf("DescribeCluster: %d brokers, controller %d, %v", len(brokers), controller, err)
			}

			if err := admin.DeleteTopic(topic); err != nil {
				t.Fatalf("DeleteTopic: %v", err)
			}
			if err := admin.DeleteTopic(topic); !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
				t.Errorf("second DeleteTopic: %v, want ErrUnknownTopicOrPartition", err)
			}
		})
	}
}
