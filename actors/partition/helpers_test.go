package partition

import (
	"testing"
	"time"

	"github.com/samsa-io/samsa/actors/config"
)

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
