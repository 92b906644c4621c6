package replica

import (
	"testing"
	"time"
)

func TestThrottleNamesPartitionsOfThisBroker(t *testing.T) {
	th := NewThrottle(false, 2, nil)
	th.BrokerConfigs(false, map[string]string{"follower.replication.throttled.rate": "1000"})
	th.TopicConfigs("t", map[string]string{"follower.replication.throttled.replicas": "0:1, 1:2,3:2", "leader.replication.throttled.replicas": "*"})
	for p, want := range map[int32]bool{0: false, 1: true, 2: false, 3: true} {
		if got := th.Throttled("t", p); got != want {
			t.Errorf("t-%d throttled %v, want %v", p, got, want)
		}
	}
	lead := NewThrottle(true, 2, nil)
	lead.BrokerConfigs(true, map[string]string{"leader.replication.throttled.rate": "1000"})
	lead.TopicConfigs("t", map[string]string{"leader.replication.throttled.replicas": "*"})
	if !lead.Throttled("t", 7) {
		t.Error(`"*" does not throttle every partition`)
	}
	lead.TopicConfigs("t", nil)
	if lead.Throttled("t", 7) {
		t.Error("still throttled once the config is gone")
	}
}

// The rate is a token bucket: a second's worth may go at once, then the
// quota is exceeded until time pays the debt back; this broker's rate
// wins over the cluster default's, and no rate is no throttle.
func TestThrottleRate(t *testing.T) {
	now := time.Unix(1000, 0)
	th := NewThrottle(true, 1, func() time.Time { return now })
	th.TopicConfigs("t", map[string]string{"leader.replication.throttled.replicas": "0:1"})
	if th.Hold("t", 0, false) {
		t.Fatal("held with no rate set")
	}
	th.BrokerConfigs(true, map[string]string{"leader.replication.throttled.rate": "500"})
	th.BrokerConfigs(false, map[string]string{"leader.replication.throttled.rate": "1000"})
	th.Record(900)
	if th.Exceeded() {
		t.Fatal("exceeded within the first second's worth")
	}
	th.Record(600)
	if !th.Hold("t", 0, false) {
		t.Fatal("not held after 1500 bytes at 1000/s")
	}
	if th.Hold("t", 0, true) {
		t.Fatal("an in-sync replica was held")
	}
	now = now.Add(400 * time.Millisecond)
	if !th.Exceeded() {
		t.Fatal("400 ms paid back all of the 500 bytes of debt")
	}
	now = now.Add(200 * time.Millisecond)
	if th.Exceeded() {
		t.Fatal("still exceeded once 600 ms paid the debt back")
	}
	// Without this broker's own rate the default's (500/s) is in force,
	// with a bucket of its own.
	th.BrokerConfigs(false, map[string]string{})
	th.Record(400)
	if th.Exceeded() {
		t.Fatal("exceeded within the default's second")
	}
	th.Record(200)
	if !th.Exceeded() {
		t.Fatal("not exceeded past the default's second")
	}
	th.BrokerConfigs(true, map[string]string{})
	if th.Throttled("t", 0) || th.Exceeded() {
		t.Fatal("throttled with no rate")
	}
}
