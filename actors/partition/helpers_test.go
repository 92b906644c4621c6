package partition

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/wire"
)

// batchSpec describes a RecordBatch v2 for tests.
type batchSpec struct {
	codec      int
	timestamps []int64 // one record per timestamp
	pid        int64   // -1: not idempotent
	epoch      int16
	seq        int32
	attrs      int16  // extra attribute bits (transactional, control)
	key        []byte // nil: null key
	// keys, when set, are the records' keys one by one (nil: null),
	// instead of key for every record.
	keys  [][]byte
	value []byte
}

// plain is a non-idempotent batch of n records stamped ts.
func plain(n int, ts int64) batchSpec {
	s := batchSpec{pid: -1, epoch: -1, seq: -1, value: []byte("value")}
	for range n {
		s.timestamps = append(s.timestamps, ts)
	}
	return s
}

// idem is an idempotent batch of n records of producer pid.
func idem(pid int64, epoch int16, seq int32, n int, ts int64) batchSpec {
	s := plain(n, ts)
	s.pid, s.epoch, s.seq = pid, epoch, seq
	return s
}

// build encodes the batch with kmsg's record encoder, compresses it with
// wire.Compress and seals it with a correct length and CRC.
func (s batchSpec) build() []byte {
	var section []byte
	base := s.timestamps[0]
	maxTs := base
	for i, ts := range s.timestamps {
		maxTs = max(maxTs, ts)
		key := s.key
		if s.keys != nil {
			key = s.keys[i]
		}
		rec := kmsg.Record{TimestampDelta64: ts - base, OffsetDelta: int32(i), Key: key, Value: s.value}
		body := rec.AppendTo(nil)[1:]
		rec.Length = int32(len(body))
		section = append(section, rec.AppendTo(nil)...)
	}
	if s.codec != wire.CodecNone {
		var err error
		if section, err = wire.Compress(nil, s.codec, section); err != nil {
			panic(err)
		}
	}
	b := make([]byte, wire.BatchHeaderSize, wire.BatchHeaderSize+len(section))
	be := binary.BigEndian
	be.PutUint32(b[wire.BatchLengthPos:], uint32(wire.BatchHeaderSize-wire.BatchLogOverhead+len(section)))
	be.PutUint32(b[wire.BatchLeaderEpochPos:], 0xffffffff)
	b[wire.BatchMagicPos] = 2
	be.PutUint16(b[wire.BatchAttributesPos:], uint16(int16(s.codec)|s.attrs))
	be.PutUint32(b[wire.BatchLastOffsetDeltaPos:], uint32(len(s.timestamps)-1))
	be.PutUint64(b[wire.BatchBaseTimestampPos:], uint64(base))
	be.PutUint64(b[wire.BatchMaxTimestampPos:], uint64(maxTs))
	be.PutUint64(b[wire.BatchProducerIDPos:], uint64(s.pid))
	be.PutUint16(b[wire.BatchProducerEpochPos:], uint16(s.epoch))
	be.PutUint32(b[wire.BatchBaseSequencePos:], uint32(s.seq))
	be.PutUint32(b[wire.BatchRecordCountPos:], uint32(len(s.timestamps)))
	b = append(b, section...)
	reseal(b)
	return b
}

// reseal recomputes a batch's CRC after a test changed covered bytes.
func reseal(b []byte) {
	binary.BigEndian.PutUint32(b[wire.BatchCRCPos:], wire.CRC32C(b[wire.BatchAttributesPos:]))
}

// defaultRules are the rules of a topic with Kafka's defaults.
func defaultRules(t testing.TB) Rules {
	t.Helper()
	return RulesOf(topicConfig(t))
}

// topicConfig is the effective config of a topic with the given overrides.
func topicConfig(t testing.TB, kv ...string) config.Topic {
	t.Helper()
	over := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		over[kv[i]] = kv[i+1]
	}
	return config.ParseTopic(config.EffectiveTopic(over, config.Layers{}))
}

var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli()
