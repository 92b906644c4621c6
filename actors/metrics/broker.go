package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Broker is one broker's metrics: its registry and the hot-path counters
// the broker's code writes into.
type Broker struct {
	reg      *prometheus.Registry
	requests requestMetrics
	errors   errorCounts
	flushes  flushMetrics
	txns     txnMetrics
}

// New returns a broker's metrics with the request, error and flush
// metrics registered, and the Go runtime's and process's collectors (as
// Kafka's JVM exports its own). Watch adds the scrape-time collectors.
func New() *Broker {
	b := &Broker{reg: prometheus.NewRegistry()}
	b.requests.init(b.reg)
	b.reg.MustRegister(&errorCollector{counts: &b.errors})
	b.flushes.init(b.reg)
	b.txns.init(b.reg)
	b.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return b
}

// Registry is the broker's registry, which /metrics serves (promhttp).
func (b *Broker) Registry() *prometheus.Registry { return b.reg }

// Register adds collectors (the wiring's network collector, a plug-in's
// own) to the broker's registry.
func (b *Broker) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := b.reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
