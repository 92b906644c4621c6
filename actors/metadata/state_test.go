package metadata

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/wire/kerr"
)

var now = time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)

// memStore keeps the last saved snapshot and can be told to fail.
type memStore struct {
	last  *Snapshot
	saves int
	err   error
}

func (m *memStore) Save(s *Snapshot) error {
	if m.err != nil {
		return m.err
	}
	m.saves++
	m.last = s.clone()
	return nil
}

// seededRand is a deterministic id source.
type seededRand struct{ r *rand.ChaCha8 }

func (s seededRand) Read(p []byte) (int, error) { return s.r.Read(p) }

func newRand() seededRand { return seededRand{rand.NewChaCha8([32]byte{1})} }

func broker(t *testing.T, kv ...string) *config.Broker {
	t.Helper()
	vals := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		vals[kv[i]] = kv[i+1]
	}
	b, err := config.Load(config.Input{Origin: "test", Values: vals})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newState(t *testing.T, kv ...string) (*State, *memStore) {
	t.Helper()
	st := &memStore{}
	s, err := New(broker(t, kv...), nil, st, newRand())
	if err != nil {
		t.Fatal(err)
	}
	return s, st
}

func createReq(topics ...kmsg.CreateTopicsRequestTopic) *kmsg.CreateTopicsRequest {
	r := kmsg.NewPtrCreateTopicsRequest()
	r.SetVersion(7)
	r.Topics = topics
	return r
}

func topicReq(name string, partitions int32, rf int16, cfg ...string) kmsg.CreateTopicsRequestTopic {
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, rf
	for i := 0; i+1 < len(cfg); i += 2 {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = cfg[i], str(cfg[i+1])
		t.Configs = append(t.Configs, c)
	}
	return t
}

func code(c int16) kerr.Code { return kerr.Code(c) }

func TestFreshStateHasClusterIdentity(t *testing.T) {
	s, st := newState(t, "broker.id", "3")
	if len(s.ClusterID()) != 22 || s.BrokerID() != 3 || st.saves != 1 {
		t.Fatalf("cluster id %q broker %d saves %d", s.ClusterID(), s.BrokerID(), st.saves)
	}
	if _, err := New(broker(t, "broker.id", "4"), st.last, st, newRand()); !errors.Is(err, ErrBrokerIDMismatch) {
		t.Fatalf("mismatched broker id: %v", err)
	}
}

func TestCreateTopics(t *testing.T) {
	s, st := newState(t, "num.partitions", "3")
	resp, eff := s.CreateTopics(createReq(
		topicReq("orders", 2, 1, "retention.ms", "1000"),
		topicReq("defaults", -1, -1),
		topicReq("bad/name", 1, 1),
		topicReq("rf", 1, 3),
		topicReq("zero", 0, 1),
		topicReq("cfg", 1, 1, "retention.mss", "1"),
		topicReq("cfgval", 1, 1, "cleanup.policy", "sideways"),
	), now)
	want := []kerr.Code{kerr.None, kerr.None, kerr.InvalidTopicException, kerr.InvalidReplicationFactor, kerr.InvalidPartitions, kerr.InvalidConfig, kerr.InvalidConfig}
	for i, w := range want {
		if got := code(resp.Topics[i].ErrorCode); got != w {
			t.Errorf("%s: %v, want %v (%v)", resp.Topics[i].Topic, got, w, deref(resp.Topics[i].ErrorMessage))
		}
	}
	if m := deref(resp.Topics[3].ErrorMessage); !strings.Contains(m, "larger than available brokers: 1") {
		t.Errorf("replication factor message %q", m)
	}
	if m := deref(resp.Topics[5].ErrorMessage); !strings.Contains(m, "retention.mss") {
		t.Errorf("unknown config message %q", m)
	}
	if resp.Topics[1].NumPartitions != 3 || resp.Topics[1].ReplicationFactor != 1 {
		t.Errorf("defaults: %d partitions rf %d", resp.Topics[1].NumPartitions, resp.Topics[1].ReplicationFactor)
	}
	if len(eff.Start) != 5 {
		t.Fatalf("start %d partitions, want 5", len(eff.Start))
	}
	if eff.Start[0].Config.Retention != time.Second {
		t.Errorf("retention passed to partition: %v", eff.Start[0].Config.Retention)
	}
	if len(st.last.Topics) != 2 || st.last.Topics[0].Configs["retention.ms"] != "1000" {
		t.Fatalf("persisted %+v", st.last.Topics)
	}
	if resp.Topics[0].TopicID == [16]byte{} || resp.Topics[0].TopicID == resp.Topics[1].TopicID {
		t.Fatal("topic ids not set or not unique")
	}
	// Again: exists.
	resp, eff = s.CreateTopics(createReq(topicReq("orders", 1, 1)), now)
	if code(resp.Topics[0].ErrorCode) != kerr.TopicAlreadyExists || !eff.Empty() {
		t.Fatalf("duplicate create: %v", code(resp.Topics[0].ErrorCode))
	}
}

