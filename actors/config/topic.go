package config

import (
	"slices"
	"time"
)

// Topic is a topic's effective configuration, typed: what a partition
// needs to run its log. Build it with ParseTopic from EffectiveTopic.
type Topic struct {
	Compact            bool // cleanup.policy has compact
	Delete             bool // cleanup.policy has delete
	Retention          time.Duration
	RetentionBytes     int64
	SegmentBytes       int64
	SegmentAge         time.Duration
	SegmentJitter      time.Duration
	SegmentIndexBytes  int64
	IndexIntervalBytes int64
	MaxMessageBytes    int32
	FlushPolicy        string
	FlushInterval      time.Duration
	FlushMessages      int64
	FileDeleteDelay    time.Duration
	Preallocate        bool
	LogAppendTime      bool // message.timestamp.type=LogAppendTime
	TimestampBeforeMax time.Duration
	TimestampAfterMax  time.Duration
	MinInsyncReplicas  int
	CompressionType    string
	// The log cleaner's (cleanup.policy=compact).
	DeleteRetention   time.Duration // delete.retention.ms: tombstones and markers after their first cleaning
	MinCleanableRatio float64       // min.cleanable.dirty.ratio
	MinCompactionLag  time.Duration // min.compaction.lag.ms
	MaxCompactionLag  time.Duration // max.compaction.lag.ms
}

// ParseTopic types an effective topic config map (EffectiveTopic's
// output, so every value is valid). Unlimited values (-1, Long.MAX) map to
// a negative or very large duration as they are.
func ParseTopic(v map[string]string) Topic {
	ms := func(k string) time.Duration {
		n := ParseInt(v[k])
		if n < 0 || n > int64(time.Duration(1<<63-1)/time.Millisecond) {
			if n < 0 {
				return -1
			}
			return time.Duration(1<<63 - 1)
		}
		return time.Duration(n) * time.Millisecond
	}
	policy := ParseList(v["cleanup.policy"])
	return Topic{
		Compact:            slices.Contains(policy, "compact"),
		Delete:             slices.Contains(policy, "delete"),
		Retention:          ms("retention.ms"),
		RetentionBytes:     ParseInt(v["retention.bytes"]),
		SegmentBytes:       ParseInt(v["segment.bytes"]),
		SegmentAge:         ms("segment.ms"),
		SegmentJitter:      ms("segment.jitter.ms"),
		SegmentIndexBytes:  ParseInt(v["segment.index.bytes"]),
		IndexIntervalBytes: ParseInt(v["index.interval.bytes"]),
		MaxMessageBytes:    int32(ParseInt(v["max.message.bytes"])),
		FlushPolicy:        v["samsa.flush.policy"],
		FlushInterval:      ms("flush.ms"),
		FlushMessages:      ParseInt(v["flush.messages"]),
		FileDeleteDelay:    ms("file.delete.delay.ms"),
		Preallocate:        ParseBool(v["preallocate"]),
		LogAppendTime:      v["message.timestamp.type"] == "LogAppendTime",
		TimestampBeforeMax: ms("message.timestamp.before.max.ms"),
		TimestampAfterMax:  ms("message.timestamp.after.max.ms"),
		MinInsyncReplicas:  int(ParseInt(v["min.insync.replicas"])),
		CompressionType:    v["compression.type"],
		DeleteRetention:    ms("delete.retention.ms"),
		MinCleanableRatio:  ParseFloat(v["min.cleanable.dirty.ratio"]),
		MinCompactionLag:   ms("min.compaction.lag.ms"),
		MaxCompactionLag:   ms("max.compaction.lag.ms"),
	}
}
