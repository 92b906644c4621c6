package bench

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency is a concurrency-safe HDR histogram of durations, recorded in
// microseconds from 1 µs to 1 minute with 3 significant digits.
type Latency struct {
	mu sync.Mutex
	h  *hdrhistogram.Histogram
}

// NewLatency returns an empty histogram.
func NewLatency() *Latency {
	return &Latency{h: hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)}
}

// Record adds one observation; values past the range are clamped to it.
func (l *Latency) Record(d time.Duration) {
	us := d.Microseconds()
	if us < 1 {
		us = 1
	}
	l.mu.Lock()
	if l.h.RecordValue(us) != nil {
		_ = l.h.RecordValue(l.h.HighestTrackableValue())
	}
	l.mu.Unlock()
}

// Summary is a histogram's percentiles, in milliseconds.
type Summary struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p999_ms"`
	Max   float64 `json:"max_ms"`
	Mean  float64 `json:"mean_ms"`
}

// Summary returns the histogram's percentiles.
func (l *Latency) Summary() Summary {
	l.mu.Lock()
	defer l.mu.Unlock()
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Summary{
		Count: l.h.TotalCount(),
		P50:   ms(l.h.ValueAtQuantile(50)),
		P99:   ms(l.h.ValueAtQuantile(99)),
		P999:  ms(l.h.ValueAtQuantile(99.9)),
		Max:   ms(l.h.Max()),
		Mean:  l.h.Mean() / 1000,
	}
}
