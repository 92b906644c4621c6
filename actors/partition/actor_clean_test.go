package partition

import (
	"testing"
	"time"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/segment"
)

// cleanup.policy=compact alone turns time and size retention off (the
// cleaner removes records, as in Kafka); compact,delete keeps both.
func TestSegmentConfigCompactRetention(t *testing.T) {
	topic := config.Topic{Compact: true, Retention: time.Hour, RetentionBytes: 1 << 20, SegmentBytes: 1 << 20, MaxMessageBytes: 1 << 20}
	if c := SegmentConfig(topic); c.RetentionMs != segment.Unlimited || c.RetentionBytes != segment.Unlimited {
		t.Fatalf("compact: retention %d ms, %d bytes; want none", c.RetentionMs, c.RetentionBytes)
	}
	topic.Delete = true
	if c := SegmentConfig(topic); c.RetentionMs != time.Hour.Milliseconds() || c.RetentionBytes != 1<<20 {
		t.Fatalf("compact,delete: retention %d ms, %d bytes; want the topic's", c.RetentionMs, c.RetentionBytes)
	}
}
