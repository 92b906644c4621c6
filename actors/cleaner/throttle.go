package cleaner

import (
	"sync"
	"time"
)

// throttle holds the cleaners, together, to log.cleaner.io.max.bytes.per.second
// as Kafka's Throttler does: it counts the bytes read and written and,
// when they run ahead of the rate since the last check, sleeps the
// calling worker until they no longer do.
type throttle struct {
	rate float64 // bytes per second; 0: unlimited
	now  func() time.Time

	mu    sync.Mutex
	start time.Time
	bytes float64
}

// throttleWindow is how often the count starts afresh, so a pause (no
// log to clean) does not bank credit for a burst.
const throttleWindow = time.Second

func newThrottle(rate float64, now func() time.Time) *throttle {
	if rate <= 0 || rate > 1e15 {
		rate = 0 // Kafka's default, Double.MAX_VALUE, means no limit
	}
	return &throttle{rate: rate, now: now}
}

// take accounts for n bytes and sleeps if the cleaners are ahead of the
// rate.
func (t *throttle) take(n int64) {
	if t.rate == 0 {
		return
	}
	t.mu.Lock()
	now := t.now()
	if t.start.IsZero() || now.Sub(t.start) > throttleWindow {
		t.start, t.bytes = now, 0
	}
	t.bytes += float64(n)
	ahead := time.Duration(t.bytes/t.rate*float64(time.Second)) - now.Sub(t.start)
	t.mu.Unlock()
	if ahead > 0 {
		time.Sleep(ahead)
	}
}
