package zkmeta

import (
	"bytes"
	"testing"
)

// FuzzDecoders feeds any bytes to every znode decoder: none may panic,
// and whatever one accepts re-encodes to bytes it decodes to the same
// value (encode(decode(encode(decode(x)))) == encode(decode(x))).
func FuzzDecoders(f *testing.F) {
	for _, seed := range [][]byte{kafkaBroker, kafkaBrokerPlain, kafkaTopic3, kafkaTopic21, kafkaState,
		kafkaClusterID, kafkaConfigChange, kafkaConfig13, kafkaController, kafkaFeature, kafkaPIDBlock,
		[]byte(`{"version":1,"host":"h","port":1,"jmx_port":1}`), []byte("7"), []byte("")} {
		f.Add(seed)
	}
	stable := func(t *testing.T, what string, data []byte, re func([]byte) ([]byte, error)) {
		once, err := re(data)
		if err != nil {
			return
		}
		twice, err := re(once)
		if err != nil {
			t.Fatalf("%s: our own encoding %q does not decode: %v (from %q)", what, once, err, data)
		}
		if !bytes.Equal(once, twice) {
			t.Fatalf("%s: unstable: %q then %q (from %q)", what, once, twice, data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		stable(t, "broker", data, func(d []byte) ([]byte, error) {
			b, err := DecodeBrokerInfo(1, d)
			if b.Timestamp == 0 {
				b.Timestamp = 1 // 0 means now to the encoder
			}
			return EncodeBrokerInfo(b), err
		})
		stable(t, "topic", data, func(d []byte) ([]byte, error) {
			a, err := DecodeTopicAssignment("t", d)
			return EncodeTopicAssignment(a), err
		})
		stable(t, "state", data, func(d []byte) ([]byte, error) {
			s, err := DecodePartitionState(d)
			return EncodePartitionState(s), err
		})
		stable(t, "config", data, func(d []byte) ([]byte, error) {
			c, err := DecodeEntityConfig(d)
			return EncodeEntityConfig(c), err
		})
		stable(t, "config change", data, func(d []byte) ([]byte, error) {
			typ, name, err := DecodeConfigChange(d)
			return EncodeConfigChange(typ + "/" + name), err
		})
		stable(t, "controller", data, func(d []byte) ([]byte, error) {
			c, err := DecodeController(d)
			return EncodeController(c), err
		})
		stable(t, "controller epoch", data, func(d []byte) ([]byte, error) {
			e, err := DecodeControllerEpoch(d)
			return EncodeControllerEpoch(e), err
		})
		stable(t, "cluster id", data, func(d []byte) ([]byte, error) {
			id, err := DecodeClusterID(d)
			return EncodeClusterID(id), err
		})
		stable(t, "feature", data, func(d []byte) ([]byte, error) {
			x, err := DecodeFeatures(d)
			return EncodeFeatures(x), err
		})
		stable(t, "producer id block", data, func(d []byte) ([]byte, error) {
			b, err := DecodeProducerIDBlock(d)
			return EncodeProducerIDBlock(b), err
		})
	})
}
