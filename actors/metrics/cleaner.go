package metrics

import "github.com/prometheus/client_golang/prometheus"

// CleanerStats are the log cleaner's totals since the broker started
// (actors/cleaner's Stats, copied by the broker).
type CleanerStats struct {
	Cleanings, BytesRead, BytesWritten, Failures int64
}

var (
	cleaningsDesc    = desc("kafka_log_logcleaner_cleanings_total", "Cleanings (compactions) of a log that finished.")
	cleanerReadDesc  = desc("kafka_log_logcleaner_bytes_read_total", "Bytes of the segments the cleaner rewrote.")
	cleanerWriteDesc = desc("kafka_log_logcleaner_bytes_written_total", "Bytes of the cleaned segments it wrote.")
	cleanerFailDesc  = desc("kafka_log_logcleanermanager_failures_total", "Cleanings that failed (the partition is tried again later; Kafka marks it uncleanable).")
	recopyDesc       = desc("kafka_log_logcleaner_cleaner_recopy_percent", "Bytes written as a percentage of bytes read, over every cleaning so far (Kafka's cleaner-recopy-percent is the last cleaning's).")
)

// WatchCleaner registers a collector that reads the cleaner's totals when
// scraped.
func (b *Broker) WatchCleaner(stats func() CleanerStats) {
	b.reg.MustRegister(&cleanerCollector{stats: stats})
}

type cleanerCollector struct{ stats func() CleanerStats }

func (c *cleanerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cleaningsDesc, cleanerReadDesc, cleanerWriteDesc, cleanerFailDesc, recopyDesc} {
		ch <- d
	}
}

func (c *cleanerCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	for _, f := range []struct {
		d *prometheus.Desc
		v int64
	}{{cleaningsDesc, s.Cleanings}, {cleanerReadDesc, s.BytesRead}, {cleanerWriteDesc, s.BytesWritten}, {cleanerFailDesc, s.Failures}} {
		ch <- prometheus.MustNewConstMetric(f.d, prometheus.CounterValue, float64(f.v))
	}
	if s.BytesRead > 0 {
		ch <- prometheus.MustNewConstMetric(recopyDesc, prometheus.GaugeValue, 100*float64(s.BytesWritten)/float64(s.BytesRead))
	}
}
