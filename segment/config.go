package segment

import (
	"fmt"
	"time"
)

// FlushPolicy says when appended data is fsynced and when an append is
// acknowledged as durable.
type FlushPolicy int

const (
	// FlushGroup (the default) acknowledges an append once an fsync that
	// started after it has completed. fsyncs are group-committed: one
	// covers every append before it, so concurrent producers share them.
	FlushGroup FlushPolicy = iota
	// FlushAlways fsyncs inside every Append before it returns.
	FlushAlways
	// FlushInterval fsyncs at most FlushIntervalMs after an append
	// (Kafka's flush.ms) and acknowledges without waiting for it.
	FlushInterval
	// FlushNever leaves writeback to the operating system (Kafka's
	// default); segments are still fsynced when rolled and on Close.
	FlushNever
)

var flushPolicyNames = [...]string{"group", "always", "interval", "never"}

func (p FlushPolicy) String() string {
	if p >= 0 && int(p) < len(flushPolicyNames) {
		return flushPolicyNames[p]
	}
	return fmt.Sprintf("FlushPolicy(%d)", int(p))
}

// ParseFlushPolicy reads "always", "group", "interval" or "never".
func ParseFlushPolicy(s string) (FlushPolicy, error) {
	for i, n := range flushPolicyNames {
		if n == s {
			return FlushPolicy(i), nil
		}
	}
	return 0, fmt.Errorf("segment: unknown flush policy %q (want always, group, interval or never)", s)
}

// acksWithoutSync reports whether the policy acknowledges appends before
// they are fsynced.
func (p FlushPolicy) acksWithoutSync() bool { return p == FlushInterval || p == FlushNever }

// Defaults, as in Kafka.
const (
	DefaultSegmentBytes       = 1 << 30                 // segment.bytes
	DefaultSegmentMs          = 7 * 24 * 60 * 60 * 1000 // segment.ms
	DefaultRetentionMs        = 7 * 24 * 60 * 60 * 1000 // retention.ms
	DefaultIndexIntervalBytes = 4096                    // index.interval.bytes
	DefaultSegmentIndexBytes  = 10 << 20                // segment.index.bytes
	DefaultMaxMessageBytes    = 1<<20 + 12              // max.message.bytes
	DefaultFlushIntervalMs    = 1000                    // flush.ms (for FlushInterval)
	Unlimited                 = -1                      // for RetentionMs and RetentionBytes
)

// Config is one log's configuration, under Kafka's topic config names. A
// zero field means the default; RetentionMs and RetentionBytes take
// Unlimited (-1) for "keep forever". Change it on a live log with
// Log.SetConfig.
type Config struct {
	SegmentBytes       int64       // segment.bytes: roll when the active segment would exceed it
	SegmentMs          int64       // segment.ms: roll when the active segment's first batch is this old
	RetentionMs        int64       // retention.ms: delete closed segments whose newest timestamp is older (default 7 days)
	RetentionBytes     int64       // retention.bytes: delete the oldest closed segments while the log is larger (default Unlimited)
	IndexIntervalBytes int32       // index.interval.bytes: bytes between offset-index entries
	SegmentIndexBytes  int32       // segment.index.bytes: roll when an index would exceed it
	MaxMessageBytes    int32       // max.message.bytes: the largest record batch accepted
	FlushPolicy        FlushPolicy // always | group (default) | interval | never
	FlushIntervalMs    int64       // flush.ms: the fsync delay under FlushInterval
	LogAppendTime      bool        // message.timestamp.type=LogAppendTime: the broker stamps batches
}

// DefaultConfig is Kafka's defaults with the group flush policy.
func DefaultConfig() Config { return Config{}.withDefaults() }

func (c Config) withDefaults() Config {
	if c.SegmentBytes <= 0 {
		c.SegmentBytes = DefaultSegmentBytes
	}
	if c.SegmentMs <= 0 {
		c.SegmentMs = DefaultSegmentMs
	}
	if c.RetentionMs == 0 {
		c.RetentionMs = DefaultRetentionMs
	}
	if c.RetentionBytes == 0 {
		c.RetentionBytes = Unlimited
	}
	if c.IndexIntervalBytes <= 0 {
		c.IndexIntervalBytes = DefaultIndexIntervalBytes
	}
	if c.SegmentIndexBytes < 2*timeEntrySize {
		c.SegmentIndexBytes = DefaultSegmentIndexBytes
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.FlushIntervalMs <= 0 {
		c.FlushIntervalMs = DefaultFlushIntervalMs
	}
	return c
}

// Clock is the time source for the timers the package arms (the
// FlushInterval fsync). Everything else takes the time as an argument.
type Clock interface {
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface{ Stop() bool }

type systemClock struct{}

func (systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
