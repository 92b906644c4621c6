package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/internal/wiring"
)

// newServeCommand runs a broker until SIGTERM or SIGINT.
func newServeCommand() *cobra.Command {
	var configFile, logLevel, logFormat, debugListen string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a broker",
		Long: `Run a single-node broker.

Configuration uses Kafka's server.properties keys. Each key can be given as
a flag (--log.dirs ./data), as an environment variable (SAMSA_LOG_DIRS:
prefix SAMSA_, upper case, '.' as '_', '_' as '__', '-' as '___'), or in a
Kafka server.properties file (--config). Precedence: flags, then
environment, then file, then defaults.

Defaults suit a laptop: PLAINTEXT://127.0.0.1:9092, data in ./data.
Unknown keys are logged and ignored, so an existing server.properties
loads unchanged; keys samsa accepts without acting on yet are logged too.
With zookeeper.connect set the broker joins the cluster registered in
that ZooKeeper, in Apache Kafka 3.9's layout (see the README, "Running a
cluster"); without it, it runs alone with its metadata in its data
directory.

SIGTERM or SIGINT stops accepting connections, finishes the requests in
flight, closes every log cleanly (the next start skips recovery) and exits
0, within samsa.shutdown.timeout.ms. A second signal exits at once.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			logger, err := newLogger(cmd, logLevel, logFormat)
			if err != nil {
				return err
			}
			cfg, err := loadBrokerConfig(cmd, configFile, os.Environ())
			if err != nil {
				return fmt.Errorf("invalid configuration: %w", err)
			}
			if debugListen != "" {
				dbg, err := startDebugListener(debugListen, logger)
				if err != nil {
					return fmt.Errorf("--debug-listen: %w", err)
				}
				defer dbg.Close()
			}
			return serve(cfg, logger)
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "Kafka server.properties file to read (or "+envConfigFile+")")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error (or "+envLogLevel+")")
	cmd.Flags().StringVar(&logFormat, "log-format", "text", "log format: text or json (or "+envLogFormat+")")
	cmd.Flags().StringVar(&debugListen, "debug-listen", "", "serve Go's profiler (net/http/pprof) on this address, e.g. 127.0.0.1:6060; off when empty")
	addConfigFlags(cmd.Flags())
	return cmd
}

func newLogger(cmd *cobra.Command, level, format string) (*slog.Logger, error) {
	if v := os.Getenv(envLogLevel); v != "" && !cmd.Flags().Changed("log-level") {
		level = v
	}
	if v := os.Getenv(envLogFormat); v != "" && !cmd.Flags().Changed("log-format") {
		format = v
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("invalid --log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("invalid --log-format %q: want text or json", format)
}

// serve runs the broker: open the metadata and logs, listen, advertise,
// announce readiness, wait for a signal, shut down in order.
func serve(cfg *config.Broker, logger *slog.Logger) error {
	for _, w := range cfg.Warnings {
		logger.Warn("config: " + w)
	}
	for _, n := range cfg.Notes {
		logger.Info("config: " + n)
	}
	// Catch signals from the start: one that arrives while the logs are
	// being recovered lets the start finish, then shuts down cleanly.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	memCtx, stopMem := context.WithCancel(context.Background())
	defer stopMem()
	startMemoryLimit(memCtx, logger)

	node, err := wiring.Start(cfg, logger)
	if err != nil {
		return err
	}
	broker, server, host, port := node.Broker, node.Server, node.Host, node.Port
	debugStats.Store(server)

	var where []string
	for i, a := range server.Addrs() {
		proto := "PLAINTEXT"
		if i < len(cfg.Listeners) { // netloop binds them in order
			proto = cfg.Listeners[i].Protocol
		}
		where = append(where, a.String()+" ("+proto+")")
	}
	dirs := strings.Join(cfg.LogDirs, ",")
	logger.Info("broker ready", "broker_id", cfg.BrokerID, "cluster_id", broker.ClusterID(),
		"listeners", strings.Join(where, ","), "advertised", net.JoinHostPort(host, strconv.Itoa(int(port))), "log_dirs", dirs)
	// The readiness line test harnesses wait for.
	fmt.Fprintf(os.Stderr, "samsa: listening on %s, data in %s\n", strings.Join(where, ", "), dirs)

	var failed error
	select {
	case sig := <-sigs:
		logger.Info("shutting down", "signal", sig.String(), "timeout", cfg.ShutdownTimeout)
	case <-server.Failed():
		// The network layer stopped on its own: exit non-zero rather than
		// linger as a live process that serves nothing, so a supervisor
		// restarts the broker.
		failed = fmt.Errorf("the network layer stopped: %w", server.Err())
		logger.Error("shutting down: the network layer stopped serving", "err", server.Err(), "timeout", cfg.ShutdownTimeout)
	}
	go func() {
		s := <-sigs
		logger.Error("second signal: exiting without a clean shutdown; logs will be recovered on next start", "signal", s.String())
		os.Exit(1)
	}()

	ctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := errors.Join(failed, node.Stop(ctx)); err != nil {
		return err
	}
	logger.Info("stopped cleanly")
	return nil
}
