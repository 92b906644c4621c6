package plugin

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metricsFor is the registerer a plug-in's metrics go to: the host's, with
// the plug-in's name as a constant label, so two plug-ins' series with one
// name do not collide.
func (h *Host) metricsFor(name string) prometheus.Registerer {
	return prometheus.WrapRegistererWith(prometheus.Labels{"plugin": name}, h.opts.Metrics)
}

// registerStats publishes a plug-in's counters: samsa_plugin_records_handled_total
// and samsa_plugin_restarts_total, labelled with its name.
func (h *Host) registerStats(name string, st *pluginStats) error {
	reg := h.metricsFor(name)
	handled := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "samsa_plugin_records_handled_total",
		Help: "Records a plug-in's Handle returned nil for; redeliveries after a restart count again."},
		func() float64 { return float64(st.handled.Load()) })
	restarts := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "samsa_plugin_restarts_total",
		Help: "Runs of a plug-in that ended in an error or a panic and were restarted."},
		func() float64 { return float64(st.restarts.Load()) })
	if err := reg.Register(handled); err != nil {
		return err
	}
	return reg.Register(restarts)
}
