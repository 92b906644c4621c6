package partition

import (
	"math"
	"time"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/segment"
)

// maxTimerMs bounds millisecond settings that become timers: Kafka uses
// Long.MAX_VALUE for "never", which overflows a time.Duration.
const maxTimerMs = math.MaxInt64 / int64(time.Millisecond)

// SegmentConfig maps a topic's effective config to its log's. segment
// reads a zero field as "default", so Kafka's zero values that mean
// "immediately" (retention.ms=0, retention.bytes=0) become 1.
func SegmentConfig(t config.Topic) segment.Config {
	ms := func(d time.Duration) int64 {
		if d < 0 {
			return -1
		}
		return min(d.Milliseconds(), maxTimerMs)
	}
	nonZero := func(v int64) int64 {
		if v == 0 {
			return 1
		}
		return v
	}
	policy, err := segment.ParseFlushPolicy(t.FlushPolicy)
	if err != nil {
		policy = segment.FlushGroup // the registry validated it; keep the durable default anyway
	}
	retentionMs, retentionBytes := nonZero(ms(t.Retention)), nonZero(t.RetentionBytes)
	if t.Compact && !t.Delete {
		// cleanup.policy=compact alone: the cleaner, not retention,
		// removes records (as in Kafka); compact,delete has both.
		retentionMs, retentionBytes = segment.Unlimited, segment.Unlimited
	}
	return segment.Config{
		SegmentBytes:       t.SegmentBytes,
		SegmentMs:          ms(t.SegmentAge),
		RetentionMs:        retentionMs,
		RetentionBytes:     retentionBytes,
		IndexIntervalBytes: int32(max(t.IndexIntervalBytes, 1)),
		SegmentIndexBytes:  int32(t.SegmentIndexBytes),
		MaxMessageBytes:    max(t.MaxMessageBytes, 1),
		FlushPolicy:        policy,
		FlushIntervalMs:    max(ms(t.FlushInterval), 1),
		LogAppendTime:      t.LogAppendTime,
	}
}
