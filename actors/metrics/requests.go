package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// requestMetrics are, per API key, Kafka's RequestMetrics: requests
// handled (RequestsPerSec) and their total time (TotalTimeMs), resolved
// when the broker starts so that a request costs an array index.
type requestMetrics struct {
	total   [kmsg.MaxKey + 1]prometheus.Counter
	latency [kmsg.MaxKey + 1]prometheus.Observer
}

// latencyBuckets run from 100µs to about 26s, doubling: a produce that
// waits for fsync, a fetch parked for max.wait.ms and a quick metadata
// request all land in a bucket that tells them apart.
var latencyBuckets = prometheus.ExponentialBuckets(0.0001, 2, 19)

func (m *requestMetrics) init(reg *prometheus.Registry) {
	total := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "kafka", Subsystem: "network", Name: "requestmetrics_requests_total",
		Help: "Requests handled, by API (Kafka's kafka.network:type=RequestMetrics,name=RequestsPerSec).",
	}, []string{"request"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "kafka", Subsystem: "network", Name: "requestmetrics_totaltime_seconds",
		Help:    "Time from a request's arrival at the broker to its response being handed to the network, by API (Kafka's TotalTimeMs).",
		Buckets: latencyBuckets,
	}, []string{"request"})
	reg.MustRegister(total, latency)
	for key := range int16(kmsg.MaxKey + 1) {
		name := wire.APIName(key)
		if name == "" || name == "Unknown" {
			continue
		}
		m.total[key] = total.WithLabelValues(name)
		m.latency[key] = latency.WithLabelValues(name)
	}
}

// Track counts req and observes its total time when it is answered: it
// wraps req.Reply, so call it before the request is handed on. A nil
// Broker tracks nothing.
func (b *Broker) Track(req *wire.Request) {
	if b == nil {
		return
	}
	key := req.Header.APIKey
	if key < 0 || int(key) >= len(b.requests.total) || b.requests.total[key] == nil {
		return
	}
	b.requests.total[key].Inc()
	latency, reply, start := b.requests.latency[key], req.Reply, time.Now()
	req.Reply = func(r *wire.Response) {
		latency.Observe(time.Since(start).Seconds())
		reply(r)
	}
}
