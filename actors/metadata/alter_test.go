package metadata

import (
	"maps"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/wire/kerr"
)

func set(name, value string) Alteration {
	return Alteration{Name: name, Op: kmsg.IncrementalAlterConfigOpSet, Value: &value}
}

// AlterConfig, the validation both the single-node state and the
// cluster-mode path (ZooKeeper) use, leaves its input alone and refuses
// what Kafka refuses.
func TestAlterConfigIsPure(t *testing.T) {
	l := config.Layers{Static: map[string]string{}}
	current := map[string]string{"retention.ms": "1000", "cleanup.policy": "delete"}
	before := maps.Clone(current)
	next, code, msg := AlterConfig(TopicConfigs, current, []Alteration{
		set("segment.bytes", "2048"),
		{Name: "retention.ms", Op: kmsg.IncrementalAlterConfigOpDelete},
		{Name: "cleanup.policy", Op: kmsg.IncrementalAlterConfigOpAppend, Value: kmsg.StringPtr("compact")},
	}, false, l)
	if code != kerr.None || !maps.Equal(next, map[string]string{"segment.bytes": "2048", "cleanup.policy": "delete,compact"}) {
		t.Fatalf("incremental: %v %q %v", code, msg, next)
	}
	if !maps.Equal(current, before) {
		t.Fatalf("current changed: %v", current)
	}
	// The legacy API replaces the set.
	if next, code, _ = AlterConfig(TopicConfigs, current, []Alteration{set("segment.bytes", "2048")}, true, l); code != kerr.None || !maps.Equal(next, map[string]string{"segment.bytes": "2048"}) {
		t.Fatalf("replace: %v %v", code, next)
	}
	// Nothing left is nil.
	if next, code, _ = AlterConfig(TopicConfigs, current, nil, true, l); code != kerr.None || next != nil {
		t.Fatalf("empty: %v %v", code, next)
	}
	for _, c := range []struct {
		kind    ConfigKind
		changes []Alteration
		want    kerr.Code
	}{
		{TopicConfigs, []Alteration{set("segment.bytes", "1")}, kerr.InvalidConfig},
		{TopicConfigs, []Alteration{set("no.such.config", "1")}, kerr.InvalidConfig},
		{TopicConfigs, []Alteration{set("segment.bytes", "2048"), set("segment.bytes", "4096")}, kerr.InvalidRequest},
		{TopicConfigs, []Alteration{{Name: "segment.bytes", Op: kmsg.IncrementalAlterConfigOpSet}}, kerr.InvalidConfig},
		{BrokerConfigs, []Alteration{set("log.dirs", "/x")}, kerr.InvalidRequest},
		{ClusterDefaultConfigs, []Alteration{set("log.segment.bytes", "2048")}, kerr.None},
		{BrokerConfigs, []Alteration{set("log.cleaner.threads", "2")}, kerr.None},
		{BrokerConfigs, []Alteration{set("no.such.config", "2")}, kerr.InvalidConfig},
	} {
		if _, code, msg := AlterConfig(c.kind, nil, c.changes, false, l); code != c.want {
			t.Errorf("%v %+v: %v %q, want %v", c.kind, c.changes, code, msg, c.want)
		}
	}
}

// Broker layers set from ZooKeeper are persisted, reconfigure every held
// topic (their inherited values move) and are described with their
// sources.
func TestSetBrokerConfigsFromZooKeeper(t *testing.T) {
	s, st := newState(t, "broker.id", "1")
	if _, err := s.Host([]Replica{{Topic: "a", ID: TopicID{1}, Partition: 0}}, map[string]map[string]string{"a": {"retention.ms": "5000"}}, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	eff, err := s.SetBrokerConfigs(true, map[string]string{"log.segment.bytes": "2048", "num.network.threads": "6"})
	if err != nil || len(eff.Reconfigure) != 1 || eff.Reconfigure[0].Config.SegmentBytes != 2048 {
		t.Fatalf("cluster default: %v %+v", err, eff)
	}
	if len(eff.Unapplied) != 1 || eff.Unapplied[0].Key != "num.network.threads" {
		t.Fatalf("unapplied: %+v", eff.Unapplied)
	}
	if st.last.DynamicDefault["log.segment.bytes"] != "2048" {
		t.Fatalf("persisted %v", st.last.DynamicDefault)
	}
	if eff, _ = s.SetBrokerConfigs(true, map[string]string{"log.segment.bytes": "2048", "num.network.threads": "6"}); !eff.Empty() {
		t.Fatalf("the same configs again: %+v", eff)
	}
	if _, err := s.SetBrokerConfigs(false, map[string]string{"log.cleaner.threads": "2"}); err != nil {
		t.Fatal(err)
	}
	res := describe(s, kmsg.ConfigResourceTypeBroker, "1", "log.segment.bytes", "log.cleaner.threads")
	if e, _ := findEntry(res, "log.segment.bytes"); e.Source != config.SourceDynamicDefault || deref(e.Value) != "2048" {
		t.Fatalf("log.segment.bytes: %+v", e)
	}
	if e, _ := findEntry(res, "log.cleaner.threads"); e.Source != config.SourceDynamicBroker || deref(e.Value) != "2" {
		t.Fatalf("log.cleaner.threads: %+v", e)
	}
	// The topic inherits the default; its own retention.ms stays.
	res = DescribeTopicConfigs(kmsg.NewPtrDescribeConfigsRequest(), kmsg.DescribeConfigsRequestResource{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "a",
		ConfigNames: []string{"segment.bytes", "retention.ms"}}, map[string]string{"retention.ms": "5000"}, s.Layers())
	if e, _ := findEntry(res, "segment.bytes"); e.Source != config.SourceDynamicDefault || deref(e.Value) != "2048" {
		t.Fatalf("segment.bytes: %+v", e)
	}
	if e, _ := findEntry(res, "retention.ms"); e.Source != config.SourceTopic || deref(e.Value) != "5000" {
		t.Fatalf("retention.ms: %+v", e)
	}
	// An empty znode clears the layer.
	if eff, err = s.SetBrokerConfigs(true, map[string]string{}); err != nil || st.last.DynamicDefault != nil || eff.Reconfigure[0].Config.SegmentBytes == 2048 {
		t.Fatalf("cleared: %v %v %+v", err, st.last.DynamicDefault, eff)
	}
}
