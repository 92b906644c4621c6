package metadata

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/wire/kerr"
)

const groupRes = kmsg.ConfigResourceTypeGroupConfig

// Kafka 4's group configs: described with defaults from the broker's
// group.* configs, altered (validated against the broker's bounds) and
// persisted for any group id, existing or not.
func TestGroupConfigs(t *testing.T) {
	s, st := newState(t, "group.consumer.session.timeout.ms", "50000")
	res := describe(s, groupRes, "orders")
	if res.ErrorCode != 0 || len(res.Configs) != len(config.GroupDefs()) {
		t.Fatalf("describe: %v %q, %d configs", code(res.ErrorCode), deref(res.ErrorMessage), len(res.Configs))
	}
	for name, want := range map[string]string{
		"consumer.session.timeout.ms": "50000", "consumer.heartbeat.interval.ms": "5000",
		"share.session.timeout.ms": "45000", "share.heartbeat.interval.ms": "5000", "share.record.lock.duration.ms": "30000", "share.delivery.count.limit": "5",
		"share.auto.offset.reset": "latest", "share.isolation.level": "read_uncommitted",
		"streams.session.timeout.ms": "45000", "streams.heartbeat.interval.ms": "5000", "streams.num.standby.replicas": "0",
	} {
		e, ok := findEntry(res, name)
		if !ok || deref(e.Value) != want || e.Source != config.SourceDefault || e.ReadOnly || strings.Contains(deref(e.Documentation), "no effect yet") == config.GroupConfigActs(name) {
			t.Errorf("%s: %+v, want %s from DEFAULT_CONFIG", name, e, want)
		}
	}

	set, del := kmsg.IncrementalAlterConfigOpSet, kmsg.IncrementalAlterConfigOpDelete
	c, msg, eff := alterResult(t, s, incremental(groupRes, "orders", "consumer.heartbeat.interval.ms", set, "6000", "share.auto.offset.reset", set, "by_duration:PT1H",
		"streams.num.standby.replicas", set, "1"))
	if c != 0 {
		t.Fatalf("alter: %v %q", c, msg)
	}
	// share.auto.offset.reset (share groups) and consumer.* (consumer
	// groups) act, so only the streams one is reported unapplied.
	if len(eff.Unapplied) != 1 || eff.Unapplied[0].Resource != "group orders" || eff.Unapplied[0].Key != "streams.num.standby.replicas" || len(eff.Reconfigure) != 0 {
		t.Fatalf("effects %+v", eff)
	}
	if got := st.last.Groups["orders"]; got["consumer.heartbeat.interval.ms"] != "6000" || got["share.auto.offset.reset"] != "by_duration:PT1H" {
		t.Fatalf("persisted %v", st.last.Groups)
	}
	e, _ := findEntry(describe(s, groupRes, "orders", "consumer.heartbeat.interval.ms"), "consumer.heartbeat.interval.ms")
	if deref(e.Value) != "6000" || e.Source != config.SourceGroup || len(e.ConfigSynonyms) != 1 || e.ConfigSynonyms[0].Source != config.SourceGroup {
		t.Fatalf("after alter %+v", e)
	}
	if e, _ = findEntry(describe(s, groupRes, "other"), "consumer.heartbeat.interval.ms"); deref(e.Value) != "5000" {
		t.Fatalf("another group sees %q", deref(e.Value))
	}

	for _, tc := range []struct {
		req  *kmsg.IncrementalAlterConfigsRequest
		want kerr.Code
		msg  string
	}{
		{incremental(groupRes, "orders", "consumer.session.timeout.ms", set, "30000"), kerr.InvalidConfig,
			"consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms"},
		{incremental(groupRes, "orders", "share.record.lock.duration.ms", set, "90000"), kerr.InvalidConfig,
			"share.record.lock.duration.ms must be less than or equal to group.share.max.record.lock.duration.ms"},
		{incremental(groupRes, "orders", "share.delivery.count.limit", set, "11"), kerr.InvalidConfig,
			"share.delivery.count.limit must be less than or equal to group.share.max.delivery.count.limit"},
		{incremental(groupRes, "orders", "share.delivery.count.limit", set, "1"), kerr.InvalidConfig, "share.delivery.count.limit"},
		{incremental(groupRes, "orders", "streams.num.standby.replicas", set, "3"), kerr.InvalidConfig,
			"streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas"},
		{incremental(groupRes, "orders", "share.isolation.level", set, "snapshot"), kerr.InvalidConfig, "share.isolation.level"},
		{incremental(groupRes, "orders", "share.auto.offset.reset", set, "by_duration:-PT1H"), kerr.InvalidConfig, "share.auto.offset.reset"},
		{incremental(groupRes, "orders", "session.timeout.ms", set, "1"), kerr.InvalidConfig, "Unknown group config name: session.timeout.ms"},
		{incremental(groupRes, "", "consumer.session.timeout.ms", set, "50000"), kerr.InvalidRequest, "Default group resources are not allowed."},
	} {
		if c, msg, _ := alterResult(t, s, tc.req); c != tc.want || !strings.Contains(msg, tc.msg) {
			t.Errorf("%v %q, want %v %q", c, msg, tc.want, tc.msg)
		}
	}
	if res = describe(s, groupRes, ""); code(res.ErrorCode) != kerr.InvalidRequest {
		t.Errorf("empty group name: %v", code(res.ErrorCode))
	}

	// The snapshot keeps them across a restart, through its JSON.
	raw, err := json.Marshal(st.last)
	if err != nil {
		t.Fatal(err)
	}
	var back Snapshot
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	s2, err := New(s.broker, &back, st, newRand())
	if err != nil {
		t.Fatal(err)
	}
	if e, _ = findEntry(describe(s2, groupRes, "orders", "share.auto.offset.reset"), "share.auto.offset.reset"); deref(e.Value) != "by_duration:PT1H" {
		t.Fatalf("after restart %+v", e)
	}
	// Deleting every config forgets the group.
	if c, msg, _ := alterResult(t, s2, incremental(groupRes, "orders", "consumer.heartbeat.interval.ms", del, nil, "share.auto.offset.reset", del, nil,
		"streams.num.standby.replicas", del, nil)); c != 0 || st.last.Groups != nil && st.last.Groups["orders"] != nil {
		t.Fatalf("delete: %v %q %v", c, msg, st.last.Groups)
	}
}

// A snapshot written before group configs loads with none.
func TestSnapshotWithoutGroupsLoads(t *testing.T) {
	var snap Snapshot
	if err := json.Unmarshal([]byte(`{"version":1,"cluster_id":"c","broker_id":0,"topics":[]}`), &snap); err != nil {
		t.Fatal(err)
	}
	s, err := New(broker(t), &snap, &memStore{}, newRand())
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := findEntry(describe(s, groupRes, "g", "consumer.session.timeout.ms"), "consumer.session.timeout.ms"); deref(e.Value) != "45000" {
		t.Fatalf("%+v", e)
	}
}