func TestCreateTopicsValidateOnlyAndDuplicates(t *testing.T) {
	s, st := newState(t)
	req := createReq(topicReq("a", 1, 1))
	req.ValidateOnly = true
	resp, eff := s.CreateTopics(req, now)
	if resp.Topics[0].ErrorCode != 0 || !eff.Empty() || len(s.Topics()) != 0 || st.saves != 1 {
		t.Fatalf("validate only changed state: %v %d topics %d saves", code(resp.Topics[0].ErrorCode), len(s.Topics()), st.saves)
	}
	resp, _ = s.CreateTopics(createReq(topicReq("a", 1, 1), topicReq("a", 1, 1)), now)
	for _, rt := range resp.Topics {
		if code(rt.ErrorCode) != kerr.InvalidRequest {
			t.Fatalf("duplicate in request: %v", code(rt.ErrorCode))
		}
	}
}

func TestTopicNameRulesAndCollisions(t *testing.T) {
	long := strings.Repeat("x", 249)
	for name, ok := range map[string]bool{"a": true, long: true, long + "x": false, ".": false, "..": false, "...": true, "a b": false, "é": false, "": false, "A-Z_0.9": true} {
		if err := ValidateTopicName(name); (err == nil) != ok {
			t.Errorf("%q: %v", name, err)
		}
	}
	s, _ := newState(t)
	resp, _ := s.CreateTopics(createReq(topicReq("my.topic", 1, 1)), now)
	if resp.Topics[0].ErrorCode != 0 {
		t.Fatal(code(resp.Topics[0].ErrorCode))
	}
	resp, _ = s.CreateTopics(createReq(topicReq("my_topic", 1, 1)), now)
	if code(resp.Topics[0].ErrorCode) != kerr.InvalidTopicException || !strings.Contains(deref(resp.Topics[0].ErrorMessage), "my.topic") {
		t.Fatalf("collision: %v %q", code(resp.Topics[0].ErrorCode), deref(resp.Topics[0].ErrorMessage))
	}
	resp, _ = s.CreateTopics(createReq(topicReq("x.y", 1, 1), topicReq("x_y", 1, 1)), now)
	if resp.Topics[0].ErrorCode != 0 || code(resp.Topics[1].ErrorCode) != kerr.InvalidTopicException {
		t.Fatalf("collision in one request: %v %v", code(resp.Topics[0].ErrorCode), code(resp.Topics[1].ErrorCode))
	}
}

func TestPersistFailureLeavesStateUnchanged(t *testing.T) {
	s, st := newState(t)
	st.err = errors.New("disk full")
	resp, eff := s.CreateTopics(createReq(topicReq("a", 1, 1)), now)
	if code(resp.Topics[0].ErrorCode) != kerr.KafkaStorageError || !eff.Empty() || len(s.Topics()) != 0 {
		t.Fatalf("got %v, %d topics", code(resp.Topics[0].ErrorCode), len(s.Topics()))
	}
}

