package zkmeta

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// Znodes written by a live Apache Kafka 3.9.1 broker (ZooKeeper mode,
// broker.rack=r1, listeners PLAINTEXT and INTERNAL; topics created with
// franz-go's kadm), byte for byte.
var (
	kafkaBroker       = []byte("{\"features\":{},\"listener_security_protocol_map\":{\"PLAINTEXT\":\"PLAINTEXT\",\"INTERNAL\":\"PLAINTEXT\"},\"endpoints\":[\"PLAINTEXT://127.0.0.1:19092\",\"INTERNAL://127.0.0.1:19093\"],\"rack\":\"r1\",\"jmx_port\":-1,\"port\":19092,\"host\":\"127.0.0.1\",\"version\":5,\"timestamp\":\"1796149136211\"}")
	kafkaTopic3       = []byte("{\"partitions\":{\"0\":[1],\"1\":[1],\"2\":[1]},\"topic_id\":\"UaDBsRpES1GVlTNRDbYzDg\",\"adding_replicas\":{},\"removing_replicas\":{},\"version\":3}")
	kafkaTopic12      = []byte("{\"partitions\":{\"11\":[1],\"0\":[1],\"1\":[1],\"2\":[1],\"3\":[1],\"4\":[1],\"5\":[1],\"6\":[1],\"7\":[1],\"8\":[1],\"9\":[1],\"10\":[1]},\"topic_id\":\"KlwSrv9FSV-bHRx1GSGsyQ\",\"adding_replicas\":{},\"removing_replicas\":{},\"version\":3}")
	kafkaTopic21      = []byte("{\"partitions\":{\"11\":[1],\"12\":[1],\"13\":[1],\"14\":[1],\"15\":[1],\"16\":[1],\"17\":[1],\"18\":[1],\"19\":[1],\"0\":[1],\"1\":[1],\"2\":[1],\"3\":[1],\"4\":[1],\"5\":[1],\"6\":[1],\"7\":[1],\"8\":[1],\"9\":[1],\"20\":[1],\"10\":[1]},\"topic_id\":\"qPVSGapKRkegaiXlGabvsw\",\"adding_replicas\":{},\"removing_replicas\":{},\"version\":3}")
	kafkaState        = []byte("{\"controller_epoch\":1,\"leader\":1,\"version\":1,\"leader_epoch\":0,\"isr\":[1]}")
	kafkaClusterID    = []byte("{\"version\":\"1\",\"id\":\"NjCi029yRSW5YBFV9XU7vw\"}")
	kafkaConfigChange = []byte("{\"version\":2,\"entity_path\":\"topics/t1\"}")
	kafkaConfig2      = []byte("{\"version\":1,\"config\":{\"retention.ms\":\"1000\",\"segment.ms\":\"2000\"}}")
	kafkaConfig0      = []byte("{\"version\":1,\"config\":{}}")
	kafkaConfig13     = []byte("{\"version\":1,\"config\":{\"file.delete.delay.ms\":\"1\",\"max.message.bytes\":\"10000\",\"min.insync.replicas\":\"1\",\"preallocate\":\"false\",\"index.interval.bytes\":\"4096\",\"retention.bytes\":\"-1\",\"delete.retention.ms\":\"1\",\"cleanup.policy\":\"compact\",\"flush.ms\":\"1000\",\"segment.bytes\":\"1048576\",\"segment.ms\":\"2000\",\"retention.ms\":\"1000\",\"flush.messages\":\"10\"}}")
	kafkaController   = []byte("{\"version\":2,\"brokerid\":1,\"timestamp\":\"1796149136512\",\"kraftControllerEpoch\":-1}")
	kafkaFeature      = []byte("{\"features\":{},\"version\":2,\"status\":1}")
	kafkaPIDBlock     = []byte("{\"version\":1,\"broker\":1,\"block_start\":\"0\",\"block_end\":\"999\"}")
	// Kafka 3.9.1, a broker with one PLAINTEXT listener and no rack.
	kafkaBrokerPlain = []byte("{\"features\":{},\"listener_security_protocol_map\":{\"PLAINTEXT\":\"PLAINTEXT\"},\"endpoints\":[\"PLAINTEXT://127.0.0.1:19092\"],\"jmx_port\":-1,\"port\":19092,\"host\":\"127.0.0.1\",\"version\":5,\"timestamp\":\"1796148981160\"}")
)

// roundTrip decodes Kafka's bytes, re-encodes them, and wants them back
// unchanged.
func roundTrip(t *testing.T, name string, kafka []byte, reencode func([]byte) ([]byte, error)) {
	t.Helper()
	got, err := reencode(kafka)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !bytes.Equal(got, kafka) {
		t.Errorf("%s: re-encoded differs from Kafka 3.9.1's\n got %s\nwant %s", name, got, kafka)
	}
}

