package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// errorAPIs are the APIs whose per-partition errors are counted (Kafka
// counts them for every API; Produce and Fetch are the ones operators
// watch), by their index in errorCounts.
var errorAPIs = [...]int16{0, 1} // Produce, Fetch

// maxCode bounds the error codes counted; Kafka's run below 130.
const maxCode = 256

// errorCounts are Kafka's ErrorsPerSec for Produce and Fetch: atomic
// counters by API and error code, read at scrape time, so counting an
// error costs one atomic add.
type errorCounts struct {
	n [len(errorAPIs)][maxCode]atomic.Uint64
}

// CountError counts one partition (or request) answered with code by
// Produce (key 0) or Fetch (key 1); other APIs and NONE are not counted.
// A nil Broker counts nothing.
func (b *Broker) CountError(apiKey int16, code kerr.Code) {
	if b == nil || code == kerr.None || code < 0 || int(code) >= maxCode {
		return
	}
	for i, k := range errorAPIs {
		if k == apiKey {
			b.errors.n[i][code].Add(1)
			return
		}
	}
}

var errorsDesc = prometheus.NewDesc("kafka_network_requestmetrics_errors_total",
	"Partitions (or whole requests) answered with an error, by API and Kafka error code name (Kafka's ErrorsPerSec).",
	[]string{"request", "error"}, nil)

// errorCollector exposes the error counts that are not zero.
type errorCollector struct{ counts *errorCounts }

func (c *errorCollector) Describe(ch chan<- *prometheus.Desc) { ch <- errorsDesc }

func (c *errorCollector) Collect(ch chan<- prometheus.Metric) {
	for i, key := range errorAPIs {
		for code := range c.counts.n[i] {
			if v := c.counts.n[i][code].Load(); v > 0 {
				ch <- prometheus.MustNewConstMetric(errorsDesc, prometheus.CounterValue, float64(v),
					wire.APIName(key), kerr.Code(code).String())
			}
		}
	}
}
