package bench

import (
	"testing"
	"time"
)

// Records share a tick of at least minPacerTick; a rate slow enough gives
// each record its own.
func TestPacerIntendedTimes(t *testing.T) {
	t0 := time.Unix(100, 0)
	fast := newPacer(t0, 50*time.Microsecond) // 20,000 records/s
	for i, want := range map[int64]time.Duration{0: 0, 4: 0, 5: 250 * time.Microsecond, 9: 250 * time.Microsecond, 10: 500 * time.Microsecond, 20000: time.Second} {
		if got := fast.intended(i).Sub(t0); got != want {
			t.Errorf("20k/s: record %d intended at +%v, want +%v", i, got, want)
		}
	}
	slow := newPacer(t0, time.Millisecond)
	for i := int64(0); i < 5; i++ {
		if got := slow.intended(i).Sub(t0); got != time.Duration(i)*time.Millisecond {
			t.Errorf("1k/s: record %d intended at +%v", i, got)
		}
	}
}

// wait never returns before the intended time.
func TestPacerNeverEarly(t *testing.T) {
	p := newPacer(time.Now(), 100*time.Microsecond)
	for i := int64(0); i < 30; i++ {
		at := p.wait(i)
		if now := time.Now(); now.Before(at) {
			t.Fatalf("record %d: returned %v before its intended time", i, at.Sub(now))
		}
	}
}
