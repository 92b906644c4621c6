package partition

import (
	"testing"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/segment"
)

func TestSegmentConfigFromTopicConfig(t *testing.T) {
	eff := config.EffectiveTopic(map[string]string{
		"retention.ms": "0", "retention.bytes": "0", "segment.bytes": "1048576", "segment.ms": "60000",
		"samsa.flush.policy": "always", "message.timestamp.type": "LogAppendTime", "flush.ms": "250",
	}, config.Layers{})
	c := SegmentConfig(config.ParseTopic(eff))
	if c.RetentionMs != 1 || c.RetentionBytes != 1 {
		t.Errorf("zero retention must mean immediately, not segment's default: %d %d", c.RetentionMs, c.RetentionBytes)
	}
	if c.SegmentBytes != 1048576 || c.SegmentMs != 60000 || c.FlushPolicy != segment.FlushAlways || !c.LogAppendTime || c.FlushIntervalMs != 250 {
		t.Errorf("%+v", c)
	}
	// Defaults: Kafka's "never" values stay representable as timers.
	d := SegmentConfig(config.ParseTopic(config.EffectiveTopic(nil, config.Layers{})))
	if d.RetentionMs != 604800000 || d.RetentionBytes != -1 || d.FlushPolicy != segment.FlushGroup || d.FlushIntervalMs != maxTimerMs || d.MaxMessageBytes != 1048588 {
		t.Errorf("defaults %+v", d)
	}
	if r := SegmentConfig(config.ParseTopic(config.EffectiveTopic(map[string]string{"retention.ms": "-1"}, config.Layers{}))); r.RetentionMs != -1 {
		t.Errorf("unlimited retention %d", r.RetentionMs)
	}
}