func metadataReq(version int16, allow bool, names ...string) *kmsg.MetadataRequest {
	r := kmsg.NewPtrMetadataRequest()
	r.SetVersion(version)
	r.AllowAutoTopicCreation = allow
	for _, n := range names {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = str(n)
		r.Topics = append(r.Topics, mt)
	}
	return r
}

func TestMetadataAutoCreate(t *testing.T) {
	s, _ := newState(t, "num.partitions", "2")
	s.SetEndpoint(Endpoint{Host: "127.0.0.1", Port: 4242})
	resp, eff := s.Metadata(metadataReq(12, false, "nope"), now)
	if code(resp.Topics[0].ErrorCode) != kerr.UnknownTopicOrPartition || !eff.Empty() {
		t.Fatalf("no auto-create when disallowed: %v", code(resp.Topics[0].ErrorCode))
	}
	resp, eff = s.Metadata(metadataReq(12, true, "auto"), now)
	if resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) != 2 || len(eff.Start) != 2 {
		t.Fatalf("auto-create: %v %d partitions", code(resp.Topics[0].ErrorCode), len(resp.Topics[0].Partitions))
	}
	if resp.Brokers[0].Port != 4242 || resp.ControllerID != 0 || deref(resp.ClusterID) != s.ClusterID() {
		t.Fatalf("brokers %+v controller %d", resp.Brokers, resp.ControllerID)
	}
	// Before v4 the request cannot say no.
	resp, _ = s.Metadata(metadataReq(3, false, "old"), now)
	if resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("v3 auto-create: %v", code(resp.Topics[0].ErrorCode))
	}
	// The broker can.
	s2, _ := newState(t, "auto.create.topics.enable", "false")
	resp, _ = s2.Metadata(metadataReq(3, true, "x"), now)
	if code(resp.Topics[0].ErrorCode) != kerr.UnknownTopicOrPartition {
		t.Fatalf("broker disabled auto-create: %v", code(resp.Topics[0].ErrorCode))
	}
	// All topics: nil list (v1+), empty list at v0.
	all := metadataReq(12, false)
	all.Topics = nil
	resp, _ = s.Metadata(all, now)
	if len(resp.Topics) != 2 {
		t.Fatalf("all topics: %d", len(resp.Topics))
	}
	resp, _ = s.Metadata(metadataReq(0, false), now)
	if len(resp.Topics) != 2 {
		t.Fatalf("v0 all topics: %d", len(resp.Topics))
	}
	// By id.
	byID := metadataReq(12, false)
	mt := kmsg.NewMetadataRequestTopic()
	mt.TopicID = s.byName["auto"].ID
	byID.Topics = append(byID.Topics, mt, kmsg.MetadataRequestTopic{TopicID: [16]byte{9}})
	resp, _ = s.Metadata(byID, now)
	if deref(resp.Topics[0].Topic) != "auto" || code(resp.Topics[1].ErrorCode) != kerr.UnknownTopicID {
		t.Fatalf("by id: %+v", resp.Topics)
	}
	// By id with an empty name, as Java's consumer asks for the topics
	// of a broker-side regex subscription.
	mt.Topic = str("")
	byID.Topics = []kmsg.MetadataRequestTopic{mt}
	resp, _ = s.Metadata(byID, now)
	if len(resp.Topics) != 1 || deref(resp.Topics[0].Topic) != "auto" || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("by id, empty name: %+v", resp.Topics)
	}
	resp, _ = s.Metadata(metadataReq(12, true, "bad name"), now)
	if code(resp.Topics[0].ErrorCode) != kerr.InvalidTopicException {
		t.Fatalf("invalid name: %v", code(resp.Topics[0].ErrorCode))
	}
}