func TestKafkaBytesRoundTrip(t *testing.T) {
	broker := func(data []byte) ([]byte, error) {
		b, err := DecodeBrokerInfo(1, data)
		return EncodeBrokerInfo(b), err
	}
	roundTrip(t, "broker (rack, two listeners)", kafkaBroker, broker)
	roundTrip(t, "broker", kafkaBrokerPlain, broker)
	topic := func(data []byte) ([]byte, error) {
		a, err := DecodeTopicAssignment("t", data)
		return EncodeTopicAssignment(a), err
	}
	roundTrip(t, "topic, 3 partitions", kafkaTopic3, topic)
	roundTrip(t, "topic, 12 partitions", kafkaTopic12, topic)
	roundTrip(t, "topic, 21 partitions", kafkaTopic21, topic)
	roundTrip(t, "partition state", kafkaState, func(data []byte) ([]byte, error) {
		s, err := DecodePartitionState(data)
		return EncodePartitionState(s), err
	})
	roundTrip(t, "cluster id", kafkaClusterID, func(data []byte) ([]byte, error) {
		id, err := DecodeClusterID(data)
		return EncodeClusterID(id), err
	})
	roundTrip(t, "config change", kafkaConfigChange, func(data []byte) ([]byte, error) {
		typ, name, err := DecodeConfigChange(data)
		return EncodeConfigChange(typ + "/" + name), err
	})
	config := func(data []byte) ([]byte, error) {
		cfg, err := DecodeEntityConfig(data)
		return EncodeEntityConfig(cfg), err
	}
	roundTrip(t, "config, 2 keys", kafkaConfig2, config)
	roundTrip(t, "config, empty", kafkaConfig0, config)
	// Kafka's order of keys that share a bucket is the order they were
	// put in (here the order of a Go map in the client that created the
	// topic): only the bucket order can match.
	got, err := config(kafkaConfig13)
	if err != nil {
		t.Fatal(err)
	}
	if len(configBuckets(t, kafkaConfig13)) != 13 || !sameConfig(t, got, kafkaConfig13) {
		t.Errorf("config, 13 keys:\n got %s\nwant %s", got, kafkaConfig13)
	}
	roundTrip(t, "controller", kafkaController, func(data []byte) ([]byte, error) {
		ctl, err := DecodeController(data)
		return EncodeController(ctl), err
	})
	roundTrip(t, "feature", kafkaFeature, func(data []byte) ([]byte, error) {
		f, err := DecodeFeatures(data)
		return EncodeFeatures(f), err
	})
	roundTrip(t, "producer id block", kafkaPIDBlock, func(data []byte) ([]byte, error) {
		b, err := DecodeProducerIDBlock(data)
		return EncodeProducerIDBlock(b), err
	})
}

func TestDecodedValues(t *testing.T) {
	b, err := DecodeBrokerInfo(1, kafkaBroker)
	if err != nil {
		t.Fatal(err)
	}
	want := []Endpoint{{"PLAINTEXT", "127.0.0.1", 19092, "PLAINTEXT"}, {"INTERNAL", "127.0.0.1", 19093, "PLAINTEXT"}}
	if len(b.Endpoints) != 2 || b.Endpoints[0] != want[0] || b.Endpoints[1] != want[1] || b.Rack != "r1" || b.JMXPort != -1 || b.Timestamp != 1796149136211 {
		t.Errorf("broker decoded as %+v", b)
	}
	a, err := DecodeTopicAssignment("t1", kafkaTopic3)
	if err != nil {
		t.Fatal(err)
	}
	if a.ID.String() != "UaDBsRpES1GVlTNRDbYzDg" || len(a.Partitions) != 3 || a.Partitions[2][0] != 1 {
		t.Errorf("topic decoded as %+v", a)
	}
	s, err := DecodePartitionState(kafkaState)
	if err != nil || s.Leader != 1 || s.ControllerEpoch != 1 || s.LeaderEpoch != 0 || len(s.ISR) != 1 {
		t.Errorf("state decoded as %+v, %v", s, err)
	}
	blk, err := DecodeProducerIDBlock(kafkaPIDBlock)
	if err != nil || blk != (ProducerIDBlock{Broker: 1, Start: 0, End: 999}) {
		t.Errorf("block decoded as %+v, %v", blk, err)
	}
}

// configBuckets lists, for the config keys of data in order, the bucket
// each takes in the ConcurrentHashMap behind a java.util.Properties of
// that many keys.
func configBuckets(t *testing.T, data []byte) []uint32 {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	var keys []string
	depth := 0
	inConfig := false
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				depth++
				expectKey = true
			case '}':
				depth--
				inConfig = false
			}
			continue
		case string:
			if depth == 1 && expectKey && v == "config" {
				inConfig = true
			} else if depth == 2 && inConfig && expectKey {
				keys = append(keys, v)
			}
		}
		if depth >= 1 {
			expectKey = !expectKey
		}
	}
	size := uint32(16)
	for len(keys) >= int(size)*3/4 {
		size *= 2
	}
	buckets := make([]uint32, len(keys))
	for i, k := range keys {
		buckets[i] = spread(javaStringHash(k)) & 0x7fffffff & (size - 1)
	}
	return buckets
}

// sameConfig reports whether two config znodes hold the same config with
// the keys in the same bucket order: the order within a bucket is the
// order Kafka was handed the keys in, which its JSON does not keep.
func sameConfig(t *testing.T, a, b []byte) bool {
	t.Helper()
	ca, err1 := DecodeEntityConfig(a)
	cb, err2 := DecodeEntityConfig(b)
	if err1 != nil || err2 != nil || len(ca) != len(cb) {
		return false
	}
	for k, v := range ca {
		if cb[k] != v {
			return false
		}
	}
	return slices.Equal(configBuckets(t, a), configBuckets(t, b))
}
