package samsa

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/samsa-io/samsa/actors/plugin"
)

// Run starts a broker with plug-ins and runs it until SIGTERM or SIGINT
// (or until its network layer fails), then stops it cleanly within
// samsa.shutdown.timeout.ms.
func Run(opts Options, plugins ...plugin.Plugin) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	logger := opts.logger()
	opts.Logger = logger
	b, err := Start(opts, plugins...)
	if err != nil {
		return err
	}
	logger.Info("broker ready", "addr", b.Addr(), "plugins", len(plugins))
	var failed error
	select {
	case sig := <-sigs:
		logger.Info("shutting down", "signal", sig.String())
	case <-b.node.Server.Failed():
		failed = fmt.Errorf("the network layer stopped: %w", b.node.Server.Err())
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.ShutdownTimeout)
	defer cancel()
	return errors.Join(failed, b.Stop(ctx))
}
