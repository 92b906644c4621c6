package config

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"
)

func TestEveryTopicSynonymIsABrokerConfig(t *testing.T) {
	for _, d := range TopicDefs() {
		for _, s := range d.Synonyms {
			if _, ok := BrokerDef(s.Name); !ok {
				t.Errorf("topic config %s: synonym %s is not a broker config", d.Name, s.Name)
			}
		}
		if d.HasDefault() {
			if err := d.Validate(d.Default); err != nil {
				t.Errorf("topic default does not validate: %v", err)
			}
		}
	}
	for _, d := range BrokerDefs() {
		if d.HasDefault() {
			if err := d.Validate(d.Default); err != nil {
				t.Errorf("broker default does not validate: %v", err)
			}
		}
	}
}

func TestDefaults(t *testing.T) {
	b := Defaults()
	if b.BrokerID != 0 || len(b.Listeners) != 1 || b.Listeners[0].Address() != "127.0.0.1:9092" {
		t.Fatalf("default identity/listeners: id %d %v", b.BrokerID, b.Listeners)
	}
	if len(b.LogDirs) != 1 || b.LogDirs[0] != "./data" {
		t.Fatalf("default log dirs %v", b.LogDirs)
	}
	if b.NumPartitions != 1 || b.ReplicationFactor != 1 || !b.AutoCreateTopics || b.RequestMaxBytes != 104857600 {
		t.Fatalf("defaults %+v", b)
	}
	if b.ShutdownTimeout != 30*time.Second || b.ConnectionsMaxIdle != 10*time.Minute {
		t.Fatalf("durations %v %v", b.ShutdownTimeout, b.ConnectionsMaxIdle)
	}
}

func TestPrecedenceLaterInputWins(t *testing.T) {
	b, err := Load(
		Input{"server.properties", map[string]string{"num.partitions": "3", "log.dirs": "/a,/b", "broker.id": "7"}},
		Input{"environment", map[string]string{"num.partitions": "5"}},
		Input{"flags", map[string]string{"num.partitions": "9"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	if b.NumPartitions != 9 || b.BrokerID != 7 || strings.Join(b.LogDirs, ",") != "/a,/b" {
		t.Fatalf("got partitions %d id %d dirs %v", b.NumPartitions, b.BrokerID, b.LogDirs)
	}
}

func TestInvalidValueNamesKeyAndOrigin(t *testing.T) {
	_, err := Load(Input{"server.properties", map[string]string{"num.partitions": "zero"}})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "num.partitions") || !strings.Contains(err.Error(), "server.properties") {
		t.Fatalf("err = %v", err)
	}
	_, err = Load(Input{"flags", map[string]string{"num.partitions": "0"}})
	if err == nil || !strings.Contains(err.Error(), "at least 1") {
		t.Fatalf("err = %v", err)
	}
	// SASL_SSL is served since SASL; a name without a protocol is not.
	_, err = Load(Input{"flags", map[string]string{"listeners": "CLIENTS://127.0.0.1:9093"}})
	if err == nil || !strings.Contains(err.Error(), "listeners") || !strings.Contains(err.Error(), "CLIENTS") {
		t.Fatalf("err = %v", err)
	}
	_, err = Load(Input{"flags", map[string]string{"listeners": "PLAINTEXT://127.0.0.1:9092", "advertised.listeners": "PLAINTEXT://0.0.0.0:9092"}})
	if err == nil || !strings.Contains(err.Error(), "advertised.listeners") {
		t.Fatalf("err = %v", err)
	}
}

func TestZooKeeperConnectMakesACluster(t *testing.T) {
	file := Input{"server.properties", map[string]string{"zookeeper.connect": "localhost:2181,zk2:2181/kafka", "broker.id": "3", "zookeeper.session.timeout.ms": "6000"}}
	b, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	c := b.Cluster
	if c == nil || c.ZooKeeperConnect != "localhost:2181,zk2:2181/kafka" || c.SessionTimeout != 6*time.Second || c.ConnectionTimeout != 6*time.Second ||
		c.GenerateBrokerID || b.BrokerID != 3 || c.InterBrokerListener != "PLAINTEXT" || !c.ControlledShutdown || c.OffsetsReplicationFactor != 3 {
		t.Fatalf("cluster config %+v (broker.id %d)", c, b.BrokerID)
	}
	if b, err := Load(file, Input{"flags", map[string]string{"zookeeper.connect": ""}}); err != nil || b.Cluster != nil {
		t.Fatalf("cleared zookeeper.connect: %v, %+v", err, b.Cluster)
	}
	gen, err := Load(Input{"server.properties", map[string]string{"zookeeper.connect": "localhost:2181"}})
	if err != nil || !gen.Cluster.GenerateBrokerID || gen.BrokerID != -1 {
		t.Fatalf("no broker.id: %v, %+v, id %d", err, gen.Cluster, gen.BrokerID)
	}
}

func TestClusterSettingsRefusedClearly(t *testing.T) {
	for _, tc := range []struct {
		values map[string]string
		want   []string
	}{
		{map[string]string{"zookeeper.set.acl": "true"}, []string{"zookeeper.set.acl", "ACLs"}},
		{map[string]string{"zookeeper.connect": "nohost"}, []string{"zookeeper.connect", "host:port"}},
		{map[string]string{"zookeeper.connect": "h:1/kafka/"}, []string{"chroot"}},
		{map[string]string{"broker.id": "1001"}, []string{"reserved.broker.max.id"}},
		{map[string]string{"inter.broker.listener.name": "INTERNAL"}, []string{"inter.broker.listener.name", "names no listener"}},
		{map[string]string{"security.inter.broker.protocol": "SSL"}, []string{"security.inter.broker.protocol", "no listener"}},
	} {
		values := map[string]string{"zookeeper.connect": "localhost:2181"}
		maps.Copy(values, tc.values)
		_, err := Load(Input{"server.properties", values})
		if err == nil {
			t.Errorf("%v: loaded", tc.values)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not say %q", tc.values, err, w)
			}
		}
	}
}

func TestUnknownAndIgnoredKeysWarn(t *testing.T) {
	b, err := Load(Input{"server.properties", map[string]string{"no.such.key": "1", "num.io.threads": "8", "retention.ms": "5"}})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(b.Warnings, "\n")
	for _, want := range []string{"no.such.key", "retention.ms"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %s: %s", want, joined)
		}
	}
	if len(b.Notes) != 1 || !strings.Contains(b.Notes[0], "num.io.threads") {
		t.Errorf("notes %q", b.Notes)
	}
}

