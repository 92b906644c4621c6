package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// txnMetrics are the transaction coordinators' figures. Kafka exports
// none of these by name (its coordinator has only partition-load-time),
// so they are samsa's: transactions ended by outcome, counted when every
// partition has its marker (a transaction left prepared by a previous
// coordinator and finished by this one counts here), and the time from
// the prepare record being durable to the last marker written.
type txnMetrics struct {
	commits, aborts prometheus.Counter
	markers         prometheus.Observer
}

func (m *txnMetrics) init(reg *prometheus.Registry) {
	ended := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "samsa", Subsystem: "transaction", Name: "ended_total",
		Help: "Transactions completed by this broker's coordinators, by outcome (commit or abort; timeouts abort), counted once every partition has its marker.",
	}, []string{"outcome"})
	markers := prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "samsa", Subsystem: "transaction", Name: "marker_seconds",
		Help:    "Time from a transaction's prepare record being durable to every partition having its COMMIT or ABORT marker (Kafka's TransactionMarkerChannelManager round trips).",
		Buckets: latencyBuckets,
	})
	reg.MustRegister(ended, markers)
	m.commits, m.aborts, m.markers = ended.WithLabelValues("commit"), ended.WithLabelValues("abort"), markers
}

// TxnEnded records a transaction whose markers are all written, took
// after its prepare record. Safe from any goroutine; a nil Broker records
// nothing.
func (b *Broker) TxnEnded(commit bool, took time.Duration) {
	if b == nil {
		return
	}
	if commit {
		b.txns.commits.Inc()
	} else {
		b.txns.aborts.Inc()
	}
	b.txns.markers.Observe(took.Seconds())
}

var txnOpenDesc = desc("samsa_transaction_open",
	"Transactions open on this broker's coordinators, by state (ongoing, prepare_commit, prepare_abort).", "state")

// TxnStates counts the open transactions by state for a scrape; ok is
// false when the coordinators did not answer in time (the series is left
// out of that scrape).
type TxnStates struct {
	Ongoing, PrepareCommit, PrepareAbort int
}

// WatchTransactions registers a collector of the open transactions,
// asked of the coordinators when scraped.
func (b *Broker) WatchTransactions(states func() (TxnStates, bool)) {
	b.reg.MustRegister(&txnCollector{states: states})
}

type txnCollector struct{ states func() (TxnStates, bool) }

func (c *txnCollector) Describe(ch chan<- *prometheus.Desc) { ch <- txnOpenDesc }

func (c *txnCollector) Collect(ch chan<- prometheus.Metric) {
	s, ok := c.states()
	if !ok {
		return
	}
	for state, n := range map[string]int{"ongoing": s.Ongoing, "prepare_commit": s.PrepareCommit, "prepare_abort": s.PrepareAbort} {
		ch <- prometheus.MustNewConstMetric(txnOpenDesc, prometheus.GaugeValue, float64(n), state)
	}
}
