package quota

import "time"

// Window is the sampled rate's shape: Num samples of Size each (Kafka's
// quota.window.num and quota.window.size.seconds).
type Window struct {
	Num  int
	Size time.Duration
}

// DefaultWindow is Kafka's default: 11 samples of one second.
var DefaultWindow = Window{Num: 11, Size: time.Second}

// rate is a sampled rate as Kafka's Rate measures it: the values of the
// last Num windows over the time they span, where that time is at least
// Num-1 whole windows (so a young rate is not inflated by a short
// elapsed time).
type rate struct {
	w      Window
	starts []time.Time // sample start; zero: unused or purged
	values []float64
	cur    int
}

func newRate(w Window) *rate {
	return &rate{w: w, starts: make([]time.Time, w.Num), values: make([]float64, w.Num)}
}

// record adds v at now, opening a new sample when the current one is a
// whole window old.
func (r *rate) record(v float64, now time.Time) {
	if r.starts[r.cur].IsZero() {
		r.starts[r.cur] = now
	} else if now.Sub(r.starts[r.cur]) >= r.w.Size {
		r.cur = (r.cur + 1) % len(r.starts)
		r.starts[r.cur], r.values[r.cur] = now, 0
	}
	r.values[r.cur] += v
}

// measure returns the total of the live samples and the time they span
// (seconds), after dropping samples older than the whole window.
func (r *rate) measure(now time.Time) (total, span float64) {
	horizon := time.Duration(r.w.Num) * r.w.Size
	oldest := now
	for i, s := range r.starts {
		if s.IsZero() {
			continue
		}
		if now.Sub(s) >= horizon {
			r.starts[i], r.values[i] = time.Time{}, 0
			continue
		}
		total += r.values[i]
		if s.Before(oldest) {
			oldest = s
		}
	}
	elapsed := now.Sub(oldest)
	if full, min := int(elapsed/r.w.Size), r.w.Num-1; full < min {
		elapsed += time.Duration(min-full) * r.w.Size
	}
	return total, elapsed.Seconds()
}

// throttle is how long a client whose rate is measured by total over span
// must wait for it to fall back to bound: Kafka's (rate-bound)/bound times
// the span, that is the time the excess takes at the bound. Zero within
// the quota. limit (0: none) bounds it: Kafka bounds the request-time
// quota's throttle by one window and leaves the byte rates' unbounded
// (a large request must be paid for in full, or the rate would exceed
// the quota).
func throttle(total, span, bound float64, limit time.Duration) time.Duration {
	r := total / span
	if r <= bound {
		return 0
	}
	if bound <= 0 {
		bound = 1e-9 // a zero quota holds the client as long as it may
	}
	d := time.Duration(min((r-bound)/bound*span, 1e6) * float64(time.Second))
	if limit > 0 {
		d = min(d, limit)
	}
	return d
}
