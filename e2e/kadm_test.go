package e2e

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func ptr(s string) *string { return &s }

// wantKafkaError checks that err is exactly Kafka error want, and that the
// broker said something about it when wantMessage is set.
func wantKafkaError(t *testing.T, what string, err error, message string, want *kerr.Error, wantMessage bool) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: error %v (message %q), want %s (code %d)", what, err, message, want.Message, want.Code)
		return
	}
	if wantMessage && message == "" {
		t.Errorf("%s: %s without an error message; Kafka explains it", what, want.Message)
	}
}

func createOne(t *testing.T, adm *kadm.Client, topic string, partitions int32, rf int16, configs map[string]*string) kadm.CreateTopicResponse {
	t.Helper()
	resps, err := adm.CreateTopics(testContext(t), partitions, rf, configs, topic)
	if err != nil {
		t.Fatalf("CreateTopics(%s): request failed: %v", topic, err)
	}
	r, ok := resps[topic]
	if !ok {
		t.Fatalf("CreateTopics(%s): no result for the topic in %v", topic, resps)
	}
	return r
}

func mustCreate(t *testing.T, adm *kadm.Client, topic string, partitions int32, configs map[string]*string) {
	t.Helper()
	if r := createOne(t, adm, topic, partitions, 1, configs); r.Err != nil {
		t.Fatalf("create %s: %v: %s", topic, r.Err, r.ErrMessage)
	}
}

