package sharegroup

import (
	"testing"
	"time"
)

// TestByDuration reads share.auto.offset.reset's by_duration values in
// Java's Duration.parse form, and refuses what is not one.
func TestByDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"by_duration:PT1H":        time.Hour,
		"by_duration:P1D":         24 * time.Hour,
		"by_duration:P2DT3H4M":    51*time.Hour + 4*time.Minute,
		"by_duration:PT1.5S":      1500 * time.Millisecond,
		"by_duration:pt10m":       10 * time.Minute,
		"by_duration:PT0S":        0,
		"by_duration:P1DT0.25S":   24*time.Hour + 250*time.Millisecond,
		"by_duration: PT30M ":     30 * time.Minute,
		"by_duration:PT1,5S":      1500 * time.Millisecond,
		"by_duration:P0DT0H0M10S": 10 * time.Second,
	} {
		if got, ok := byDuration(in); !ok || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"latest", "earliest", "by_duration:", "by_duration:1H", "by_duration:PT1D", "by_duration:P1H", "by_duration:PTS", "by_duration:P-1D"} {
		if got, ok := byDuration(in); ok {
			t.Errorf("%q read as %v", in, got)
		}
	}
}

// TestGroupSettingsSet: each config lands in its setting; a value that
// does not parse keeps the broker's.
func TestGroupSettingsSet(t *testing.T) {
	s := groupSettings{reset: "latest", limits: DefaultLimits, sessionTimeout: 45 * time.Second, heartbeatInterval: 5 * time.Second}
	for _, kv := range [][2]string{
		{"share.auto.offset.reset", " Earliest"}, {"share.record.lock.duration.ms", "16000"}, {"share.delivery.count.limit", "3"},
		{"share.session.timeout.ms", "50000"}, {"share.heartbeat.interval.ms", "6000"}, {"share.session.timeout.ms", "soon"},
	} {
		s.set(kv[0], kv[1])
	}
	want := groupSettings{reset: "earliest", limits: Limits{LockDuration: 16 * time.Second, DeliveryLimit: 3, MaxInFlight: DefaultLimits.MaxInFlight},
		sessionTimeout: 50 * time.Second, heartbeatInterval: 6 * time.Second}
	if s != want {
		t.Fatalf("%+v, want %+v", s, want)
	}
}
