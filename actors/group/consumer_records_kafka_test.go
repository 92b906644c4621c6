package group

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestConsumerRecordsAgainstKafka has Apache Kafka's own serde decode the
// KIP-848 records a real run of the core writes (every record type and
// tombstones), and replays records Kafka's classes wrote. Skipped without
// Java or the jars, and with -short.
func TestConsumerRecordsAgainstKafka(t *testing.T) {
	java, cp := kafkaJava(t)

	// A group with two members, one of which then leaves.
	h := newHarness(t)
	h.topics = consumerTopics()
	a := &cclient{id: "sa", topics: []string{"a"}, instance: strPtr("sinst"), owned: partitions{}}
	b := &cclient{id: "sb", topics: []string{"a", "b"}, regex: strPtr("c.*"), owned: partitions{}}
	h.cgHeartbeat("sgroup", a, 1)
	h.cgHeartbeat("sgroup", b, 1)
	h.cgHeartbeat("sgroup", a, 1)
	h.cgHeartbeat("sgroup", b, 1)
	h.cgLeave("sgroup", b, leaveEpoch)
	var ours []Record
	for _, r := range h.log {
		if k, _ := DecodeKey(r.Key); k.Kind == KeyConsumer {
			ours = append(ours, r)
		}
	}
	// And a classic member's (online migration), with its tagged field.
	ours = append(ours, consumerMemberMetadataRecord("sgroup", &cmember{id: "sclassic", clientID: "cc", clientHost: "/h",
		topicNames: []string{"a"}, rebalanceTimeout: time.Second,
		classic: &classicInfo{sessionTimeout: 6 * time.Second, protocols: []protocol{{name: "range", metadata: []byte{1, 2}}}}}))
	out := runKafkaProgram(t, java, cp, "KafkaConsumerGroupRecords.java", ours)

	var decoded []map[string]any
	kafkaRecords := kafkaOutput(out, func(kind, rest string) {
		if kind != "D" {
			return
		}
		k, v, _ := strings.Cut(rest, "\t")
		var key, value map[string]any
		if err := json.Unmarshal([]byte(k), &key); err != nil {
			t.Fatalf("key json %q: %v", k, err)
		}
		if v != "null" {
			if err := json.Unmarshal([]byte(v), &value); err != nil {
				t.Fatalf("value json %q: %v", v, err)
			}
		}
		decoded = append(decoded, map[string]any{"key": key, "value": value})
	})
	if len(decoded) != len(ours) {
		t.Fatalf("Kafka decoded %d of our %d records:\n%s", len(decoded), len(ours), out)
	}
	var sawMember, sawCurrent, sawTarget, sawTombstone bool
	for i, d := range decoded {
		key, _ := d["key"].(map[string]any)
		value, _ := d["value"].(map[string]any)
		if key["groupId"] != "sgroup" {
			t.Errorf("record %d: key %v", i, key)
		}
		switch {
		case value == nil:
			sawTombstone = true
		case key["memberId"] == "sa" && value["clientId"] != nil:
			sawMember = true
			if value["instanceId"] != "sinst" || value["clientHost"] != "/127.0.0.1" || value["rebalanceTimeoutMs"] != 30000.0 {
				t.Errorf("member metadata as Kafka reads it: %v", value)
			}
		case key["memberId"] == "sclassic":
			cm, _ := value["classicMemberMetadata"].(map[string]any)
			if cm["sessionTimeoutMs"] != 6000.0 {
				t.Errorf("classic member metadata as Kafka reads it: %v", value)
			}
		case key["memberId"] == "sb" && value["subscribedTopicRegex"] != nil:
			if value["subscribedTopicRegex"] != "c.*" {
				t.Errorf("regex as Kafka reads it: %v", value)
			}
		case key["memberId"] == "sa" && value["memberEpoch"] != nil:
			sawCurrent = true
		case key["memberId"] == "sa" && value["topicPartitions"] != nil:
			sawTarget = true
		}
	}
	if !sawMember || !sawCurrent || !sawTarget || !sawTombstone {
		t.Errorf("Kafka's reading lacks a kind: member %v current %v target %v tombstone %v\n%s", sawMember, sawCurrent, sawTarget, sawTombstone, out)
	}

	// Kafka's records replay into a consumer group.
	c := NewCoordinator(testConfig())
	c.BeginLoad()
	for _, r := range kafkaRecords {
		if err := c.Replay(r.Key, r.Value); err != nil {
			t.Fatalf("replaying Kafka's record %x: %v", r.Key, err)
		}
	}
	c.EndLoad(t0)
	g := c.Group("kgroup")
	if g == nil || g.cg == nil {
		t.Fatal("Kafka's consumer group did not replay")
	}
	m := g.cg.members["km-1"]
	if g.cg.epoch != 7 || g.cg.assignmentEpoch != 7 || m == nil || m.epoch != 7 || m.prevEpoch != 6 || m.state != memberUnreleased ||
		m.instanceID != "kinst" || m.clientHost != "/10.0.0.9" || *m.assignor != "range" || len(m.assigned[[16]byte{15: 1}]) != 2 ||
		len(g.cg.target["km-1"][[16]byte{15: 1}]) != 3 || g.cg.topics["ktopic"].Partitions != 3 {
		t.Fatalf("replayed Kafka group: %+v member %+v", g.cg, m)
	}
	d := g.ConsumerGroupDescribe(1)
	if d.ErrorCode != 0 || len(d.Members) != 1 || d.Members[0].Assignment.TopicPartitions[0].Topic != "ktopic" {
		t.Fatalf("describe: %+v", d)
	}
}