func TestDeleteTopics(t *testing.T) {
	s, st := newState(t)
	resp, _ := s.CreateTopics(createReq(topicReq("a", 2, 1), topicReq("b", 1, 1)), now)
	idB := resp.Topics[1].TopicID
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.SetVersion(6)
	del.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: str("a")}, {TopicID: idB}, {Topic: str("zz")}, {TopicID: [16]byte{7}}}
	dresp, eff := s.DeleteTopics(del)
	want := []kerr.Code{kerr.None, kerr.None, kerr.UnknownTopicOrPartition, kerr.UnknownTopicID}
	for i, w := range want {
		if code(dresp.Topics[i].ErrorCode) != w {
			t.Errorf("delete %d: %v want %v", i, code(dresp.Topics[i].ErrorCode), w)
		}
	}
	if deref(dresp.Topics[1].Topic) != "b" || len(eff.Delete) != 3 || len(st.last.Topics) != 0 {
		t.Fatalf("delete by id name %q, %d deletions, %d left", deref(dresp.Topics[1].Topic), len(eff.Delete), len(st.last.Topics))
	}
	// Until the files are gone the name is reserved.
	cresp, _ := s.CreateTopics(createReq(topicReq("a", 1, 1)), now)
	if code(cresp.Topics[0].ErrorCode) != kerr.TopicAlreadyExists {
		t.Fatalf("recreate while deleting: %v", code(cresp.Topics[0].ErrorCode))
	}
	// A restart before the files are gone resumes their removal.
	restarted, err := New(broker(t), st.last, st, newRand())
	if err != nil {
		t.Fatal(err)
	}
	if again := restarted.StartAll(); len(again.Delete) != 3 || len(again.Start) != 0 || !restarted.Deleting("a") {
		t.Fatalf("restart during deletion: %+v", again)
	}
	if err := s.FinishDeletion("a", eff.Delete[0].ID); err != nil {
		t.Fatal(err)
	}
	if len(st.last.Deleting) != 1 || st.last.Deleting[0].Name != "b" {
		t.Fatalf("persisted deletions %+v", st.last.Deleting)
	}
	cresp, _ = s.CreateTopics(createReq(topicReq("a", 1, 1)), now)
	if cresp.Topics[0].ErrorCode != 0 {
		t.Fatalf("recreate after deletion: %v", code(cresp.Topics[0].ErrorCode))
	}
	// Old versions delete by name; deletion can be disabled.
	s2, _ := newState(t, "delete.topic.enable", "false")
	s2.CreateTopics(createReq(topicReq("k", 1, 1)), now)
	old := kmsg.NewPtrDeleteTopicsRequest()
	old.SetVersion(1)
	old.TopicNames = []string{"k"}
	dresp, eff = s2.DeleteTopics(old)
	if code(dresp.Topics[0].ErrorCode) != kerr.TopicDeletionDisabled || !eff.Empty() {
		t.Fatalf("disabled deletion: %v", code(dresp.Topics[0].ErrorCode))
	}
}

func TestCreatePartitions(t *testing.T) {
	s, st := newState(t, "log.dirs", "/d1,/d2")
	s.CreateTopics(createReq(topicReq("t", 2, 1)), now)
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "t", Count: 5}, {Topic: "none", Count: 2}}
	resp, eff := s.CreatePartitions(req)
	if resp.Topics[0].ErrorCode != 0 || code(resp.Topics[1].ErrorCode) != kerr.UnknownTopicOrPartition {
		t.Fatalf("%v %v", code(resp.Topics[0].ErrorCode), code(resp.Topics[1].ErrorCode))
	}
	if len(eff.Start) != 3 || eff.Start[0].Partition != 2 || len(st.last.Topics[0].Partitions) != 5 {
		t.Fatalf("start %+v", eff.Start)
	}
	dirs := map[string]int{}
	for _, p := range st.last.Topics[0].Partitions {
		dirs[p.Dir]++
	}
	if dirs["/d1"] < 2 || dirs["/d2"] < 2 {
		t.Fatalf("partitions not spread over log dirs: %v", dirs)
	}
	req.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "t", Count: 4}}
	resp, _ = s.CreatePartitions(req)
	if code(resp.Topics[0].ErrorCode) != kerr.InvalidPartitions || !strings.Contains(deref(resp.Topics[0].ErrorMessage), "only be added") {
		t.Fatalf("shrink: %v %q", code(resp.Topics[0].ErrorCode), deref(resp.Topics[0].ErrorMessage))
	}
}

