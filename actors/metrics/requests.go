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
	// Fetch is also counted as Kafka splits it: FetchConsumer and
	// FetchFollower (index 0 and 1).
	fetchTotal   [2]prometheus.Counter
	fetchLatency [2]prometheus.Observer
}

// fetchKey is Fetch's API key.
const fetchKey = 1

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
	for i, name := range []string{"FetchConsumer", "FetchFollower"} {
		m.fetchTotal[i] = total.WithLabelValues(name)
		m.fetchLatency[i] = latency.WithLabelValues(name)
	}
}

// fetchKind is 1 for a follower's fetch, 0 for a consumer's.
func fetchKind(req *wire.Request) int {
	f, ok := req.Body.(*kmsg.FetchRequest)
	if !ok {
		return 0
	}
	replica := f.ReplicaID
	if f.Version >= 15 {
		replica = f.ReplicaState.ID // KIP-903
	}
	if replica >= 0 {
		return 1
	}
	return 0
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
	if key == fetchKey {
		kind := fetchKind(req)
		b.requests.fetchTotal[kind].Inc()
		byKind := b.requests.fetchLatency[kind]
		req.Reply = func(r *wire.Response) {
			took := time.Since(start).Seconds()
			latency.Observe(took)
			byKind.Observe(took)
			reply(r)
		}
		return
	}
	req.Reply = func(r *wire.Response) {
		latency.Observe(time.Since(start).Seconds())
		reply(r)
	}
}
