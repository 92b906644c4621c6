package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// flushMetrics are the logs' group commits: how long each flush's
// fsyncs took (Kafka's kafka.log:type=LogFlushStats,name=LogFlushRateAndTimeMs)
// and how many waiting appends each acknowledged (samsa's own: Kafka has
// no group commit).
type flushMetrics struct {
	took  prometheus.Histogram
	batch prometheus.Histogram
}

func (m *flushMetrics) init(reg *prometheus.Registry) {
	m.took = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "kafka", Subsystem: "log", Name: "logflushstats_logflush_seconds",
		Help:    "Time the fsyncs of one log flush (group commit) took (Kafka's LogFlushRateAndTimeMs).",
		Buckets: prometheus.ExponentialBuckets(0.00005, 2, 18),
	})
	m.batch = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "samsa", Subsystem: "log", Name: "groupcommit_batch_size",
		Help:    "Appends waiting for durability that one flush acknowledged (the group-commit batch; 0 for a flush nobody waited for).",
		Buckets: []float64{0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512},
	})
	reg.MustRegister(m.took, m.batch)
}

// OnFlush observes one flush (segment.Options.OnFlush). A nil Broker
// observes nothing.
func (b *Broker) OnFlush(took time.Duration, acknowledged int) {
	if b == nil {
		return
	}
	b.flushes.took.Observe(took.Seconds())
	b.flushes.batch.Observe(float64(acknowledged))
}