func TestKadmTopics(t *testing.T) {
	b := sharedBroker(t)
	adm := newAdmin(t, b.Addr())

	t.Run("CreateListDescribeDelete", func(t *testing.T) {
		topic := topicName(t, "orders")
		r := createOne(t, adm, topic, 3, 1, map[string]*string{"retention.ms": ptr("3600000")})
		if r.Err != nil {
			t.Fatalf("create: %v: %s", r.Err, r.ErrMessage)
		}
		if r.NumPartitions != 3 || r.ReplicationFactor != 1 {
			t.Errorf("create answered %d partitions, rf %d; want 3, 1", r.NumPartitions, r.ReplicationFactor)
		}
		if r.ID == (kadm.TopicID{}) {
			t.Error("create answered no topic id (CreateTopics v7 carries one)")
		}
		// CreateTopics v5+ answers with the topic's configs.
		if c, ok := r.Configs["retention.ms"]; !ok || deref(c.Value) != "3600000" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
			t.Errorf("create answered retention.ms = %+v, want 3600000 from the topic", c)
		}
		if c, ok := r.Configs["cleanup.policy"]; !ok || deref(c.Value) != "delete" || c.Source != kmsg.ConfigSourceDefaultConfig {
			t.Errorf("create answered cleanup.policy = %+v, want the default delete", c)
		}

		all, err := adm.ListTopics(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		d, ok := all[topic]
		if !ok {
			t.Fatalf("list: %s missing from %v", topic, all.Names())
		}
		brokers, err := adm.ListBrokers(testContext(t))
		if err != nil || len(brokers) != 1 {
			t.Fatalf("ListBrokers = %v, %v; want one broker", brokers, err)
		}
		id := brokers[0].NodeID
		if len(d.Partitions) != 3 {
			t.Fatalf("list: %d partitions, want 3", len(d.Partitions))
		}
		for _, p := range d.Partitions.Sorted() {
			if p.Err != nil || p.Leader != id || len(p.Replicas) != 1 || p.Replicas[0] != id ||
				len(p.ISR) != 1 || p.ISR[0] != id {
				t.Errorf("partition %d: leader %d replicas %v isr %v err %v; want all %d",
					p.Partition, p.Leader, p.Replicas, p.ISR, p.Err, id)
			}
		}
		if d.ID != r.ID {
			t.Errorf("metadata topic id %v differs from the created id %v", d.ID, r.ID)
		}

		del, err := adm.DeleteTopics(testContext(t), topic)
		if err != nil {
			t.Fatal(err)
		}
		if e := del[topic].Err; e != nil {
			t.Fatalf("delete: %v", e)
		}
		after := freshTopics(t, b.Addr(), topic)
		wantKafkaError(t, "metadata of a deleted topic", after[topic].Err, "", kerr.UnknownTopicOrPartition, false)
	})

	t.Run("DefaultPartitions", func(t *testing.T) {
		topic := topicName(t, "dflt")
		r := createOne(t, adm, topic, -1, -1, nil)
		if r.Err != nil {
			t.Fatalf("create with broker defaults: %v: %s", r.Err, r.ErrMessage)
		}
		if r.NumPartitions != 1 || r.ReplicationFactor != 1 {
			t.Errorf("defaults gave %d partitions, rf %d; want num.partitions=1, rf 1", r.NumPartitions, r.ReplicationFactor)
		}
	})

	t.Run("ValidateOnly", func(t *testing.T) {
		topic := topicName(t, "dry")
		resps, err := adm.ValidateCreateTopics(testContext(t), 2, 1, nil, topic)
		if err != nil {
			t.Fatal(err)
		}
		if e := resps[topic].Err; e != nil {
			t.Fatalf("validate-only create: %v: %s", e, resps[topic].ErrMessage)
		}
		list := freshTopics(t, b.Addr(), topic)
		wantKafkaError(t, "a validate-only topic must not exist", list[topic].Err, "", kerr.UnknownTopicOrPartition, false)

		bad, err := adm.ValidateCreateTopics(testContext(t), 1, 3, nil, topic)
		if err != nil {
			t.Fatal(err)
		}
		wantKafkaError(t, "validate-only with rf 3", bad[topic].Err, bad[topic].ErrMessage, kerr.InvalidReplicationFactor, true)
	})

	t.Run("AlreadyExists", func(t *testing.T) {
		topic := topicName(t, "twice")
		mustCreate(t, adm, topic, 1, nil)
		r := createOne(t, adm, topic, 1, 1, nil)
		wantKafkaError(t, "second create", r.Err, r.ErrMessage, kerr.TopicAlreadyExists, true)
	})

	t.Run("BadNames", func(t *testing.T) {
		for _, name := range []string{"", ".", "..", "has space", "slash/inside", "star*", strings.Repeat("x", 250), "ünïcode"} {
			r := createOne(t, adm, name, 1, 1, nil)
			wantKafkaError(t, "create "+quoteShort(name), r.Err, r.ErrMessage, kerr.InvalidTopicException, true)
		}
		// 249 characters is Kafka's longest legal name.
		long := topicName(t, "")
		long += strings.Repeat("y", 249-len(long))
		if r := createOne(t, adm, long, 1, 1, nil); r.Err != nil {
			t.Errorf("a 249-character name: %v: %s", r.Err, r.ErrMessage)
		}
	})

	t.Run("NameCollision", func(t *testing.T) {
		// '.' and '_' collide in metric names, so Kafka refuses a topic
		// that differs from an existing one only by them.
		base := topicName(t, "c")
		dotted, underscored := base+".x", base+"_x"
		mustCreate(t, adm, dotted, 1, nil)
		r := createOne(t, adm, underscored, 1, 1, nil)
		wantKafkaError(t, "create "+underscored+" next to "+dotted, r.Err, r.ErrMessage, kerr.InvalidTopicException, true)
		if r.Err != nil && !strings.Contains(r.ErrMessage, dotted) {
			t.Errorf("collision message %q does not name the existing topic %s", r.ErrMessage, dotted)
		}
	})

	t.Run("ReplicationFactorTooHigh", func(t *testing.T) {
		r := createOne(t, adm, topicName(t, "rf3"), 1, 3, nil)
		wantKafkaError(t, "rf 3 on one broker", r.Err, r.ErrMessage, kerr.InvalidReplicationFactor, true)
		if r.Err != nil && !strings.Contains(r.ErrMessage, "3") {
			t.Errorf("message %q does not say which factor was asked for", r.ErrMessage)
		}
	})

	t.Run("BadPartitionsAndReplication", func(t *testing.T) {
		r := createOne(t, adm, topicName(t, "p0"), 0, 1, nil)
		wantKafkaError(t, "0 partitions", r.Err, r.ErrMessage, kerr.InvalidPartitions, true)
		r = createOne(t, adm, topicName(t, "rf0"), 1, 0, nil)
		wantKafkaError(t, "replication factor 0", r.Err, r.ErrMessage, kerr.InvalidReplicationFactor, true)
	})

	t.Run("InvalidConfig", func(t *testing.T) {
		for _, cfg := range []map[string]*string{
			{"cleanup.policy": ptr("sometimes")},
			{"retention.ms": ptr("soon")},
			{"no.such.config": ptr("1")},
		} {
			topic := topicName(t, "badcfg")
			r := createOne(t, adm, topic, 1, 1, cfg)
			wantKafkaError(t, "create with "+configText(cfg), r.Err, r.ErrMessage, kerr.InvalidConfig, true)
			if list := freshTopics(t, b.Addr(), topic); list[topic].Err == nil {
				t.Errorf("topic %s exists after a rejected create", topic)
			}
		}
	})

	t.Run("DeleteUnknown", func(t *testing.T) {
		topic := topicName(t, "never")
		resps, err := adm.DeleteTopics(testContext(t), topic)
		if err != nil {
			t.Fatal(err)
		}
		wantKafkaError(t, "delete of an unknown topic", resps[topic].Err, "", kerr.UnknownTopicOrPartition, false)
	})

	t.Run("CreatePartitions", func(t *testing.T) {
		topic := topicName(t, "grow")
		mustCreate(t, adm, topic, 1, nil)
		grow, err := adm.UpdatePartitions(testContext(t), 3, topic)
		if err != nil {
			t.Fatal(err)
		}
		if e := grow[topic].Err; e != nil {
			t.Fatalf("grow to 3: %v: %s", e, grow[topic].ErrMessage)
		}
		if n := len(freshTopics(t, b.Addr(), topic)[topic].Partitions); n != 3 {
			t.Errorf("after growing to 3: %d partitions", n)
		}
		shrink, err := adm.UpdatePartitions(testContext(t), 2, topic)
		if err != nil {
			t.Fatal(err)
		}
		wantKafkaError(t, "shrink 3 to 2", shrink[topic].Err, shrink[topic].ErrMessage, kerr.InvalidPartitions, true)
		same, err := adm.UpdatePartitions(testContext(t), 3, topic)
		if err != nil {
			t.Fatal(err)
		}
		wantKafkaError(t, "grow 3 to 3", same[topic].Err, same[topic].ErrMessage, kerr.InvalidPartitions, true)
		dry, err := adm.ValidateUpdatePartitions(testContext(t), 5, topic)
		if err != nil {
			t.Fatal(err)
		}
		if e := dry[topic].Err; e != nil {
			t.Errorf("validate-only grow: %v", e)
		}
		if n := len(freshTopics(t, b.Addr(), topic)[topic].Partitions); n != 3 {
			t.Errorf("a validate-only grow changed the count to %d", n)
		}
		unknown := topicName(t, "nope")
		u, err := adm.UpdatePartitions(testContext(t), 2, unknown)
		if err != nil {
			t.Fatal(err)
		}
		wantKafkaError(t, "grow an unknown topic", u[unknown].Err, "", kerr.UnknownTopicOrPartition, false)
	})
}