func describe(s *State, typ kmsg.ConfigResourceType, name string, keys ...string) kmsg.DescribeConfigsResponseResource {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.SetVersion(4)
	req.IncludeSynonyms, req.IncludeDocumentation = true, true
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.ConfigNames = typ, name, keys
	req.Resources = append(req.Resources, r)
	return s.DescribeConfigs(req).Resources[0]
}

func TestDescribeConfigs(t *testing.T) {
	s, _ := newState(t, "log.retention.hours", "2")
	s.CreateTopics(createReq(topicReq("t", 1, 1, "segment.bytes", "1048576")), now)
	res := describe(s, kmsg.ConfigResourceTypeTopic, "t")
	if res.ErrorCode != 0 || len(res.Configs) != len(config.TopicDefs()) {
		t.Fatalf("%v: %d configs", code(res.ErrorCode), len(res.Configs))
	}
	got := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, c := range res.Configs {
		got[c.Name] = c
	}
	if c := got["segment.bytes"]; deref(c.Value) != "1048576" || c.Source != config.SourceTopic || c.ReadOnly {
		t.Errorf("segment.bytes %+v", c)
	}
	if c := got["retention.ms"]; deref(c.Value) != "7200000" || c.Source != config.SourceStatic || c.ConfigSynonyms[0].Name != "log.retention.hours" {
		t.Errorf("retention.ms %+v", c)
	}
	if c := got["cleanup.policy"]; deref(c.Value) != "delete" || c.Source != config.SourceDefault || c.ConfigType != config.List || c.Documentation == nil {
		t.Errorf("cleanup.policy %+v", c)
	}
	res = describe(s, kmsg.ConfigResourceTypeBroker, "0", "broker.id", "log.retention.hours")
	if len(res.Configs) != 2 || !res.Configs[0].ReadOnly || deref(res.Configs[1].Value) != "2" || res.Configs[1].Source != config.SourceStatic {
		t.Fatalf("broker configs %+v", res.Configs)
	}
	if res = describe(s, kmsg.ConfigResourceTypeBroker, "9"); code(res.ErrorCode) != kerr.InvalidRequest {
		t.Fatalf("other broker: %v", code(res.ErrorCode))
	}
	if res = describe(s, kmsg.ConfigResourceTypeTopic, "nope"); code(res.ErrorCode) != kerr.UnknownTopicOrPartition {
		t.Fatalf("unknown topic: %v", code(res.ErrorCode))
	}
}

func incremental(typ kmsg.ConfigResourceType, name string, ops ...any) *kmsg.IncrementalAlterConfigsRequest {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = typ, name
	for i := 0; i+2 < len(ops)+1; i += 3 {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op = ops[i].(string), ops[i+1].(kmsg.IncrementalAlterConfigOp)
		if v, ok := ops[i+2].(string); ok {
			c.Value = str(v)
		}
		r.Configs = append(r.Configs, c)
	}
	req.Resources = append(req.Resources, r)
	return req
}