func TestKRaftFileLoads(t *testing.T) {
	b, err := Load(Input{"server.properties", map[string]string{
		"process.roles": "broker,controller", "node.id": "4",
		"listeners":                      "PLAINTEXT://:19092,CONTROLLER://:19093",
		"controller.listener.names":      "CONTROLLER",
		"listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
		"advertised.listeners":           "PLAINTEXT://localhost:19092",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if b.BrokerID != 4 || len(b.Listeners) != 1 || b.Listeners[0].Port != 19092 || b.Advertised[0].Host != "localhost" {
		t.Fatalf("got id %d listeners %v advertised %v", b.BrokerID, b.Listeners, b.Advertised)
	}
}

func TestTopicResolutionSynonymsAndScale(t *testing.T) {
	l := Layers{Static: map[string]string{"log.retention.hours": "2"}}
	e, _ := ResolveTopic("retention.ms", nil, l)
	if e.Value != "7200000" || e.Source != SourceStatic {
		t.Fatalf("retention.ms from hours: %+v", e)
	}
	if len(e.Synonyms) != 2 || e.Synonyms[0].Name != "log.retention.hours" || e.Synonyms[0].Value != "2" || e.Synonyms[1].Source != SourceDefault {
		t.Fatalf("synonyms %+v", e.Synonyms)
	}
	// ms beats hours at any layer, and the topic override beats all.
	l.DynamicDefault = map[string]string{"log.retention.ms": "1000"}
	e, _ = ResolveTopic("retention.ms", nil, l)
	if e.Value != "1000" || e.Source != SourceDynamicDefault || len(e.Synonyms) != 3 {
		t.Fatalf("retention.ms from dynamic default: %+v", e)
	}
	e, _ = ResolveTopic("retention.ms", map[string]string{"retention.ms": "5"}, l)
	if e.Value != "5" || e.Source != SourceTopic || len(e.Synonyms) != 4 {
		t.Fatalf("topic override: %+v", e)
	}
	// Nothing set: the broker default of the last synonym.
	e, _ = ResolveTopic("retention.ms", nil, Layers{})
	if e.Value != "604800000" || e.Source != SourceDefault || e.Synonyms[0].Name != "log.retention.hours" {
		t.Fatalf("default: %+v", e)
	}
	// Unlimited stays unlimited through scaling.
	e, _ = ResolveTopic("retention.ms", nil, Layers{Static: map[string]string{"log.retention.hours": "-1"}})
	if e.Value != "-1" {
		t.Fatalf("unlimited: %+v", e)
	}
	// A topic config with no synonym falls to its own default.
	e, _ = ResolveTopic("leader.replication.throttled.replicas", nil, Layers{})
	if e.Null || e.Value != "" || e.Source != SourceDefault {
		t.Fatalf("own default: %+v", e)
	}
}

func TestBrokerResolution(t *testing.T) {
	e, _ := ResolveBroker("log.retention.ms", Layers{})
	if !e.Null && e.Value != "604800000" {
		t.Fatalf("log.retention.ms default %+v", e)
	}
	if e.ReadOnly {
		t.Fatal("log.retention.ms is dynamic, not read-only")
	}
	e, _ = ResolveBroker("log.dirs", Layers{Static: map[string]string{"log.dir": "/x"}})
	if e.Value != "/x" || e.Source != SourceStatic {
		t.Fatalf("log.dirs via log.dir: %+v", e)
	}
	e, _ = ResolveBroker("broker.id", Layers{})
	if !e.ReadOnly {
		t.Fatal("broker.id must be read-only")
	}
}

func TestValidateTopic(t *testing.T) {
	cases := []struct {
		k, v string
		ok   bool
	}{
		{"retention.ms", "-1", true},
		{"retention.ms", "-2", false},
		{"cleanup.policy", "compact,delete", true},
		{"cleanup.policy", "compact,bogus", false},
		{"min.cleanable.dirty.ratio", "1.5", false},
		{"samsa.flush.policy", "always", true},
		{"samsa.flush.policy", "sometimes", false},
		{"max.message.bytes", "abc", false},
		{"segment.bytes", "2147483648", false},
		{"message.timestamp.type", "LogAppendTime", true},
	}
	for _, c := range cases {
		err := ValidateTopic(c.k, c.v)
		if (err == nil) != c.ok {
			t.Errorf("%s=%s: err %v, want ok=%v", c.k, c.v, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), c.k) {
			t.Errorf("error does not name the key: %v", err)
		}
	}
	if err := ValidateTopic("retention.mss", "1"); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown key: %v", err)
	}
}

func TestParseTopic(t *testing.T) {
	tc := ParseTopic(EffectiveTopic(map[string]string{"cleanup.policy": "compact", "retention.ms": "-1"},
		Layers{Static: map[string]string{"log.segment.bytes": "1048576"}}))
	if !tc.Compact || tc.Delete || tc.Retention != -1 || tc.SegmentBytes != 1048576 || tc.FlushPolicy != FlushGroup {
		t.Fatalf("%+v", tc)
	}
	if tc.SegmentAge != 7*24*time.Hour {
		t.Fatalf("segment age %v", tc.SegmentAge)
	}
}

func TestParseProperties(t *testing.T) {
	src := "# comment\n! also comment\n  broker.id = 3\nlog.dirs:/var/a,\\\n    /var/b\nlisteners PLAINTEXT://host\\:1/\nempty=\nuni=caf\\u00e9\n"
	m, err := ParseProperties(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"broker.id": "3", "log.dirs": "/var/a,/var/b", "listeners": "PLAINTEXT://host:1/", "empty": "", "uni": "café"}
	if len(m) != len(want) {
		t.Fatalf("got %q", m)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %q, want %q", k, m[k], v)
		}
	}
	if _, err := ParseProperties(strings.NewReader("k=\\u12")); err == nil {
		t.Fatal("short unicode escape accepted")
	}
}

func TestEnv(t *testing.T) {
	m := FromEnv([]string{"SAMSA_LOG_DIRS=/d", "SAMSA_CONFIG=/f", "HOME=/root", "SAMSA_A__B___C=1"}, "SAMSA_CONFIG")
	if m["log.dirs"] != "/d" || m["a_b-c"] != "1" || len(m) != 2 {
		t.Fatalf("%v", m)
	}
	for _, k := range []string{"log.dirs", "auto.create.topics.enable", "a_b-c"} {
		if EnvKey(EnvName(k)) != k {
			t.Errorf("round trip %s -> %s", k, EnvName(k))
		}
	}
}

func TestLeaderBalanceKeys(t *testing.T) {
	zk := map[string]string{"zookeeper.connect": "localhost:2181", "broker.id": "1"}
	b, err := Load(Input{"server.properties", zk})
	if err != nil {
		t.Fatal(err)
	}
	if c := b.Cluster; !c.AutoLeaderRebalance || c.LeaderImbalanceCheckInterval != 300*time.Second || c.LeaderImbalancePerBroker != 10 {
		t.Fatalf("defaults: %+v", c)
	}
	b, err = Load(Input{"server.properties", zk}, Input{"flags", map[string]string{"auto.leader.rebalance.enable": "false",
		"leader.imbalance.check.interval.seconds": "2", "leader.imbalance.per.broker.percentage": "25"}})
	if err != nil {
		t.Fatal(err)
	}
	if c := b.Cluster; c.AutoLeaderRebalance || c.LeaderImbalanceCheckInterval != 2*time.Second || c.LeaderImbalancePerBroker != 25 {
		t.Fatalf("set: %+v", c)
	}
	if _, err := Load(Input{"server.properties", zk}, Input{"flags", map[string]string{"leader.imbalance.check.interval.seconds": "0"}}); err == nil {
		t.Errorf("leader.imbalance.check.interval.seconds=0 accepted (Kafka: at least 1)")
	}
}
