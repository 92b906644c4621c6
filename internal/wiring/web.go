package wiring

import (
	"errors"
	"log/slog"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/web"
)

// errSessionExpired is the readiness while a cluster broker is out of the
// cluster: its ZooKeeper session expired and it has not registered again.
var errSessionExpired = errors.New("the ZooKeeper session expired; registering again")

// errShuttingDown is the readiness from the moment Stop begins.
var errShuttingDown = errors.New("shutting down")

// startWeb starts the HTTP listeners of samsa.http.listeners, if any,
// before the logs open: /healthz answers and /readyz says "starting"
// during a long recovery, so an orchestrator neither kills nor routes to
// a broker that is still opening. Nil when no listener is configured.
func startWeb(cfg *config.Broker, logger *slog.Logger) (*web.Server, error) {
	addrs := config.ParseList(cfg.Value(config.KeyHTTPListeners))
	if len(addrs) == 0 {
		return nil, nil
	}
	w := web.New(addrs, logger)
	if err := w.Start(); err != nil {
		return nil, err
	}
	return w, nil
}
