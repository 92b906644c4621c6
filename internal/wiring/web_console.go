package wiring

import (
	"log/slog"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/web/console"
)

// consoleListenerPreference is the order the console picks the broker's
// listener to talk to: a SASL listener first, so that when security is on
// the console signs users in and runs as them (their ACLs apply), and
// plaintext before TLS, which is only the same bytes encrypted on
// loopback.
var consoleListenerPreference = []string{"SASL_PLAINTEXT", "SASL_SSL", "PLAINTEXT", "SSL"}

// mountConsole mounts the web console at / on the HTTP side, as a Kafka
// client of one of this broker's own listeners. Nothing when there is no
// HTTP side.
func mountConsole(node *Node, cfg *config.Broker, logger *slog.Logger) {
	if node.Web == nil {
		return
	}
	l, ok := node.LocalListener(cfg, consoleListenerPreference...)
	if !ok {
		logger.Warn("web console off: the broker has no listener it can use")
		return
	}
	opts := console.Options{
		Seeds:      []string{l.Addr},
		TLS:        l.TLS,
		Mechanisms: l.Mechanisms,
		ReadOnly:   config.ParseBool(cfg.Value(config.KeyConsoleReadOnly)),
		Logger:     logger.With("component", "console"),
	}
	if node.schemaRegistry != nil {
		opts.Schemas = node.schemaRegistry
	}
	node.Web.Handle("/", console.New(opts))
	logger.Info("web console mounted", "listener", l.Name, "read_only", opts.ReadOnly, "sign_in", len(opts.Mechanisms) > 0)
}
