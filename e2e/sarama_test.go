package e2e

import (
	"errors"
	"io"
	"log"
	"strconv"
	"strings"
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

			brokers, controller, err := admin.DescribeCluster()
			if err != nil || len(brokers) != 1 || brokers[0].ID() != controller {
				t.Fatalf("DescribeCluster: %d brokers, controller %d, %v", len(brokers), controller, err)
			}
			missing := topicName(t, "nope")
			results, err := admin.DescribeConfigs([]*sarama.ConfigResource{
				{Type: sarama.TopicResource, Name: topic},
				{Type: sarama.TopicResource, Name: missing},
				{Type: sarama.BrokerResource, Name: strconv.Itoa(int(controller))},
			}, sarama.DescribeConfigsOptions{IncludeSynonyms: true})
			if err != nil {
				t.Fatalf("DescribeConfigs: %v", err)
			}
			byName := map[string]*sarama.ConfigResourceResult{}
			for _, r := range results {
				byName[r.Name] = r
			}
			if r := byName[missing]; r == nil || !errors.Is(r.ErrorCode, sarama.ErrUnknownTopicOrPartition) {
				t.Errorf("DescribeConfigs of a missing topic: %+v, want ErrUnknownTopicOrPartition", r)
			}
			if r := byName[strconv.Itoa(int(controller))]; r == nil || r.ErrorCode != sarama.ErrNoError || len(r.Configs) == 0 {
				t.Errorf("DescribeConfigs of broker %d: %+v", controller, r)
			}
			r := byName[topic]
			if r == nil || r.ErrorCode != sarama.ErrNoError {
				t.Fatalf("DescribeConfigs of %s: %+v", topic, r)
			}
			found := false
			for _, e := range r.Configs {
				if e.Name != "retention.ms" {
					continue
				}
				found = true
				if e.Value != retention || e.Default || e.Source != sarama.SourceTopic {
					t.Errorf("DescribeConfigs retention.ms = %+v, want %s from the topic", e, retention)
				}
				// Synonyms: the topic override first, then any broker keys it
				// would otherwise follow (Kafka 4.1 lists only those set).
				if len(e.Synonyms) == 0 || e.Synonyms[0].ConfigName != "retention.ms" || e.Synonyms[0].Source != sarama.SourceTopic {
					t.Errorf("retention.ms synonyms %+v, want retention.ms (topic) first", synonymNames(e.Synonyms))
				}
				for _, syn := range e.Synonyms[min(1, len(e.Synonyms)):] {
					if !strings.HasPrefix(syn.ConfigName, "log.retention.") {
						t.Errorf("retention.ms synonym %s, want log.retention.*", syn.ConfigName)
					}
				}
			}
			if !found {
				t.Errorf("DescribeConfigs: retention.ms missing among %d entries", len(r.Configs))
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

func synonymNames(ss []*sarama.ConfigSynonym) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.ConfigName+"="+s.ConfigValue+" ("+s.Source.String()+")")
	}
	return out
}
