package quota

import (
	"testing"
	"time"
)

var t0 = time.Unix(1_000_000, 0)

// A young rate spans at least Num-1 windows: 1000 bytes at once against a
// bound of 50 B/s over 10 s is 100 B/s, so the excess 500 bytes take 10 s
// at the bound.
func TestThrottleYoungRate(t *testing.T) {
	r := newRate(DefaultWindow)
	r.record(1000, t0)
	total, span := r.measure(t0)
	if total != 1000 || span != 10 {
		t.Fatalf("measure = %v over %v s, want 1000 over 10 s", total, span)
	}
	if d := throttle(total, span, 50, 0); d != 10*time.Second {
		t.Fatalf("throttle = %v, want 10s", d)
	}
	if d := throttle(total, span, 100, 0); d != 0 {
		t.Fatalf("throttle at the bound = %v, want 0", d)
	}
}

// A byte rate's throttle is what the excess takes at the quota however
// long; a bounded one (request time) stops at its limit.
func TestThrottleLimit(t *testing.T) {
	if d := throttle(1010000, 10, 1000, 0); d != 1000*time.Second {
		t.Fatalf("throttle = %v, want 1000s", d)
	}
	if d := throttle(1e6, 10, 1000, time.Second); d != time.Second {
		t.Fatalf("bounded throttle = %v, want 1s", d)
	}
	if d := throttle(1, 10, 0, time.Second); d != time.Second {
		t.Fatalf("zero quota: throttle = %v, want the limit", d)
	}
	if d := throttle(0, 10, 0, 0); d != 0 {
		t.Fatalf("zero quota, nothing recorded: throttle = %v", d)
	}
}

// Samples older than the whole window stop counting, and the span grows
// past Num-1 windows only once the samples cover that much time.
func TestRateSlides(t *testing.T) {
	r := newRate(DefaultWindow)
	for i := range 20 {
		r.record(100, t0.Add(time.Duration(i)*time.Second))
	}
	now := t0.Add(19*time.Second + 500*time.Millisecond)
	total, span := r.measure(now)
	// Samples started at 9..19 s are within 11 s of 19.5 s; the one at
	// 8 s is 11.5 s old. Live: 9..19 = 11 samples, oldest 10.5 s ago.
	if total != 1100 || span != 10.5 {
		t.Fatalf("measure = %v over %v s, want 1100 over 10.5 s", total, span)
	}
	total, _ = r.measure(now.Add(time.Minute))
	if total != 0 {
		t.Fatalf("after a minute idle total = %v, want 0", total)
	}
}

// A client that waits out each throttle is held to its quota: simulate a
// producer that sends 10 KiB, waits as told, and repeats, for a minute of
// fake time against a 4 KiB/s quota.
func TestThrottleHoldsRate(t *testing.T) {
	m := NewManager(Configs{{User: Named("alice")}: {KeyProducerByteRate: 4096}}, nil, DefaultWindow, nil)
	now, sent := t0, 0.0
	for now.Sub(t0) < time.Minute {
		d := m.Record(Produce, "User:alice", "app", 10240, now)
		sent += 10240
		now = now.Add(d + time.Millisecond)
	}
	got := sent / now.Sub(t0).Seconds()
	if got < 4096*0.8 || got > 4096*1.3 {
		t.Fatalf("achieved %.0f B/s against a quota of 4096 B/s", got)
	}
	if d := m.Record(Produce, "User:bob", "app", 1e9, now); d != 0 {
		t.Fatalf("bob has no quota, throttled %v", d)
	}
	if d := m.Record(Fetch, "User:alice", "app", 1e9, now); d != 0 {
		t.Fatalf("alice has no fetch quota, throttled %v", d)
	}
}