func quoteShort(s string) string {
	if len(s) > 20 {
		return `"` + s[:20] + `..."`
	}
	return `"` + s + `"`
}

func configText(cfg map[string]*string) string {
	var parts []string
	for k, v := range cfg {
		parts = append(parts, k+"="+*v)
	}
	return strings.Join(parts, ",")
}

// findConfig returns the named config of a resource.
func findConfig(rc kadm.ResourceConfig, key string) (kadm.Config, bool) {
	for _, c := range rc.Configs {
		if c.Key == key {
			return c, true
		}
	}
	return kadm.Config{}, false
}

func describeTopicConfig(t *testing.T, adm *kadm.Client, topic string) kadm.ResourceConfig {
	t.Helper()
	rcs, err := adm.DescribeTopicConfigs(testContext(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		t.Fatalf("describe configs of %s: no answer: %v", topic, err)
	}
	if rc.Err != nil {
		t.Fatalf("describe configs of %s: %v: %s", topic, rc.Err, rc.ErrMessage)
	}
	return rc
}

func wantConfig(t *testing.T, rc kadm.ResourceConfig, key, value string, source kmsg.ConfigSource) {
	t.Helper()
	if err := configErr(rc, key, value, source); err != nil {
		t.Error(err)
	}
}

func configErr(rc kadm.ResourceConfig, key, value string, source kmsg.ConfigSource) error {
	c, ok := findConfig(rc, key)
	if !ok {
		return fmt.Errorf("%s: config %s missing", rc.Name, key)
	}
	if c.Value == nil || *c.Value != value || c.Source != source {
		return fmt.Errorf("%s: %s = %s (%v), want %s (%v)", rc.Name, key, deref(c.Value), c.Source, value, source)
	}
	return nil
}

func TestKadmConfigs(t *testing.T) {
	b := sharedBroker(t)
	adm := newAdmin(t, b.Addr())

	t.Run("DescribeTopic", func(t *testing.T) {
		topic := topicName(t, "cfg")
		mustCreate(t, adm, topic, 1, map[string]*string{"retention.ms": ptr("60000"), "cleanup.policy": ptr("compact")})
		rc := describeTopicConfig(t, adm, topic)
		wantConfig(t, rc, "retention.ms", "60000", kmsg.ConfigSourceDynamicTopicConfig)
		wantConfig(t, rc, "cleanup.policy", "compact", kmsg.ConfigSourceDynamicTopicConfig)
		// Kafka lists every topic config, the untouched ones as defaults.
		for _, key := range []string{"segment.bytes", "max.message.bytes", "min.insync.replicas", "retention.bytes"} {
			c, ok := findConfig(rc, key)
			if !ok {
				t.Errorf("config %s missing from the description", key)
				continue
			}
			if c.Source == kmsg.ConfigSourceDynamicTopicConfig {
				t.Errorf("%s has source %v; an untouched config is not a topic override", key, c.Source)
			}
		}
		unknown := topicName(t, "nope")
		rcs, err := adm.DescribeTopicConfigs(testContext(t), unknown)
		if err != nil {
			t.Fatal(err)
		}
		if rc, err := rcs.On(unknown, nil); err != nil {
			t.Errorf("no answer for the unknown topic: %v", err)
		} else {
			wantKafkaError(t, "describe configs of an unknown topic", rc.Err, "", kerr.UnknownTopicOrPartition, false)
		}
	})

	t.Run("DescribeBroker", func(t *testing.T) {
		brokers, err := adm.ListBrokers(testContext(t))
		if err != nil || len(brokers) != 1 {
			t.Fatalf("ListBrokers = %v, %v", brokers, err)
		}
		rcs, err := adm.DescribeBrokerConfigs(testContext(t), brokers[0].NodeID)
		if err != nil {
			t.Fatal(err)
		}
		if len(rcs) != 1 || rcs[0].Err != nil {
			t.Fatalf("broker configs: %+v", rcs)
		}
		rc := rcs[0]
		for _, key := range []string{"num.partitions", "default.replication.factor", "log.retention.hours", "message.max.bytes"} {
			if _, ok := findConfig(rc, key); !ok {
				t.Errorf("broker config %s missing", key)
			}
		}
		if c, ok := findConfig(rc, "log.dirs"); ok {
			if c.Value == nil || *c.Value != b.DataDir() || c.Source != kmsg.ConfigSourceStaticBrokerConfig {
				t.Errorf("log.dirs = %v (%v), want %s from the command line (STATIC_BROKER_CONFIG)",
					deref(c.Value), c.Source, b.DataDir())
			}
		} else {
			t.Error("broker config log.dirs missing")
		}
	})

	t.Run("IncrementalAlter", func(t *testing.T) {
		topic := topicName(t, "inc")
		mustCreate(t, adm, topic, 1, map[string]*string{"cleanup.policy": ptr("compact")})
		resps, err := adm.AlterTopicConfigs(testContext(t), []kadm.AlterConfig{
			{Op: kadm.SetConfig, Name: "retention.ms", Value: ptr("120000")},
		}, topic)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := resps.On(topic, nil); err != nil || r.Err != nil {
			t.Fatalf("set retention.ms: %v %+v", err, r)
		}
		rc := describeTopicConfig(t, adm, topic)
		wantConfig(t, rc, "retention.ms", "120000", kmsg.ConfigSourceDynamicTopicConfig)
		wantConfig(t, rc, "cleanup.policy", "compact", kmsg.ConfigSourceDynamicTopicConfig)

		resps, err = adm.AlterTopicConfigs(testContext(t), []kadm.AlterConfig{
			{Op: kadm.DeleteConfig, Name: "cleanup.policy"},
		}, topic)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := resps.On(topic, nil); err != nil || r.Err != nil {
			t.Fatalf("delete cleanup.policy: %v %+v", err, r)
		}
		rc = describeTopicConfig(t, adm, topic)
		if c, ok := findConfig(rc, "cleanup.policy"); !ok || deref(c.Value) != "delete" || c.Source == kmsg.ConfigSourceDynamicTopicConfig {
			t.Errorf("after deleting the override, cleanup.policy = %s (%v), want the default delete", deref(c.Value), c.Source)
		}
		wantConfig(t, rc, "retention.ms", "120000", kmsg.ConfigSourceDynamicTopicConfig)

		bad, err := adm.AlterTopicConfigs(testContext(t), []kadm.AlterConfig{
			{Op: kadm.SetConfig, Name: "retention.ms", Value: ptr("forever")},
		}, topic)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := bad.On(topic, nil); err != nil {
			t.Fatal(err)
		} else {
			wantKafkaError(t, "set retention.ms=forever", r.Err, r.ErrMessage, kerr.InvalidConfig, true)
		}
		wantConfig(t, describeTopicConfig(t, adm, topic), "retention.ms", "120000", kmsg.ConfigSourceDynamicTopicConfig)

		unknown := topicName(t, "nope")
		u, err := adm.AlterTopicConfigs(testContext(t), []kadm.AlterConfig{
			{Op: kadm.SetConfig, Name: "retention.ms", Value: ptr("1000")},
		}, unknown)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := u.On(unknown, nil); err != nil {
			t.Fatal(err)
		} else {
			wantKafkaError(t, "alter an unknown topic", r.Err, "", kerr.UnknownTopicOrPartition, false)
		}
	})

	t.Run("DynamicBrokerConfig", func(t *testing.T) {
		brokers, err := adm.ListBrokers(testContext(t))
		if err != nil || len(brokers) != 1 {
			t.Fatalf("ListBrokers = %v, %v", brokers, err)
		}
		id := brokers[0].NodeID
		topic := topicName(t, "inherit")
		mustCreate(t, adm, topic, 1, nil)
		set, err := adm.AlterBrokerConfigs(testContext(t), []kadm.AlterConfig{
			{Op: kadm.SetConfig, Name: "log.retention.ms", Value: ptr("7654321")},
		}, id)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = adm.AlterBrokerConfigs(testContext(t), []kadm.AlterConfig{
				{Op: kadm.DeleteConfig, Name: "log.retention.ms"},
			}, id)
		})
		if len(set) != 1 || set[0].Err != nil {
			t.Fatalf("set log.retention.ms on broker %d: %+v", id, set)
		}
		eventually(t, 5*time.Second, func() error {
			rcs, err := adm.DescribeBrokerConfigs(testContext(t), id)
			if err != nil || len(rcs) != 1 {
				return fmt.Errorf("describe broker: %v %+v", err, rcs)
			}
			return configErr(rcs[0], "log.retention.ms", "7654321", kmsg.ConfigSourceDynamicBrokerConfig)
		})
		// A topic without an override follows the broker's value.
		eventually(t, 5*time.Second, func() error {
			return configErr(describeTopicConfig(t, adm, topic), "retention.ms", "7654321", kmsg.ConfigSourceDynamicBrokerConfig)
		})

		del, err := adm.AlterBrokerConfigs(testContext(t), []kadm.AlterConfig{
			{Op: kadm.DeleteConfig, Name: "log.retention.ms"},
		}, id)
		if err != nil || len(del) != 1 || del[0].Err != nil {
			t.Fatalf("delete log.retention.ms on broker %d: %v %+v", id, err, del)
		}
		eventually(t, 5*time.Second, func() error {
			c, _ := findConfig(describeTopicConfig(t, adm, topic), "retention.ms")
			if deref(c.Value) != "604800000" || c.Source == kmsg.ConfigSourceDynamicBrokerConfig {
				return fmt.Errorf("after removing the broker override, retention.ms = %s (%v), want 604800000 (7 days)", deref(c.Value), c.Source)
			}
			return nil
		})
	})

	t.Run("LegacyAlterReplacesAll", func(t *testing.T) {
		topic := topicName(t, "legacy")
		mustCreate(t, adm, topic, 1, map[string]*string{"cleanup.policy": ptr("compact")})
		// AlterConfigs (key 33) sets the whole override set: what is not
		// named goes back to its default.
		resps, err := adm.AlterTopicConfigsState(testContext(t), []kadm.AlterConfig{
			{Name: "retention.ms", Value: ptr("300000")},
		}, topic)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := resps.On(topic, nil); err != nil || r.Err != nil {
			t.Fatalf("legacy alter: %v %+v", err, r)
		}
		rc := describeTopicConfig(t, adm, topic)
		wantConfig(t, rc, "retention.ms", "300000", kmsg.ConfigSourceDynamicTopicConfig)
		if c, _ := findConfig(rc, "cleanup.policy"); c.Source == kmsg.ConfigSourceDynamicTopicConfig {
			t.Errorf("legacy AlterConfigs kept the unnamed override cleanup.policy=%s", deref(c.Value))
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestKadmCluster(t *testing.T) {
	b := sharedBroker(t)
	cl := newClient(t, b.Addr())
	adm := kadm.NewClient(cl)

	t.Run("DescribeCluster", func(t *testing.T) {
		req := kmsg.NewPtrDescribeClusterRequest()
		resp, err := req.RequestWith(testContext(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != 0 {
			t.Fatalf("DescribeCluster error %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		if resp.ClusterID == "" || len(resp.Brokers) != 1 {
			t.Fatalf("cluster id %q, brokers %+v: want an id and one broker", resp.ClusterID, resp.Brokers)
		}
		br := resp.Brokers[0]
		if resp.ControllerID != br.NodeID {
			t.Errorf("controller %d, the only broker is %d", resp.ControllerID, br.NodeID)
		}
		if addr := net.JoinHostPort(br.Host, strconv.Itoa(int(br.Port))); addr != b.Addr() {
			t.Errorf("broker address %s, want the listener %s", addr, b.Addr())
		}
		meta, err := adm.BrokerMetadata(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		if meta.Cluster != resp.ClusterID || meta.Controller != resp.ControllerID {
			t.Errorf("Metadata says cluster %q controller %d, DescribeCluster %q %d",
				meta.Cluster, meta.Controller, resp.ClusterID, resp.ControllerID)
		}
	})

	t.Run("DescribeLogDirs", func(t *testing.T) {
		topic := topicName(t, "dirs")
		mustCreate(t, adm, topic, 2, nil)
		// Kafka creates partition logs as the broker applies the new
		// metadata, so wait for them to show.
		eventually(t, 5*time.Second, func() error {
			all, err := adm.DescribeAllLogDirs(testContext(t), nil)
			if err != nil {
				return err
			}
			if len(all) != 1 {
				return fmt.Errorf("log dirs from %d brokers, want 1", len(all))
			}
			for _, dirs := range all {
				if len(dirs) != 1 {
					return fmt.Errorf("%d log dirs, want 1: %+v", len(dirs), dirs)
				}
				for path, d := range dirs {
					switch {
					case d.Err != nil:
						return fmt.Errorf("log dir %s: %v", path, d.Err)
					case path != b.DataDir():
						return fmt.Errorf("log dir %q, want %q", path, b.DataDir())
					// DescribeLogDirs v4 (KIP-827) reports the volume's
					// size and free space; Kafka 3.3+ fills them in.
					case d.TotalBytes <= 0 || d.UsableBytes < 0 || d.UsableBytes > d.TotalBytes:
						return fmt.Errorf("log dir %s: total %d bytes, usable %d; want the volume's sizes (KIP-827)",
							path, d.TotalBytes, d.UsableBytes)
					case len(d.Topics[topic]) != 2:
						return fmt.Errorf("log dir lists %d partitions of %s, want 2", len(d.Topics[topic]), topic)
					}
					for p, pd := range d.Topics[topic] {
						if pd.Size != 0 {
							return fmt.Errorf("%s-%d holds %d bytes before any produce", topic, p, pd.Size)
						}
					}
				}
			}
			return nil
		})
	})

	t.Run("ApiVersions", func(t *testing.T) {
		vs, err := adm.ApiVersions(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs.Sorted() {
			if v.Err != nil {
				t.Fatalf("ApiVersions: %v", v.Err)
			}
			for _, key := range []int16{3, 18, 19, 20, 32, 33, 35, 37, 44, 60} {
				if _, _, ok := v.KeyVersions(key); !ok {
					t.Errorf("ApiVersions does not advertise %s (key %d)", kmsg.NameForKey(key), key)
				}
			}
		}
	})
}
