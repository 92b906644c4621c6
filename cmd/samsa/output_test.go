package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestWriteResultsTable(t *testing.T) {
	ok := topicResult{Topic: "orders", Outcome: "created", Partitions: 3, ReplicationFactor: 1}
	bad := topicResult{Topic: "replicated"}
	bad.setError(kerr.InvalidReplicationFactor, "Replication factor: 3 larger than available brokers: 1.")
	var buf bytes.Buffer
	if err := writeResults(&buf, formatTable, []topicResult{ok, bad}); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"TOPIC       RESULT\n" +
		"orders      created: 3 partitions, replication factor 1\n" +
		"replicated  INVALID_REPLICATION_FACTOR: Replication factor: 3 larger than available brokers: 1.\n"
	if buf.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", buf.String(), want)
	}
}

func TestWriteResultsJSON(t *testing.T) {
	r := topicResult{Topic: "a.b"}
	r.setError(kerr.TopicAlreadyExists, "") // no broker message: the standard description fills in
	var buf bytes.Buffer
	if err := writeResults(&buf, formatJSON, []topicResult{r}); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	if len(got) != 1 || got[0]["topic"] != "a.b" || got[0]["error"] != "TOPIC_ALREADY_EXISTS" ||
		got[0]["error_code"] != float64(36) || got[0]["message"] != kerr.TopicAlreadyExists.Description {
		t.Errorf("json = %s", buf.String())
	}
	if _, has := got[0]["outcome"]; has {
		t.Errorf("a failed row has an outcome: %s", buf.String())
	}
}

func TestFailedResults(t *testing.T) {
	if err := failedResults("create", []topicResult{{Topic: "a", Outcome: "created"}}); err != nil {
		t.Errorf("no failure: %v", err)
	}
	one := topicResult{Topic: "x"}
	one.setError(kerr.InvalidConfig, "Invalid value foo for configuration cleanup.policy")
	err := failedResults("create", []topicResult{{Topic: "a"}, one})
	if err == nil || err.Error() != "create x: INVALID_CONFIG: Invalid value foo for configuration cleanup.policy" {
		t.Errorf("one failure: %v", err)
	}
	two := one
	two.Topic = "y"
	err = failedResults("delete", []topicResult{one, two})
	if err == nil || !strings.HasPrefix(err.Error(), "delete failed for 2 topics; first: x: INVALID_CONFIG") {
		t.Errorf("two failures: %v", err)
	}
}

func sampleTopic() kadm.TopicDetail {
	return kadm.TopicDetail{
		Topic: "orders",
		ID:    kadm.TopicID{0xfb, 0xff, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
		Partitions: kadm.PartitionDetails{
			1: {Topic: "orders", Partition: 1, Leader: 2, LeaderEpoch: 4, Replicas: []int32{2, 1}, ISR: []int32{2}},
			0: {Topic: "orders", Partition: 0, Leader: 1, LeaderEpoch: 3, Replicas: []int32{1, 2}, ISR: []int32{1, 2}},
		},
	}
}

func TestTopicListTable(t *testing.T) {
	rows := []topicSummary{
		summarizeTopic(sampleTopic()),
		summarizeTopic(kadm.TopicDetail{Topic: "gone", Err: kerr.UnknownTopicOrPartition}),
	}
	var buf bytes.Buffer
	if err := writeTopicList(&buf, formatTable, rows); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"TOPIC   PARTITIONS  REPLICATION-FACTOR  ID\n" +
		"orders  2           2                   -_8CAwQFBgcICQoLDA0ODw\n" +
		"gone    -           -                   UNKNOWN_TOPIC_OR_PARTITION: This server does not host this topic-partition.\n"
	if buf.String() != want {
		t.Errorf("table:\n%q\nwant:\n%q", buf.String(), want)
	}
}

func TestDescribeTable(t *testing.T) {
	v := viewTopic(sampleTopic())
	retention, policy, secret := "3600000", "compact", "x"
	v.Configs = viewConfigs([]kadm.Config{
		{Key: "segment.bytes", Value: &retention, Source: kmsg.ConfigSourceDefaultConfig},
		{Key: "retention.ms", Value: &retention, Source: kmsg.ConfigSourceDynamicTopicConfig},
		{Key: "cleanup.policy", Value: &policy, Source: kmsg.ConfigSourceStaticBrokerConfig},
		{Key: "sasl.secret", Value: &secret, Sensitive: true, Source: kmsg.ConfigSourceDynamicTopicConfig},
	}, false)
	missing := viewTopic(kadm.TopicDetail{Topic: "nope", Err: kerr.UnknownTopicOrPartition})
	var buf bytes.Buffer
	if err := writeTopicDescriptions(&buf, formatTable, []topicView{v, missing}); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"Topic: orders\tID: -_8CAwQFBgcICQoLDA0ODw\tPartitions: 2\tReplicationFactor: 2\n" +
		"  CONFIG          VALUE        SOURCE\n" +
		"  cleanup.policy  compact      STATIC_BROKER_CONFIG\n" +
		"  retention.ms    3600000      DYNAMIC_TOPIC_CONFIG\n" +
		"  sasl.secret     (sensitive)  DYNAMIC_TOPIC_CONFIG\n" +
		"  PARTITION  LEADER  EPOCH  REPLICAS  ISR  OFFLINE\n" +
		"  0          1       3      1,2       1,2  \n" +
		"  1          2       4      2,1       2    \n" +
		"\n" +
		"Topic: nope\tError: UNKNOWN_TOPIC_OR_PARTITION: This server does not host this topic-partition.\n"
	if buf.String() != want {
		t.Errorf("describe:\n%s\nwant:\n%s", buf.String(), want)
	}
}

func TestDescribeJSONShowsAllConfigsOnRequest(t *testing.T) {
	v := viewTopic(sampleTopic())
	one := "1"
	v.Configs = viewConfigs([]kadm.Config{
		{Key: "min.insync.replicas", Value: &one, Source: kmsg.ConfigSourceDefaultConfig},
		{Key: "max.message.bytes", Value: nil, Source: kmsg.ConfigSourceDefaultConfig},
	}, true)
	var buf bytes.Buffer
	if err := writeTopicDescriptions(&buf, formatJSON, []topicView{v}); err != nil {
		t.Fatal(err)
	}
	var got []topicView
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Partitions) != 2 || got[0].Partitions[1].Leader != 2 ||
		len(got[0].Configs) != 2 || got[0].Configs[0].Name != "max.message.bytes" || !got[0].Configs[0].Null ||
		got[0].Configs[1].Source != "DEFAULT_CONFIG" {
		t.Errorf("json round trip: %+v", got)
	}
	buf.Reset()
	if err := writeTopicDescriptions(&buf, formatJSON, nil); err != nil || strings.TrimSpace(buf.String()) != "[]" {
		t.Errorf("no topics must be [] for scripts, got %q, %v", buf.String(), err)
	}
}

func TestParseOutputFormat(t *testing.T) {
	for in, want := range map[string]outputFormat{"table": formatTable, "JSON": formatJSON, "": formatTable} {
		if got, err := parseOutputFormat(in); err != nil || got != want {
			t.Errorf("%q: %v, %v", in, got, err)
		}
	}
	if _, err := parseOutputFormat("yaml"); err == nil {
		t.Error("yaml accepted")
	}
}
