package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// requestMetrics are, per API key, Kafka's RequestMetrics: requests
// handled (RequestsPerSec) and the phases of their time, resolved when
// the broker starts so that a request costs an array index:
//
//   - queue: netloop decoded the frame → the broker's router took it
//     (RequestQueueTimeMs; samsa has no request channel, so this is the
//     event loop's own hand-over and is short unless the loop is busy);
//   - local: the router took it → its response is ready, less remote
//     (LocalTimeMs);
//   - remote: what the handler reports in req.Remote (RemoteTimeMs): a
//     produce from its last partition's append to its last answer
//     (durability, and in a cluster the ISR), a fetch the time it was
//     parked for min_bytes; 0 for the other APIs;
//   - send: response ready → written in full to the socket, or dropped
//     with its connection (ResponseSendTimeMs; includes waiting behind
//     earlier responses of the same connection, which Kafka counts as
//     ResponseQueueTimeMs);
//   - total: decoded → written (TotalTimeMs). An acks=0 produce, which
//     gets no response, ends when it is handled.
type requestMetrics struct {
	total  [kmsg.MaxKey + 1]prometheus.Counter
	phases [kmsg.MaxKey + 1]*phaseObservers
	// Fetch is also counted as Kafka splits it: FetchConsumer and
	// FetchFollower (index 0 and 1).
	fetchTotal  [2]prometheus.Counter
	fetchPhases [2]*phaseObservers
}

// phaseObservers are one API's histograms of the phases of its time.
type phaseObservers struct{ queue, local, remote, send, total prometheus.Observer }

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
	histogram := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "kafka", Subsystem: "network", Name: name, Help: help, Buckets: latencyBuckets,
		}, []string{"request"})
	}
	queue := histogram("requestmetrics_requestqueuetime_seconds",
		"Time from a request's frame being decoded by the network layer to the broker taking it, by API (Kafka's RequestQueueTimeMs).")
	local := histogram("requestmetrics_localtime_seconds",
		"Time from the broker taking a request to its response being ready, less its remote time, by API (Kafka's LocalTimeMs).")
	remote := histogram("requestmetrics_remotetime_seconds",
		"Time a request waited on others: a produce for durability and the ISR after its appends, a fetch parked for min_bytes; by API (Kafka's RemoteTimeMs).")
	send := histogram("requestmetrics_responsesendtime_seconds",
		"Time from a response being ready to its last byte being written, by API (Kafka's ResponseQueueTimeMs plus ResponseSendTimeMs).")
	latency := histogram("requestmetrics_totaltime_seconds",
		"Time from a request's frame being decoded to its response being written, by API (Kafka's TotalTimeMs).")
	reg.MustRegister(total, queue, local, remote, send, latency)
	observers := func(name string) *phaseObservers {
		return &phaseObservers{queue: queue.WithLabelValues(name), local: local.WithLabelValues(name),
			remote: remote.WithLabelValues(name), send: send.WithLabelValues(name), total: latency.WithLabelValues(name)}
	}
	for key := range int16(kmsg.MaxKey + 1) {
		name := wire.APIName(key)
		if name == "" || name == "Unknown" {
			continue
		}
		m.total[key] = total.WithLabelValues(name)
		m.phases[key] = observers(name)
	}
	for i, name := range []string{"FetchConsumer", "FetchFollower"} {
		m.fetchTotal[i] = total.WithLabelValues(name)
		m.fetchPhases[i] = observers(name)
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

// Track counts req and observes the phases of its time (requestMetrics)
// as it is answered and its response written: it wraps req.Reply and the
// response's Done, so call it before the request is handed on. The clock
// is read twice more per request (taken, ready) and once per response
// (written); all of it monotonic. A nil Broker tracks nothing.
func (b *Broker) Track(req *wire.Request) {
	if b == nil {
		return
	}
	key := req.Header.APIKey
	if key < 0 || int(key) >= len(b.requests.total) || b.requests.total[key] == nil {
		return
	}
	b.requests.total[key].Inc()
	phases, byKind := b.requests.phases[key], (*phaseObservers)(nil)
	if key == fetchKey {
		kind := fetchKind(req)
		b.requests.fetchTotal[kind].Inc()
		byKind = b.requests.fetchPhases[kind]
	}
	taken := time.Now()
	decoded := req.Decoded
	if decoded.IsZero() {
		decoded = taken // not from netloop: no queue
	}
	queued := taken.Sub(decoded).Seconds()
	reply := req.Reply
	req.Reply = func(r *wire.Response) {
		ready := time.Now()
		remote := req.Remote // set by the handler before Reply
		local := max(ready.Sub(taken)-remote, 0).Seconds()
		if r == nil { // no response (acks=0): the request ends here
			observePhases(phases, byKind, queued, local, remote.Seconds(), 0, ready.Sub(decoded).Seconds(), false)
			reply(r)
			return
		}
		done := r.Done
		r.Done = func() {
			written := time.Now()
			observePhases(phases, byKind, queued, local, remote.Seconds(), written.Sub(ready).Seconds(), written.Sub(decoded).Seconds(), true)
			if done != nil {
				done()
			}
		}
		reply(r)
	}
}

// observePhases records one request's phases for its API and, for a
// fetch, for its kind too.
func observePhases(api, kind *phaseObservers, queue, local, remote, send, total float64, sent bool) {
	for _, p := range [2]*phaseObservers{api, kind} {
		if p == nil {
			continue
		}
		p.queue.Observe(queue)
		p.local.Observe(local)
		p.remote.Observe(remote)
		if sent {
			p.send.Observe(send)
		}
		p.total.Observe(total)
	}
}