func TestIncrementalAlterConfigs(t *testing.T) {
	s, st := newState(t)
	s.CreateTopics(createReq(topicReq("t", 2, 1, "retention.ms", "5000")), now)
	set, del, app := kmsg.IncrementalAlterConfigOpSet, kmsg.IncrementalAlterConfigOpDelete, kmsg.IncrementalAlterConfigOpAppend
	resp, eff := s.IncrementalAlterConfigs(incremental(kmsg.ConfigResourceTypeTopic, "t",
		"segment.ms", set, "60000", "retention.ms", del, nil, "cleanup.policy", app, "compact"))
	if resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("%v %q", code(resp.Resources[0].ErrorCode), deref(resp.Resources[0].ErrorMessage))
	}
	cfg := st.last.Topics[0].Configs
	if cfg["segment.ms"] != "60000" || cfg["cleanup.policy"] != "delete,compact" || cfg["retention.ms"] != "" {
		t.Fatalf("persisted %v", cfg)
	}
	if len(eff.Reconfigure) != 1 || eff.Reconfigure[0].Config.SegmentAge != time.Minute || !eff.Reconfigure[0].Config.Compact {
		t.Fatalf("reconfigure %+v", eff.Reconfigure)
	}
	for _, bad := range []*kmsg.IncrementalAlterConfigsRequest{
		incremental(kmsg.ConfigResourceTypeTopic, "t", "retention.mss", set, "1"),
		incremental(kmsg.ConfigResourceTypeTopic, "t", "retention.ms", set, "x"),
		incremental(kmsg.ConfigResourceTypeTopic, "t", "retention.ms", app, "1"),
	} {
		resp, eff = s.IncrementalAlterConfigs(bad)
		if code(resp.Resources[0].ErrorCode) != kerr.InvalidConfig || !eff.Empty() {
			t.Errorf("bad alter accepted: %v", code(resp.Resources[0].ErrorCode))
		}
	}
	// Broker-wide dynamic default reaches every topic; read-only keys are refused.
	resp, eff = s.IncrementalAlterConfigs(incremental(kmsg.ConfigResourceTypeBroker, "", "log.retention.ms", set, "1234"))
	if resp.Resources[0].ErrorCode != 0 || len(eff.Reconfigure) != 1 || eff.Reconfigure[0].Config.Retention != 1234*time.Millisecond {
		t.Fatalf("broker default: %v %+v", code(resp.Resources[0].ErrorCode), eff.Reconfigure)
	}
	res := describe(s, kmsg.ConfigResourceTypeTopic, "t", "retention.ms")
	if res.Configs[0].Source != config.SourceDynamicDefault {
		t.Fatalf("source %v", res.Configs[0].Source)
	}
	resp, _ = s.IncrementalAlterConfigs(incremental(kmsg.ConfigResourceTypeBroker, "0", "broker.id", set, "5"))
	if code(resp.Resources[0].ErrorCode) != kerr.InvalidRequest {
		t.Fatalf("read-only broker config: %v", code(resp.Resources[0].ErrorCode))
	}
}

func TestLegacyAlterConfigsReplaces(t *testing.T) {
	s, st := newState(t)
	s.CreateTopics(createReq(topicReq("t", 1, 1, "retention.ms", "5000")), now)
	req := kmsg.NewPtrAlterConfigsRequest()
	r := kmsg.NewAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
	r.Configs = []kmsg.AlterConfigsRequestResourceConfig{{Name: "segment.bytes", Value: str("2000000")}}
	req.Resources = append(req.Resources, r)
	resp, eff := s.AlterConfigs(req)
	if resp.Resources[0].ErrorCode != 0 || len(eff.Reconfigure) != 1 {
		t.Fatal(code(resp.Resources[0].ErrorCode))
	}
	if cfg := st.last.Topics[0].Configs; len(cfg) != 1 || cfg["segment.bytes"] != "2000000" {
		t.Fatalf("legacy alter must replace the set: %v", cfg)
	}
	req.ValidateOnly = true
	req.Resources[0].Configs[0].Value = str("3000000")
	s.AlterConfigs(req)
	if st.last.Topics[0].Configs["segment.bytes"] != "2000000" {
		t.Fatal("validate_only changed the config")
	}
}

