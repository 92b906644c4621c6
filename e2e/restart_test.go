package e2e

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// recoveryLine matches the broker's log lines about scanning or repairing
// a partition log at start (actors' "partition log recovered ...",
// segment's "recovery cut the log", "rebuilding damaged index"), which a
// clean shutdown must make unnecessary.
var recoveryLine = regexp.MustCompile(`(?i)log recovered|recovery cut|rebuilding damaged index|did not close cleanly`)

type topicState struct {
	id         kadm.TopicID
	partitions int
	configs    map[string]string // dynamic topic configs
}

func snapshotTopics(t *testing.T, adm *kadm.Client, topics ...string) map[string]topicState {
	t.Helper()
	details, err := adm.ListTopics(testContext(t), topics...)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]topicState{}
	for _, topic := range topics {
		d := details[topic]
		if d.Err != nil {
			continue
		}
		st := topicState{id: d.ID, partitions: len(d.Partitions), configs: map[string]string{}}
		for _, c := range describeTopicConfig(t, adm, topic).Configs {
			if c.Source == kmsg.ConfigSourceDynamicTopicConfig && c.Value != nil {
				st.configs[c.Key] = *c.Value
			}
		}
		out[topic] = st
	}
	return out
}

func TestRestartKeepsTopicsAndConfigs(t *testing.T) {
	b := testkit.StartBroker(t, testkit.BrokerConfig{})
	adm := newAdmin(t, b.Addr())

	kept, altered, grown, deleted := topicName(t, "kept"), topicName(t, "altered"), topicName(t, "grown"), topicName(t, "deleted")
	mustCreate(t, adm, kept, 3, map[string]*string{"retention.ms": ptr("1234567"), "cleanup.policy": ptr("compact")})
	mustCreate(t, adm, altered, 1, map[string]*string{"segment.bytes": ptr("1048576")})
	mustCreate(t, adm, grown, 1, nil)
	mustCreate(t, adm, deleted, 1, nil)
	if _, err := adm.AlterTopicConfigs(testContext(t), []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "retention.bytes", Value: ptr("99999999")},
		{Op: kadm.DeleteConfig, Name: "segment.bytes"},
	}, altered); err != nil {
		t.Fatal(err)
	}
	if r, err := adm.UpdatePartitions(testContext(t), 4, grown); err != nil || r[grown].Err != nil {
		t.Fatalf("grow: %v %+v", err, r)
	}
	if r, err := adm.DeleteTopics(testContext(t), deleted); err != nil || r[deleted].Err != nil {
		t.Fatalf("delete: %v %+v", err, r)
	}
	all := []string{kept, altered, grown, deleted}
	eventually(t, 5*time.Second, func() error { // Kafka applies deletions asynchronously
		if d := freshTopics(t, b.Addr(), deleted)[deleted]; d.Err == nil {
			return fmt.Errorf("%s still listed after its deletion", deleted)
		}
		return nil
	})
	before := snapshotTopics(t, adm, all...)
	if len(before) != 3 || len(before[kept].configs) != 2 || before[altered].configs["retention.bytes"] != "99999999" {
		t.Fatalf("state before the restart is not what the test set up: %+v", before)
	}
	adm.Close()

	mark := b.OutputMark()
	if err := b.Restart(); err != nil { // Stop checks SIGTERM → exit 0
		t.Fatalf("clean restart: %v", err)
	}
	for _, line := range regexp.MustCompile("\n").Split(b.OutputSince(mark), -1) {
		if recoveryLine.MatchString(line) {
			t.Errorf("after a clean shutdown the broker logged recovery work: %s", line)
		}
	}
	checkSameTopics(t, b, before, all)

	// A SIGKILL loses no acknowledged metadata either, and the start after
	// it does recover the logs (which also shows recoveryLine can match).
	b.Kill()
	mark = b.OutputMark()
	if err := b.Start(); err != nil {
		t.Fatalf("start after SIGKILL: %v", err)
	}
	if !recoveryLine.MatchString(b.OutputSince(mark)) {
		t.Errorf("the start after SIGKILL logged no recovery:\n%s", b.OutputSince(mark))
	}
	checkSameTopics(t, b, before, all)
}

func checkSameTopics(t *testing.T, b *testkit.BrokerProcess, before map[string]topicState, all []string) {
	t.Helper()
	adm := newAdmin(t, b.Addr())
	after := snapshotTopics(t, adm, all...)
	for topic, want := range before {
		got, ok := after[topic]
		if !ok {
			t.Errorf("%s is gone after the restart", topic)
			continue
		}
		if got.id != want.id {
			t.Errorf("%s: topic id changed across the restart: %v, then %v", topic, want.id, got.id)
		}
		if got.partitions != want.partitions {
			t.Errorf("%s: %d partitions before, %d after", topic, want.partitions, got.partitions)
		}
		if len(got.configs) != len(want.configs) {
			t.Errorf("%s: configs %v before, %v after", topic, want.configs, got.configs)
		}
		for k, v := range want.configs {
			if got.configs[k] != v {
				t.Errorf("%s: %s = %q before, %q after", topic, k, v, got.configs[k])
			}
		}
	}
	for _, topic := range all {
		if _, was := before[topic]; !was {
			if _, is := after[topic]; is {
				t.Errorf("deleted topic %s is back after the restart", topic)
			}
			details := freshTopics(t, b.Addr(), topic)
			wantKafkaError(t, "metadata of the deleted topic", details[topic].Err, "", kerr.UnknownTopicOrPartition, false)
		}
	}
	adm.Close()
}
