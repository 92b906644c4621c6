package wiring

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/samsa-io/samsa/actors/metrics"
)

// mountMetrics serves the broker's Prometheus metrics on /metrics, adds
// the network layer's figures to them, and makes /readyz also wait for
// the broker to catch up with the cluster (actors.Broker.CaughtUp).
// Nothing when no HTTP listener is configured.
func mountMetrics(n *Node, logger *slog.Logger) {
	if n.Web == nil {
		return
	}
	m := n.Broker.Metrics()
	srv := n.Server
	m.WatchNetwork(func() metrics.NetStats {
		s := srv.Stats()
		return metrics.NetStats{ConnectionsByListener: srv.ConnectionsByListener(), ConnectionsAccepted: s.ConnectionsAccepted,
			ConnectionsRefused: s.ConnectionsRefused, Requests: s.Requests, Responses: s.Responses,
			BytesWritten: s.BytesWritten, BytesSendfile: s.BytesSendfile, DecodeErrors: s.DecodeErrors,
			FramesRejected: s.FramesRejected, Mutes: s.Mutes, LoopBusy: srv.LoopBusy(), EventLoops: srv.EventLoops()}
	})
	n.Web.Handle("GET /metrics", promhttp.HandlerFor(m.Registry(), promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError, // a failing collector leaves the others' figures served
	}))
	n.Web.AddReadyCheck(n.Broker.CaughtUp)
}