func TestDescribeClusterAndLogDirs(t *testing.T) {
	s, _ := newState(t, "broker.id", "2", "log.dirs", "/a,/b", "advertised.listeners", "PLAINTEXT://example:9999")
	req := kmsg.NewPtrDescribeClusterRequest()
	req.SetVersion(1)
	req.EndpointType = 1
	resp := s.DescribeCluster(req)
	if resp.ControllerID != 2 || len(resp.Brokers) != 1 || resp.Brokers[0].Host != "example" || resp.Brokers[0].Port != 9999 {
		t.Fatalf("%+v", resp)
	}
	s.CreateTopics(createReq(topicReq("t", 3, 1)), now)
	ld := kmsg.NewPtrDescribeLogDirsRequest()
	ld.SetVersion(4)
	ld.Topics = nil
	parts := s.LogDirPartitions(ld)
	if len(parts) != 3 {
		t.Fatalf("%d partitions", len(parts))
	}
	out := BuildDescribeLogDirs(ld, s.LogDirs(), parts, []int64{10, 20, 30}, map[string]DirUsage{"/a": {TotalBytes: 100, UsableBytes: 50}})
	var total int64
	for _, d := range out.Dirs {
		for _, tp := range d.Topics {
			for _, p := range tp.Partitions {
				total += p.Size
			}
		}
	}
	if len(out.Dirs) != 2 || total != 60 || out.Dirs[0].TotalBytes != 100 {
		t.Fatalf("%+v", out.Dirs)
	}
}

func TestFileStoreRoundTrip(t *testing.T) {
	dirs := []string{filepath.Join(t.TempDir(), "d1"), filepath.Join(t.TempDir(), "d2")}
	b := broker(t, "log.dirs", strings.Join(dirs, ","))
	store, snap, err := Open(dirs)
	if err != nil || snap != nil {
		t.Fatalf("fresh open: %v %v", snap, err)
	}
	s, err := New(b, nil, store, newRand())
	if err != nil {
		t.Fatal(err)
	}
	s.CreateTopics(createReq(topicReq("t", 3, 1, "retention.ms", "77")), now)
	s.IncrementalAlterConfigs(incremental(kmsg.ConfigResourceTypeBroker, "", "log.segment.bytes", kmsg.IncrementalAlterConfigOpSet, "2000000"))

	store2, snap2, err := Open(dirs)
	if err != nil || snap2 == nil {
		t.Fatalf("reopen: %v", err)
	}
	s2, err := New(b, snap2, store2, newRand())
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.Topic("t")
	c, ok := s2.Topic("t")
	if !ok || c.ID != a.ID || len(c.Partitions) != 3 || c.Configs["retention.ms"] != "77" || !c.Created.Equal(now) {
		t.Fatalf("restored %+v", c)
	}
	if s2.ClusterID() != s.ClusterID() || s2.TopicConfig(c).SegmentBytes != 2000000 {
		t.Fatal("cluster id or dynamic broker config not restored")
	}
	if eff := s2.StartAll(); len(eff.Start) != 3 || eff.Start[0].Config.Retention != 77*time.Millisecond {
		t.Fatalf("StartAll: %+v", eff.Start)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestOfflinePartitionHasNoLeader(t *testing.T) {
	s, _ := newState(t)
	resp, _ := s.CreateTopics(createReq(topicReq("t", 2, 1)), now)
	id := resp.Topics[0].TopicID
	s.SetOffline(id, 1, true)
	m, _ := s.Metadata(metadataReq(12, false, "t"), now)
	p0, p1 := m.Topics[0].Partitions[0], m.Topics[0].Partitions[1]
	if p0.ErrorCode != 0 || p0.Leader != 0 {
		t.Fatalf("healthy partition %+v", p0)
	}
	if code(p1.ErrorCode) != kerr.LeaderNotAvailable || p1.Leader != -1 || len(p1.OfflineReplicas) != 1 {
		t.Fatalf("offline partition %+v", p1)
	}
	s.SetOffline(id, 1, false)
	m, _ = s.Metadata(metadataReq(12, false, "t"), now)
	if p := m.Topics[0].Partitions[1]; p.ErrorCode != 0 || p.Leader != 0 {
		t.Fatalf("back online %+v", p)
	}
}
